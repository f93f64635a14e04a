package testjobs

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

// PodWrapper builds a pod as the engine would see it.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a pod with a labelled replica type and index.
func MakePod(name, ns string) *PodWrapper {
	return &PodWrapper{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{}}}}
}

// Obj returns the built pod.
func (w *PodWrapper) Obj() *corev1.Pod { return w.DeepCopy() }

// UID sets the pod UID.
func (w *PodWrapper) UID(uid string) *PodWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Label sets a label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	w.Labels[k] = v
	return w
}

// Phase sets status.phase.
func (w *PodWrapper) Phase(p corev1.PodPhase) *PodWrapper {
	w.Status.Phase = p
	return w
}

// Reason sets status.reason (e.g. Evicted).
func (w *PodWrapper) Reason(r string) *PodWrapper {
	w.Status.Reason = r
	return w
}

// Terminated records a terminated container with an exit code and reason.
func (w *PodWrapper) Terminated(container string, code int32, reason string) *PodWrapper {
	w.Status.ContainerStatuses = append(w.Status.ContainerStatuses, corev1.ContainerStatus{
		Name:  container,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}},
	})
	return w
}

// Restarts records a running container with in-place restarts.
func (w *PodWrapper) Restarts(container string, n int32) *PodWrapper {
	w.Status.ContainerStatuses = append(w.Status.ContainerStatuses, corev1.ContainerStatus{
		Name:         container,
		RestartCount: n,
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	})
	return w
}

// DisruptionTarget adds a True DisruptionTarget condition.
func (w *PodWrapper) DisruptionTarget(reason string) *PodWrapper {
	w.Status.Conditions = append(w.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason})
	return w
}

// Terminating sets a deletionTimestamp.
func (w *PodWrapper) Terminating() *PodWrapper {
	now := metav1.Now()
	w.DeletionTimestamp = &now
	return w
}

// TerminationMessage sets the message of the last recorded container's termination.
func (w *PodWrapper) TerminationMessage(msg string) *PodWrapper {
	s := &w.Status.ContainerStatuses[len(w.Status.ContainerStatuses)-1]
	s.State.Terminated.Message = msg
	return w
}

// Running records a running container.
func (w *PodWrapper) Running(container string) *PodWrapper {
	w.Status.ContainerStatuses = append(w.Status.ContainerStatuses, corev1.ContainerStatus{
		Name:  container,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	})
	return w
}

// Waiting records a waiting container (e.g. ImagePullBackOff) with its message.
func (w *PodWrapper) Waiting(container, reason, message string) *PodWrapper {
	w.Status.ContainerStatuses = append(w.Status.ContainerStatuses, waiting(container, reason, message))
	return w
}

// InitWaiting records a waiting init container.
func (w *PodWrapper) InitWaiting(container, reason, message string) *PodWrapper {
	w.Status.InitContainerStatuses = append(w.Status.InitContainerStatuses, waiting(container, reason, message))
	return w
}

// InitTerminated records a terminated init container.
func (w *PodWrapper) InitTerminated(container string, code int32, reason, message string) *PodWrapper {
	w.Status.InitContainerStatuses = append(w.Status.InitContainerStatuses, corev1.ContainerStatus{
		Name:  container,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message}},
	})
	return w
}

func waiting(container, reason, message string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:  container,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}
}

// Condition adds a pod condition that last changed at the given time.
func (w *PodWrapper) Condition(t corev1.PodConditionType, status corev1.ConditionStatus, reason, message string, at time.Time) *PodWrapper {
	w.Status.Conditions = append(w.Status.Conditions, corev1.PodCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at),
	})
	return w
}

// ControlledBy makes a job the pod's controller owner.
func (w *PodWrapper) ControlledBy(kind, name, uid string) *PodWrapper {
	w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: new(true)}}
	return w
}
