package testjobs

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// FailurePolicyWrapper builds a runPolicy.failurePolicy.
type FailurePolicyWrapper struct{ kubeflowv1.FailurePolicy }

// MakeFailurePolicy starts a failure policy with maxRestarts and no rules.
func MakeFailurePolicy(maxRestarts int32) *FailurePolicyWrapper {
	return &FailurePolicyWrapper{kubeflowv1.FailurePolicy{MaxRestarts: maxRestarts}}
}

// Obj returns the built policy.
func (w *FailurePolicyWrapper) Obj() *kubeflowv1.FailurePolicy { return w.DeepCopy() }

// MaxTotal sets maxTotalRestarts.
func (w *FailurePolicyWrapper) MaxTotal(n int32) *FailurePolicyWrapper {
	w.MaxTotalRestarts = &n
	return w
}

// Backoff sets restartBackoff (maxSeconds 0: unset).
func (w *FailurePolicyWrapper) Backoff(initialSeconds, maxSeconds int32) *FailurePolicyWrapper {
	w.RestartBackoff = &kubeflowv1.RestartBackoff{InitialDelaySeconds: initialSeconds}
	if maxSeconds != 0 {
		w.RestartBackoff.MaxDelaySeconds = &maxSeconds
	}
	return w
}

// LostPodTimeout sets lostPodTimeoutSeconds.
func (w *FailurePolicyWrapper) LostPodTimeout(seconds int32) *FailurePolicyWrapper {
	w.LostPodTimeoutSeconds = &seconds
	return w
}

// Strategy sets restartStrategy.
func (w *FailurePolicyWrapper) Strategy(s kubeflowv1.RestartStrategy) *FailurePolicyWrapper {
	w.RestartStrategy = s
	return w
}

// Rule appends a rule matching any failure (of targets, if given).
func (w *FailurePolicyWrapper) Rule(name string, action kubeflowv1.FailurePolicyAction, targets ...kubeflowv1.ReplicaType) *FailurePolicyWrapper {
	w.Rules = append(w.Rules, kubeflowv1.FailurePolicyRule{Name: name, Action: action, TargetReplicaTypes: targets})
	return w
}

// OnExitCodes narrows the last rule to exit codes of a container ("" for the default one).
func (w *FailurePolicyWrapper) OnExitCodes(container string, op kubeflowv1.FailurePolicyOnExitCodesOperator, codes ...int32) *FailurePolicyWrapper {
	w.Rules[len(w.Rules)-1].OnExitCodes = &kubeflowv1.FailurePolicyOnExitCodesRequirement{ContainerName: container, Operator: op, Values: codes}
	return w
}

// OnPodCondition narrows the last rule to a pod condition with status True.
func (w *FailurePolicyWrapper) OnPodCondition(t corev1.PodConditionType) *FailurePolicyWrapper {
	r := &w.Rules[len(w.Rules)-1]
	r.OnPodConditions = append(r.OnPodConditions, kubeflowv1.FailurePolicyOnPodConditionsPattern{Type: t, Status: corev1.ConditionTrue})
	return w
}

// WithFailurePolicy sets runPolicy.failurePolicy on a job of any kind and returns it.
func WithFailurePolicy[T client.Object](job T, fp *kubeflowv1.FailurePolicy) T {
	RunPolicy(job).FailurePolicy = fp
	return job
}

// FailurePolicy sets runPolicy.failurePolicy.
func (w *PyTorchJobWrapper) FailurePolicy(fp *kubeflowv1.FailurePolicy) *PyTorchJobWrapper {
	w.Spec.RunPolicy.FailurePolicy = fp
	return w
}
