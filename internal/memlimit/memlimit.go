// Package memlimit sets the Go runtime's memory targets for the operator:
// a soft memory limit under the container's cgroup memory limit, so that
// the garbage collector works harder as the operator nears it instead of the
// kernel OOM-killing a process whose heap is mostly garbage, and a GC
// percent that follows the live heap (TuneGC).
package memlimit

import (
	"io/fs"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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

// The GC tuner's bounds. The operator's live heap is mostly its informer
// caches: a few tens of MB in a burst, well over 100 MB with thousands of
// jobs kept. One GC percent fits neither: Go's 100 lets a large cache's
// garbage grow to the cache's size (RSS is what a platform team sizes), and
// the fixed 50 used before made a small heap collect every 12 MB allocated
// (16-18% of the operator's CPU in make bench's burst-500). The tuner
// gives the heap room for MinHeadroom of garbage, or MinPercent of what is
// live when that is more, within [MinPercent, MaxPercent].
const (
	MinHeadroom = 24 << 20
	MinPercent  = 25
	MaxPercent  = 100
)

// PercentFor is the GC percent for a live heap of live bytes.
func PercentFor(live uint64) int {
	if live == 0 {
		return MaxPercent
	}
	p := int(uint64(MinHeadroom) * 100 / live)
	return min(max(p, MinPercent), MaxPercent)
}

// TuneGC sets the GC percent from the live heap after every collection,
// unless GOGC is set. It reports whether it is tuning.
func TuneGC() bool {
	if os.Getenv("GOGC") != "" {
		return false
	}
	t := &tuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: -1}
	t.tune()
	t.arm()
	return true
}

type tuner struct {
	sample  []metrics.Sample
	percent int
}

// sentinel is garbage from the moment arm returns, so its cleanup runs
// after the next collection; it holds a pointer so that it is not a tiny
// allocation, whose cleanups may wait for unrelated objects.
type sentinel struct{ _ *int }

func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) {
		t.tune()
		t.arm()
	}, t)
}

func (t *tuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := PercentFor(t.sample[0].Value.Uint64()); p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}
