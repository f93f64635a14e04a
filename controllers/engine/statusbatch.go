package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// DefaultStatusBatchWindow is how long status changes that carry no
// transition (replica counts) may wait before they are written alone. The
// transition that usually follows (the job succeeding, a restart) carries
// them instead: make bench's 1+3 jobs cost Created, Running and Succeeded,
// three writes, instead of a count write between the last two.
const DefaultStatusBatchWindow = 15 * time.Second

// statusDelay says how long the write of next over cur may wait; 0 means
// write now. Only replica counts (and lastReconcileTime) alone wait, until
// window after such a change was first held back (held); so count writes
// also come at most once per window. Conditions, restart counts,
// start/completion times are never delayed: they are what users, Kueue and
// the restart accounting act on.
func statusDelay(cur, next *kubeflowv1.JobStatus, held, now time.Time, window time.Duration) time.Duration {
	if window <= 0 || !countsOnly(cur, next) {
		return 0
	}
	return positive(held.Add(window).Sub(now))
}

// countsOnly reports whether next differs from cur only in replica counts,
// lastReconcileTime and fewer counted pods.
func countsOnly(cur, next *kubeflowv1.JobStatus) bool {
	a, b := *cur, *next
	a.ReplicaStatuses, b.ReplicaStatuses = nil, nil
	a.LastReconcileTime, b.LastReconcileTime = nil, nil
	if len(b.CountedPods) <= len(a.CountedPods) {
		// Dropping UIDs of pods that are gone tells nothing; adding one comes
		// with a restart count, which is news.
		a.CountedPods, b.CountedPods = nil, nil
	}
	return equality.Semantic.DeepEqual(&a, &b)
}

func positive(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}

// statusHolds remembers when each job's unwritten status change was first
// held back (jobRecord.held), to batch count updates.
type statusHolds struct{ kindMemory }

type statusHold struct {
	since time.Time
	ok    bool
}

// hold returns when the job's unwritten status change was first held back,
// recording now if none was.
func (h statusHolds) hold(job client.Object, now time.Time) time.Time {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	rec := h.m.record(h.ref(job), true)
	if rec.held.ok {
		return rec.held.since
	}
	rec.held = statusHold{since: now, ok: true}
	return now
}

// unhold forgets a held change that no longer needs writing (the status went
// back to what is stored).
func (h statusHolds) unhold(job client.Object) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	j := h.ref(job)
	if rec := h.m.record(j, false); rec != nil {
		rec.held = statusHold{}
		h.m.dropIfEmpty(j, rec)
	}
}
