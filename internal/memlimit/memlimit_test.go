package memlimit

import (
	"runtime/debug"
	"testing"
	"testing/fstest"
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

func TestSetGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "")
	if got := SetGCPercent(); got != DefaultGCPercent {
		t.Fatalf("SetGCPercent = %d, want %d", got, DefaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Errorf("runtime GC percent = %d, want %d", got, DefaultGCPercent)
	}
	t.Setenv("GOGC", "200")
	if got := SetGCPercent(); got != 0 {
		t.Errorf("with GOGC set, SetGCPercent = %d, want 0 (the user's setting stands)", got)
	}
}
