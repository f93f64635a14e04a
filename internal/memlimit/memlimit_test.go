package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"testing/fstest"
	"time"
)

func TestCgroupLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  int64
	}{
		{"v2 limit", fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("1073741824\n")}}, 1 << 30},
		{"v2 unlimited", fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}, 0},
		{"v1 limit", fstest.MapFS{"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("536870912")}}, 512 << 20},
		{"v1 unlimited", fstest.MapFS{"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712")}}, 0},
		{"no cgroup", fstest.MapFS{}, 0},
		{"garbage", fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("lots")}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cgroupLimit(tc.files); got != tc.want {
				t.Errorf("cgroupLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSet(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	t.Setenv("GOMEMLIMIT", "")
	root := fstest.MapFS{"sys/fs/cgroup/memory.max": {Data: []byte("1073741824")}}
	limit := float64(1 << 30)
	want := int64(limit * Fraction)
	if got := Set(root); got != want {
		t.Fatalf("Set = %d, want %d", got, want)
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("runtime limit = %d, want %d", got, want)
	}
	t.Setenv("GOMEMLIMIT", "100MiB")
	if got := Set(root); got != 0 {
		t.Errorf("with GOMEMLIMIT set, Set = %d, want 0 (the user's limit stands)", got)
	}
}

func TestPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, MaxPercent},
		{8 << 20, MaxPercent},   // a small heap: Go's default
		{24 << 20, 100},         // MinHeadroom of garbage
		{32 << 20, 75},          // still MinHeadroom
		{48 << 20, 50},          // what a burst of 500 jobs keeps
		{136 << 20, MinPercent}, // 5,000 jobs kept: a quarter of live
		{1 << 30, MinPercent},   // never below
	} {
		if got := PercentFor(tc.live); got != tc.want {
			t.Errorf("PercentFor(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// gogc is the runtime's GC percent, read without changing it.
func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// The tuner follows the live heap collection after collection, and leaves
// a GOGC the user set alone.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "300")
	if TuneGC() {
		t.Fatal("TuneGC tunes with GOGC set; the user's setting must stand")
	}
	t.Setenv("GOGC", "")
	if !TuneGC() {
		t.Fatal("TuneGC did not start")
	}
	waitFor := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for gogc() != want {
			if time.Now().After(deadline) {
				t.Fatalf("GC percent = %d, want %d", gogc(), want)
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	live := make([]byte, 200<<20) // well past MinHeadroom / MinPercent
	live[len(live)-1] = 1
	waitFor(MinPercent)
	runtime.KeepAlive(live) // garbage from here on
	waitFor(MaxPercent)
}
