package engine

import (
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// fakeFramework is a minimal adapter over PyTorchJob objects that keeps the
// engine's own tests free of any real framework.
type fakeFramework struct{}

// The kind's constants, as the engine reads them from the job type.
var (
	fakeControllerName = kubeflowv1.PyTorchJobControllerName
	fakeMetricsLabel   = kubeflowv1.PyTorchJobFrameworkName
)

func (fakeFramework) NewJob() *kubeflowv1.PyTorchJob { return &kubeflowv1.PyTorchJob{} }
func (fakeFramework) ReplicaTypes(*kubeflowv1.PyTorchJob) []kubeflowv1.ReplicaType {
	return []kubeflowv1.ReplicaType{"Master", "Worker"}
}
func (fakeFramework) IsMasterRole(_ *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == "Master"
}
func (fakeFramework) DecoratePod(_ *kubeflowv1.PyTorchJob, _ kubeflowv1.ReplicaType, i int, pod *corev1.Pod) error {
	pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "INDEX", Value: string(rune('0' + i))})
	return nil
}
func (fakeFramework) Evaluate(*kubeflowv1.PyTorchJob, ReplicaView) Verdict { return Verdict{} }

// fakeMPIFramework is fakeFramework's counterpart over MPIJob objects, a
// kind whose main container is picked per job.
type fakeMPIFramework struct{}

func (fakeMPIFramework) NewJob() *kubeflowv1.MPIJob { return &kubeflowv1.MPIJob{} }
func (fakeMPIFramework) ReplicaTypes(*kubeflowv1.MPIJob) []kubeflowv1.ReplicaType {
	return []kubeflowv1.ReplicaType{"Worker", "Launcher"}
}
func (fakeMPIFramework) IsMasterRole(_ *kubeflowv1.MPIJob, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == "Launcher"
}
func (fakeMPIFramework) DecoratePod(*kubeflowv1.MPIJob, kubeflowv1.ReplicaType, int, *corev1.Pod) error {
	return nil
}
func (fakeMPIFramework) Evaluate(*kubeflowv1.MPIJob, ReplicaView) Verdict { return Verdict{} }
