// Package memlimit gives the Go runtime a soft memory limit under the
// container's cgroup memory limit, so that the garbage collector works
// harder as the operator nears it instead of the kernel OOM-killing a
// process whose heap is mostly garbage (the default GOGC=100 lets the heap
// grow to twice what is live).
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
