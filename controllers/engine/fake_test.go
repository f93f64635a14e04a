package engine

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// fakeFramework is a minimal adapter over PyTorchJob objects that keeps the
// engine's own tests free of any real framework.
type fakeFramework struct{}

func (fakeFramework) Kind() string           { return "PyTorchJob" }
func (fakeFramework) ControllerName() string { return "fake-controller" }
func (fakeFramework) MetricsLabel() string   { return "fake" }
func (fakeFramework) NewJob() client.Object  { return &kubeflowv1.PyTorchJob{} }
func (fakeFramework) Default(client.Object)  {}
func (fakeFramework) ReplicaSpecs(o client.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
	return o.(*kubeflowv1.PyTorchJob).Spec.PyTorchReplicaSpecs
}
func (fakeFramework) RunPolicy(o client.Object) *kubeflowv1.RunPolicy {
	return &o.(*kubeflowv1.PyTorchJob).Spec.RunPolicy
}
func (fakeFramework) Status(o client.Object) *kubeflowv1.JobStatus {
	return &o.(*kubeflowv1.PyTorchJob).Status
}
func (fakeFramework) ReplicaTypes(client.Object) []kubeflowv1.ReplicaType {
	return []kubeflowv1.ReplicaType{"Master", "Worker"}
}
func (fakeFramework) DefaultContainerName() string { return "pytorch" }
func (fakeFramework) IsMasterRole(_ client.Object, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == "Master"
}
func (fakeFramework) DecoratePod(_ client.Object, _ kubeflowv1.ReplicaType, i int, pod *corev1.Pod) error {
	pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "INDEX", Value: string(rune('0' + i))})
	return nil
}
func (fakeFramework) Evaluate(client.Object, ReplicaView) Verdict { return Verdict{} }
