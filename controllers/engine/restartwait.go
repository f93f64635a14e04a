package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// What a whole-job restart waits for before the new attempt's pods are
// made: its old pods to be gone, and the failure policy's restart backoff.
// A pod that never finishes terminating (its kubelet is gone with its node)
// would hold the restart forever in silence: the wait is reported in the
// Restarting condition, an event and status.terminatingPods, and such a pod
// on a NotReady or missing node is force-deleted after lostPodTimeoutSeconds.

// stuckAfter is how long past its grace period (its deletionTimestamp) a
// terminating pod is reported as blocking a restart: a kubelet kills the
// containers when the grace period ends and deletes the pod just after.
const stuckAfter = 15 * time.Second

// lostPodRecheck is how often a restart blocked by a stuck pod on a node
// that still looks Ready looks at the node again: a node's readiness
// brings no event of the job's.
const lostPodRecheck = 10 * time.Second

// ReasonRestartBlocked and ReasonForceDeletedLostPod are the events of a
// restart that waits for stuck pods, and of such a pod force-deleted.
const (
	ReasonRestartBlocked      = "RestartBlockedByTerminatingPods"
	ReasonForceDeletedLostPod = "ForceDeletedLostPod"
)

// restartDelay is the backoff before the pods of attempt restarts are
// made: the initial delay doubled with each restart after the first, capped.
func restartDelay(fp *kubeflowv1.FailurePolicy, restarts int32) time.Duration {
	b := fp.RestartBackoff
	if b == nil || restarts < 1 {
		return 0
	}
	limit := time.Duration(kubeflowv1.DefaultMaxRestartDelaySeconds) * time.Second
	if b.MaxDelaySeconds != nil {
		limit = time.Duration(*b.MaxDelaySeconds) * time.Second
	}
	d := time.Duration(b.InitialDelaySeconds) * time.Second
	for i := int32(1); i < restarts && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// restartDelayLeft is how long the new attempt's pods still wait for the
// backoff: the delay counts from the restart's decision, which the
// Restarting condition's lastUpdateTime keeps (durable across operator
// restarts).
func restartDelayLeft(fp *kubeflowv1.FailurePolicy, st *kubeflowv1.JobStatus, now time.Time) time.Duration {
	c := getCondition(st, kubeflowv1.JobRestarting)
	if c == nil || c.Status != corev1.ConditionTrue || !wholeJobRestart(c.Reason) {
		return 0
	}
	return c.LastUpdateTime.Add(restartDelay(fp, st.Attempt())).Sub(now)
}

// stuckPods are the old pods terminating past their grace period by
// stuckAfter, by name, and how soon the next one reaches that point.
func stuckPods(old []*corev1.Pod, now time.Time) (stuck []*corev1.Pod, next time.Duration) {
	for _, pod := range old {
		if pod.DeletionTimestamp == nil {
			continue
		}
		at := pod.DeletionTimestamp.Add(stuckAfter)
		if !now.Before(at) {
			stuck = append(stuck, pod)
		} else if d := at.Sub(now); next == 0 || d < next {
			next = d
		}
	}
	sort.Slice(stuck, func(i, j int) bool { return stuck[i].Name < stuck[j].Name })
	return stuck, next
}

// lostPodTimeout is failurePolicy.lostPodTimeoutSeconds, defaulted.
func lostPodTimeout(fp *kubeflowv1.FailurePolicy) time.Duration {
	if fp.LostPodTimeoutSeconds != nil {
		return time.Duration(*fp.LostPodTimeoutSeconds) * time.Second
	}
	return kubeflowv1.DefaultLostPodTimeoutSeconds * time.Second
}

// planRestartWait reports the old pods a restart waits for past their
// grace period and picks those whose lost-pod timeout is over, for apply to
// force-delete if their node is lost. Without stuck pods any earlier report
// is replaced. The Restarting condition's lastUpdateTime is left as it is:
// it keeps the time of the decision, which the backoff and the restart's
// duration count from.
func (r *Reconciler[J]) planRestartWait(job J, fp *kubeflowv1.FailurePolicy, old []*corev1.Pod, p *plan) {
	st, now := &p.status, p.now.Time
	stuck, next := stuckPods(old, now)
	if next > 0 {
		p.requeue(next)
	}
	st.TerminatingPods = int32(len(stuck))
	c := getCondition(st, kubeflowv1.JobRestarting)
	if c == nil || c.Status != corev1.ConditionTrue {
		return
	}
	kind, name := r.fw.Kind(), job.GetName()
	if len(stuck) == 0 {
		if job.JobStatus().TerminatingPods > 0 {
			c.Message = fmt.Sprintf("%s %s is restarting the whole job, attempt %d: no pod of an earlier attempt is left terminating.", kind, name, st.Attempt())
		}
		return
	}
	names, overdue := make([]string, 0, len(stuck)), []string(nil)
	timeout := lostPodTimeout(fp)
	for _, pod := range stuck {
		names = append(names, fmt.Sprintf("%s (node %q)", pod.Name, pod.Spec.NodeName))
		if at := pod.DeletionTimestamp.Add(timeout); !now.Before(at) {
			p.forceDelete = append(p.forceDelete, pod)
			overdue = append(overdue, pod.Name)
		} else {
			p.requeue(at.Sub(now))
		}
	}
	msg := fmt.Sprintf("%s %s is restarting the whole job, attempt %d: waiting for %d pod(s) of an earlier attempt still terminating past their grace period: %s. "+
		"A pod on a NotReady or missing node is force-deleted %s after its grace period (failurePolicy.lostPodTimeoutSeconds)",
		kind, name, st.Attempt(), len(stuck), joinNames(names), timeout)
	if len(overdue) > 0 {
		// Their nodes are looked at again: a node's readiness brings no
		// event of the job's.
		p.requeue(lostPodRecheck)
		msg += "; past it: " + joinNames(overdue)
	}
	msg += "."
	if c.Message != msg {
		c.Message = msg
		p.event(corev1.EventTypeWarning, ReasonRestartBlocked, "%s", msg)
	}
}

// forceDeleteLost force-deletes, as the pod garbage collector does, the
// pods whose node is gone or not Ready; a pod on a Ready node is left to
// its kubelet. The node is read from the API, only for such pods.
func (r *Reconciler[J]) forceDeleteLost(ctx context.Context, job client.Object, pods []*corev1.Pod) error {
	if len(pods) == 0 {
		return nil
	}
	var mu sync.Mutex
	var errs []error
	workqueue.ParallelizeUntil(ctx, r.opts.Fanout, len(pods), func(i int) {
		pod := pods[i]
		state, err := r.nodeState(ctx, pod.Spec.NodeName)
		if err == nil && state != "" {
			uid := pod.UID
			err = r.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
			if err == nil {
				r.recorder.Event(job, corev1.EventTypeWarning, ReasonForceDeletedLostPod, fmt.Sprintf(
					"Force-deleted pod %s of attempt %d: terminating %s past its grace period on node %q, which is %s.",
					pod.Name, attemptOf(pod), r.clock.Since(pod.DeletionTimestamp.Time).Round(time.Second), pod.Spec.NodeName, state))
			}
		}
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			mu.Lock()
			errs = append(errs, fmt.Errorf("force-deleting lost pod %s: %w", pod.Name, err))
			mu.Unlock()
		}
	})
	return errors.Join(errs...)
}

// nodeState says why a node is lost ("gone", "not Ready (Ready=False)"),
// or "" for a Ready node.
func (r *Reconciler[J]) nodeState(ctx context.Context, name string) (string, error) {
	if name == "" {
		// Never bound: no kubelet holds it, and the API deleted it at once.
		return "", nil
	}
	n := &corev1.Node{}
	if err := r.apiReader.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return "gone", nil
		}
		return "", err
	}
	ready := corev1.ConditionUnknown
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status
		}
	}
	if ready == corev1.ConditionTrue {
		return "", nil
	}
	return fmt.Sprintf("not Ready (Ready=%s)", ready), nil
}
