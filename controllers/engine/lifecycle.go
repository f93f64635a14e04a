package engine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// fail records the Failed condition once.
func (r *Reconciler[J]) fail(p *plan, job client.Object, reason, msg, eventType string, now metav1.Time) {
	st := &p.status
	if st.CompletionTime == nil {
		st.CompletionTime = &now
	}
	if setCondition(st, newCondition(kubeflowv1.JobFailed, corev1.ConditionTrue, reason, msg, now)) {
		// The event's reason is the condition's, as v1's were
		// (<Kind>Failed, <Kind>FailedValidation).
		p.event(eventType, reason, "%s", msg)
		p.failed = true
	}
}

// finishAfterWrite is finish for a job that turned terminal in this pass:
// only its status part. The side effects (cleanPodPolicy deletions, gang and
// extra children teardown, TTL) run in the next pass, which starts from the
// written terminal status. Deleting pods before the terminal condition is
// durable let a failed status write or an operator crash in between make the
// next pass see a running job without pods, recreate them and run a finished
// job again (found by make chaos).
func (r *Reconciler[J]) finishAfterWrite(p *plan) error {
	finishStatus(&p.status)
	p.requeue(0)
	return nil
}

// finishStatus is the status part of finishing: a succeeded job has no
// active replicas left.
func finishStatus(st *kubeflowv1.JobStatus) {
	if hasCondition(st, kubeflowv1.JobSucceeded) {
		for _, rs := range st.ReplicaStatuses {
			rs.Succeeded += rs.Active
			rs.Active = 0
		}
	}
}

// finish plans the end of a terminal job whose terminal condition is
// already written: cleanPodPolicy, gang and extra children, TTL.
func (r *Reconciler[J]) finish(job J, ch children, p *plan) {
	finishStatus(&p.status)
	w := &p.children
	w.deletePods, w.deleteServices = cleanup(ch, finishedCleanPodPolicy(r.fw.RunPolicy(job), &p.status), true)
	w.teardown = true
	w.deleteJob = r.ttlExpired(job, p)
}

// finishedCleanPodPolicy is the cleanPodPolicy a finished job's pods go
// by: the one set, else v1's None; but a job with a failure policy that
// failed (FailJob, maxRestarts, backoffLimit, a deadline) loses its
// still-running pods, as JobSet deletes a failed job's active children:
// ranks hung on a dead peer would hold their GPUs until a timeout. Its
// failed pods stay for their logs. The defaulting leaves cleanPodPolicy
// unset on such jobs, so a None there is the user's.
func finishedCleanPodPolicy(rp *kubeflowv1.RunPolicy, st *kubeflowv1.JobStatus) kubeflowv1.CleanPodPolicy {
	if cp := rp.CleanPodPolicy; cp != nil && *cp != kubeflowv1.CleanPodPolicyUndefined {
		return *cp
	}
	if rp.FailurePolicy != nil && hasCondition(st, kubeflowv1.JobFailed) {
		return kubeflowv1.CleanPodPolicyRunning
	}
	return kubeflowv1.CleanPodPolicyNone
}

// suspend plans tearing children down and records Suspended, once, when
// they are.
func (r *Reconciler[J]) suspend(job J, ch children, p *plan, now metav1.Time) {
	kind := r.fw.Kind()
	msg := fmt.Sprintf("%s %s is suspended.", kind, job.GetName())
	w := &p.children
	w.deletePods, w.deleteServices = cleanup(ch, kubeflowv1.CleanPodPolicyAll, false)
	w.suspending = true
	w.teardown = true
	p.ifWritten(func(q *plan) {
		st := &q.status
		for _, rs := range st.ReplicaStatuses {
			rs.Active = 0
		}
		if hasCondition(st, kubeflowv1.JobRunning) {
			setCondition(st, newCondition(kubeflowv1.JobRunning, corev1.ConditionFalse, kind+reasonSuspended, msg, now))
		}
		if !hasCondition(st, kubeflowv1.JobSuspended) {
			setCondition(st, newCondition(kubeflowv1.JobSuspended, corev1.ConditionTrue, kind+reasonSuspended, msg, now))
			q.event(corev1.EventTypeNormal, kind+reasonSuspended, "%s", msg)
		}
	})
}

// ttlExpired says a finished job's ttlSecondsAfterFinished has passed, else
// asks to be woken exactly then.
func (r *Reconciler[J]) ttlExpired(job J, p *plan) bool {
	ttl := r.fw.RunPolicy(job).TTLSecondsAfterFinished
	if ttl == nil {
		return false
	}
	st := &p.status
	if st.CompletionTime == nil {
		now := metav1.NewTime(r.clock.Now())
		st.CompletionTime = &now
	}
	expiry := st.CompletionTime.Add(time.Duration(*ttl) * time.Second)
	if left := expiry.Sub(r.clock.Now()); left > 0 {
		p.requeue(left)
		return false
	}
	return true
}

// deleteJob deletes a job past its TTL. Children go by garbage collection.
func (r *Reconciler[J]) deleteJob(ctx context.Context, job J, p *plan) error {
	deleted, failed := r.fw.deleted, r.fw.deleteFailed
	uid := job.GetUID()
	err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		// Already gone: a pass on a cache that has not seen our own delete
		// yet (a GC'd pod's event can arrive before the job's) must not
		// count or announce the deletion a second time.
		return nil
	}
	if err != nil {
		r.recorder.Event(job, corev1.EventTypeWarning, failed, err.Error())
		return err
	}
	p.jobDeleted = true
	p.event(corev1.EventTypeNormal, deleted, "Deleted job: %s", job.GetName())
	return nil
}
