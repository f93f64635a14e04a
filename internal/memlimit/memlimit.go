// Package memlimit sets the Go runtime's memory targets for the operator:
// a soft memory limit under the container's cgroup memory limit, so that
// the garbage collector works harder as the operator nears it instead of the
// kernel OOM-killing a process whose heap is mostly garbage, and a lower GC
// percent than Go's 100 (which lets the heap grow to twice what is live).
package memlimit

import (
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction of the cgroup limit used as the soft limit; the rest is for
// what the runtime does not count (stacks in flight, fragmentation, cgo).
const Fraction = 0.9

// cgroup files holding the memory limit: v2 first, then v1.
var limitFiles = []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Set applies Fraction of the cgroup memory limit found under root (the
// file system root, "/" in production) as the runtime's soft memory limit,
// unless GOMEMLIMIT is set or there is no limit. It returns the limit
// applied in bytes, 0 if none.
func Set(root fs.FS) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit := cgroupLimit(root)
	if limit <= 0 {
		return 0
	}
	soft := int64(float64(limit) * Fraction)
	debug.SetMemoryLimit(soft)
	return soft
}

// cgroupLimit reads the memory limit in bytes, or 0 when unlimited or unknown.
func cgroupLimit(root fs.FS) int64 {
	for _, name := range limitFiles {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0
		}
		v, err := strconv.ParseInt(s, 10, 64)
		// cgroup v1 reports "no limit" as a huge page-aligned number.
		if err != nil || v <= 0 || v >= math.MaxInt64/2 {
			return 0
		}
		return v
	}
	return 0
}

// DefaultGCPercent is the operator's GOGC: its live heap is mostly the
// informer caches, which only grow with the cluster, so letting garbage
// reach the size of the caches doubled its footprint for little CPU saved.
// make bench (5,000 kept jobs): see the closing notes of issue 9.
const DefaultGCPercent = 50

// SetGCPercent applies DefaultGCPercent unless GOGC is set. It returns the
// percent applied, 0 if none.
func SetGCPercent() int {
	if os.Getenv("GOGC") != "" {
		return 0
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
