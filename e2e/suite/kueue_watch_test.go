package suite

import (
	"strings"
	"testing"
)

// The load spec passes when violations finds nothing, so check that it
// does find what it is meant to.
func TestSuspendWatchViolations(t *testing.T) {
	w := &suspendWatch{history: map[string][]suspendAt{}, pods: map[string]podAt{}, done: map[string]bool{}}
	w.job("ok", 10, true, false)
	w.job("ok", 20, false, false)
	w.pod("ok-worker-0", "ok", 21)
	w.job("ok", 30, false, true) // status updates keep one history entry
	w.job("early", 10, true, false)
	w.pod("early-worker-0", "early", 15)
	w.job("early", 20, false, false)
	w.job("again", 10, true, false)
	w.job("again", 20, false, false)
	w.pod("again-worker-0", "again", 25)
	w.job("again", 30, true, false)
	w.pod("orphan-worker-0", "orphan", 5)

	got := w.violations()
	if len(got) != 3 {
		t.Fatalf("want 3 violations (early pod, suspended again, pod of an unseen job), got %d: %q", len(got), got)
	}
	for _, want := range []string{"pod early-worker-0", "job again suspended again", "pod orphan-worker-0"} {
		found := false
		for _, v := range got {
			found = found || strings.HasPrefix(v, want)
		}
		if !found {
			t.Errorf("no violation starting %q in %q", want, got)
		}
	}
	if n := w.succeeded(); n != 1 {
		t.Errorf("succeeded = %d, want 1", n)
	}
	if n := w.queuedSuspended(); n != 3 {
		t.Errorf("queuedSuspended = %d, want 3", n)
	}
}
