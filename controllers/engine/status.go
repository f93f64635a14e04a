package engine

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// exitCodeUnknown is v1's sentinel for a failed pod whose default container
// has no terminated state; being >= 128 it counts as retryable.
const exitCodeUnknown int32 = 0xbeef

// replicaStatuses recounts every replica type from its pods, as v1 does:
// Running and not terminating is active, Running and terminating or Failed
// is failed, Succeeded is succeeded; Pending and Unknown are not counted.
func replicaStatuses(controllerName, jobName string, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, pods []*corev1.Pod) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus {
	out := map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{}
	byLower := map[string]kubeflowv1.ReplicaType{}
	for rt := range specs {
		out[rt] = &kubeflowv1.ReplicaStatus{Selector: ReplicaSelector(controllerName, jobName, rt)}
		byLower[strings.ToLower(string(rt))] = rt
	}
	for _, p := range pods {
		rt, ok := byLower[p.Labels[kubeflowv1.ReplicaTypeLabel]]
		if !ok {
			continue
		}
		rs := out[rt]
		switch p.Status.Phase {
		case corev1.PodRunning:
			if p.DeletionTimestamp != nil {
				rs.Failed++
			} else {
				rs.Active++
			}
		case corev1.PodSucceeded:
			rs.Succeeded++
		case corev1.PodFailed:
			rs.Failed++
		}
	}
	return out
}

// podFailure describes why a pod is not running any more.
type podFailure struct {
	Pod       string
	RType     kubeflowv1.ReplicaType
	Container string
	ExitCode  int32
	Reason    string
	Disrupted bool
}

// String names the pod, container, exit code and reason for condition messages.
func (f podFailure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s", f.Pod)
	if f.Container != "" {
		fmt.Fprintf(&b, ": container %s exited with code %d", f.Container, f.ExitCode)
	}
	if f.Reason != "" {
		fmt.Fprintf(&b, " (%s)", f.Reason)
	}
	return b.String()
}

// describeFailure reads the default container's termination (any failed
// container when the default one did not fail) and whether the pod was disrupted.
// A pod-level reason (Evicted, DeadlineExceeded, ...) says why the whole pod
// ended, so it wins over the container's, which is then only the kill's
// consequence ("Error").
func describeFailure(pod *corev1.Pod, rtype kubeflowv1.ReplicaType, defaultContainer string) podFailure {
	f := podFailure{Pod: pod.Name, RType: rtype, ExitCode: exitCodeUnknown, Reason: pod.Status.Reason}
	var fallback *corev1.ContainerStatus
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		t := cs.State.Terminated
		if t == nil {
			t = cs.LastTerminationState.Terminated
		}
		if t == nil {
			continue
		}
		if cs.Name == defaultContainer {
			f.Container, f.ExitCode = cs.Name, t.ExitCode
			if pod.Status.Reason == "" && t.Reason != "" {
				f.Reason = t.Reason
			}
			fallback = nil
			break
		}
		if fallback == nil && t.ExitCode != 0 {
			fallback = cs
		}
	}
	if f.Container == "" && fallback != nil {
		t := fallback.State.Terminated
		if t == nil {
			t = fallback.LastTerminationState.Terminated
		}
		f.Container, f.ExitCode = fallback.Name, t.ExitCode
		if pod.Status.Reason == "" && t.Reason != "" {
			f.Reason = t.Reason
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			f.Disrupted = true
			if f.Reason == "" {
				f.Reason = c.Reason
			}
		}
	}
	switch pod.Status.Reason {
	case "Evicted", "Preempting", "Terminated", "NodeLost", "UnexpectedAdmissionError":
		f.Disrupted = true
	}
	return f
}

// shouldRetry is the one restart rule for every kind: Always and OnFailure
// retry; ExitCode retries disruptions and exit codes >= 128 (signals, OOM
// kills) and fails on 1-127; Never fails.
func shouldRetry(policy kubeflowv1.RestartPolicy, f podFailure) bool {
	switch policy {
	case kubeflowv1.RestartPolicyAlways, kubeflowv1.RestartPolicyOnFailure:
		return true
	case kubeflowv1.RestartPolicyExitCode:
		return f.Disrupted || f.ExitCode >= 128 || f.ExitCode < 0
	default:
		return false
	}
}

// containerRestarts sums in-place container restarts of a live pod: the
// kubelet's retries under OnFailure/Always count against backoffLimit too.
func containerRestarts(pod *corev1.Pod) int32 {
	var n int32
	for _, cs := range pod.Status.InitContainerStatuses {
		n += cs.RestartCount
	}
	for _, cs := range pod.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}
