package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// DefaultStatusBatchWindow is how long status changes that carry no
// transition wait before they are written, so that pods starting one after
// another cost one status write instead of one each.
const DefaultStatusBatchWindow = 2 * time.Second

// statusDelay says how long the write of next over cur may wait; 0 means
// write now. Only changes that tell no news wait:
//   - replica counts (and lastReconcileTime) alone wait until window after
//     such a change was first held back (held). The transition that usually
//     follows within moments (workers starting after the master, pods
//     finishing one after another) then carries them, instead of a count
//     write just before it; and count writes come at most once per window;
//   - the very first status of a young job, which only says Created, waits
//     until window after the job's creation, so that a job whose pods start
//     quickly goes to Created and Running in one write.
//
// Conditions, restart counts, start/completion times are never delayed:
// they are what users, Kueue and the restart accounting act on.
func statusDelay(cur, next *kubeflowv1.JobStatus, created, held, now time.Time, window time.Duration) time.Duration {
	if window <= 0 {
		return 0
	}
	if countsOnly(cur, next) {
		return positive(held.Add(window).Sub(now))
	}
	if len(cur.Conditions) == 0 && onlyCreated(next) {
		return positive(created.Add(window).Sub(now))
	}
	return 0
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

// onlyCreated reports whether a status holds nothing beyond the Created
// condition, a start time and counts.
func onlyCreated(st *kubeflowv1.JobStatus) bool {
	if len(st.Conditions) != 1 || st.Conditions[0].Type != kubeflowv1.JobCreated {
		return false
	}
	return st.CompletionTime == nil && st.RestartCount == 0
}

func positive(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d
}
