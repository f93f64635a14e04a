package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Condition reasons are "<Kind>" + one of these suffixes, as in v1.
const (
	reasonCreated    = "Created"
	reasonRunning    = "Running"
	reasonRestarting = "Restarting"
	reasonSucceeded  = "Succeeded"
	reasonFailed     = "Failed"
	reasonSuspended  = "Suspended"
	reasonResumed    = "Resumed"
)

// ConditionChildConflict is an additive condition type: a child name is held
// by an object this job does not own (for example another kind's job of the
// same name). It is removed once the name is free.
const ConditionChildConflict kubeflowv1.JobConditionType = "ChildConflict"

// getCondition returns the condition of the given type, or nil.
func getCondition(st *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// hasCondition reports whether the condition of that type is True.
func hasCondition(st *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) bool {
	c := getCondition(st, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsFinished reports a terminal job: Succeeded or Failed is True (for good:
// terminal conditions are sticky).
func IsFinished(st *kubeflowv1.JobStatus) bool {
	return hasCondition(st, kubeflowv1.JobSucceeded) || hasCondition(st, kubeflowv1.JobFailed)
}

// setCondition applies v1's condition rules and reports whether anything changed:
//   - terminal conditions are sticky: once Succeeded or Failed is True nothing changes;
//   - same type, status and reason is a no-op (the message is kept);
//   - the lastTransitionTime survives a reason-only change;
//   - the condition moves to the end (the State printer column shows the last one);
//   - Running and Restarting replace each other, and Succeeded/Failed flip
//     whichever of them is present to False: a finished job never stays
//     Restarting=True, e.g. when it fails before a retried pod runs again.
func setCondition(st *kubeflowv1.JobStatus, c kubeflowv1.JobCondition) bool {
	if IsFinished(st) {
		return false
	}
	if cur := getCondition(st, c.Type); cur != nil {
		if cur.Status == c.Status && cur.Reason == c.Reason {
			return false
		}
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
	}
	kept := make([]kubeflowv1.JobCondition, 0, len(st.Conditions)+1)
	for _, existing := range st.Conditions {
		switch {
		case existing.Type == c.Type:
			continue
		case c.Type == kubeflowv1.JobRestarting && existing.Type == kubeflowv1.JobRunning,
			c.Type == kubeflowv1.JobRunning && existing.Type == kubeflowv1.JobRestarting:
			continue
		case (c.Type == kubeflowv1.JobSucceeded || c.Type == kubeflowv1.JobFailed) &&
			(existing.Type == kubeflowv1.JobRunning || existing.Type == kubeflowv1.JobRestarting):
			existing.Status = corev1.ConditionFalse
		}
		kept = append(kept, existing)
	}
	st.Conditions = append(kept, c)
	return true
}

// removeCondition drops the condition of that type (the additive conflict
// condition once resolved). Setting it False instead would leave it last in
// the list whenever nothing happened since, and the State printer column
// (conditions[-1:].type) would show "ChildConflict" for a job that runs.
func removeCondition(st *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) bool {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			st.Conditions = append(st.Conditions[:i:i], st.Conditions[i+1:]...)
			return true
		}
	}
	return false
}

func newCondition(t kubeflowv1.JobConditionType, status corev1.ConditionStatus, reason, msg string, now metav1.Time) kubeflowv1.JobCondition {
	return kubeflowv1.JobCondition{
		Type:               t,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		LastUpdateTime:     now,
		LastTransitionTime: now,
	}
}
