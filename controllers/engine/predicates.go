package engine

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// A child's update event costs a pass over its whole job. Most pod updates
// (binding, readiness flips, condition timestamps, IPs) change nothing the
// engine, an adapter or the pod events read, so they are dropped here:
// several come per pod of every job. Creates,
// deletes and generic events always pass.

// podChanged passes pod updates that change what is read of a pod: its
// identity, labels and controller, deletion, phase and reason, container
// states and restart counts, and the conditions that are not True (the
// abnormal-pod warnings) or say it was disrupted.
func podChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*corev1.Pod)
		after, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return true
		}
		return podMatters(before, after)
	}}
}

// metaChanged passes updates of children whose metadata is all the engine
// reads (Services): identity, labels, controller and deletion.
func metaChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
		return metaMatters(e.ObjectOld, e.ObjectNew)
	}}
}

func metaMatters(before, after metav1.Object) bool {
	return before.GetUID() != after.GetUID() ||
		(before.GetDeletionTimestamp() == nil) != (after.GetDeletionTimestamp() == nil) ||
		!maps.Equal(before.GetLabels(), after.GetLabels()) ||
		!equality.Semantic.DeepEqual(before.GetOwnerReferences(), after.GetOwnerReferences())
}

func podMatters(before, after *corev1.Pod) bool {
	b, a := &before.Status, &after.Status
	return metaMatters(before, after) ||
		// A tracked pod's confirmed deletion releases its finalizer (tracking.go).
		(hasTrackingFinalizer(after) && !ptr.Equal(before.DeletionGracePeriodSeconds, after.DeletionGracePeriodSeconds)) ||
		b.Phase != a.Phase || b.Reason != a.Reason ||
		!sameContainers(b.ContainerStatuses, a.ContainerStatuses) ||
		!sameContainers(b.InitContainerStatuses, a.InitContainerStatuses) ||
		!equality.Semantic.DeepEqual(readConditions(b.Conditions), readConditions(a.Conditions))
}

// sameContainers compares what failure messages, restart counts and pod
// events read of container statuses (not readiness).
func sameContainers(b, a []corev1.ContainerStatus) bool {
	if len(b) != len(a) {
		return false
	}
	for i := range b {
		if b[i].Name != a[i].Name || b[i].RestartCount != a[i].RestartCount ||
			!equality.Semantic.DeepEqual(b[i].State, a[i].State) ||
			!equality.Semantic.DeepEqual(b[i].LastTerminationState, a[i].LastTerminationState) {
			return false
		}
	}
	return true
}

// readConditions are the conditions whose change can change a pass: True
// ones only ever silence the abnormal-pod warning (newestCondition), except
// DisruptionTarget, which makes a failure retryable.
func readConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range cs {
		if c.Status != corev1.ConditionTrue || c.Type == corev1.DisruptionTarget {
			out = append(out, c)
		}
	}
	return out
}
