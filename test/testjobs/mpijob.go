package testjobs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// MPIImage is the image the MPIJob builder puts in every container.
const MPIImage = "mpioperator/mpi-pi:openmpi"

// MPIJobWrapper builds an MPIJob.
type MPIJobWrapper struct{ kubeflowv1.MPIJob }

// MakeMPIJob starts an MPIJob with no replicas.
func MakeMPIJob(name, ns string) *MPIJobWrapper {
	return &MPIJobWrapper{kubeflowv1.MPIJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.MPIJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubeflowv1.MPIJobSpec{MPIReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// Obj returns the built job.
func (w *MPIJobWrapper) Obj() *kubeflowv1.MPIJob { return w.DeepCopy() }

// UID sets the job UID (for pure-function tests).
func (w *MPIJobWrapper) UID(uid string) *MPIJobWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Launcher adds the Launcher replica spec (one replica) running mpirun in an "mpi" container.
func (w *MPIJobWrapper) Launcher() *MPIJobWrapper {
	s := imageReplicaSpec(1, kubeflowv1.MPIJobDefaultContainerName, MPIImage)
	s.Template.Spec.Containers[0].Command = []string{"mpirun", "-np", "2", "/home/mpiuser/pi"}
	w.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeLauncher] = s
	return w
}

// Workers adds a Worker replica spec with n replicas whose "mpi" container
// has no command (the operator makes it sleep).
func (w *MPIJobWrapper) Workers(n int32) *MPIJobWrapper {
	s := imageReplicaSpec(n, kubeflowv1.MPIJobDefaultContainerName, MPIImage)
	s.Template.Spec.Containers[0].Command = nil
	w.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeWorker] = s
	return w
}

// SlotsPerWorker sets spec.slotsPerWorker.
func (w *MPIJobWrapper) SlotsPerWorker(n int32) *MPIJobWrapper {
	w.Spec.SlotsPerWorker = ptr.To(n)
	return w
}

// MainContainer sets spec.mainContainer.
func (w *MPIJobWrapper) MainContainer(name string) *MPIJobWrapper {
	w.Spec.MainContainer = name
	return w
}

// ContainerName renames the first container of one replica type (MPIJob
// containers may have any name).
func (w *MPIJobWrapper) ContainerName(rt kubeflowv1.ReplicaType, name string) *MPIJobWrapper {
	w.Spec.MPIReplicaSpecs[rt].Template.Spec.Containers[0].Name = name
	return w
}

// Container appends a container to one replica type's template.
func (w *MPIJobWrapper) Container(rt kubeflowv1.ReplicaType, c corev1.Container) *MPIJobWrapper {
	t := &w.Spec.MPIReplicaSpecs[rt].Template.Spec
	t.Containers = append(t.Containers, c)
	return w
}

// Env appends env vars (name, value pairs) to the first container of one replica type.
func (w *MPIJobWrapper) Env(rt kubeflowv1.ReplicaType, kv ...string) *MPIJobWrapper {
	c := &w.Spec.MPIReplicaSpecs[rt].Template.Spec.Containers[0]
	for i := 0; i+1 < len(kv); i += 2 {
		c.Env = append(c.Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return w
}

// GPUs sets an nvidia.com/gpu limit on every container of one replica type.
func (w *MPIJobWrapper) GPUs(rt kubeflowv1.ReplicaType, n int64) *MPIJobWrapper {
	s := w.Spec.MPIReplicaSpecs[rt]
	for i := range s.Template.Spec.Containers {
		s.Template.Spec.Containers[i].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resourceQuantity(n)}
	}
	return w
}

// ServiceAccount sets the serviceAccountName of one replica type's template.
func (w *MPIJobWrapper) ServiceAccount(rt kubeflowv1.ReplicaType, name string) *MPIJobWrapper {
	w.Spec.MPIReplicaSpecs[rt].Template.Spec.ServiceAccountName = name
	return w
}

// RestartPolicy sets the restart policy of every replica type present.
func (w *MPIJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *MPIJobWrapper {
	for _, s := range w.Spec.MPIReplicaSpecs {
		s.RestartPolicy = p
	}
	return w
}

// Annotation sets a pod-template annotation on one replica type (e.g. KWOK's exit code).
func (w *MPIJobWrapper) Annotation(rt kubeflowv1.ReplicaType, k, v string) *MPIJobWrapper {
	t := &w.Spec.MPIReplicaSpecs[rt].Template
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[k] = v
	return w
}

// CleanPodPolicy sets runPolicy.cleanPodPolicy.
func (w *MPIJobWrapper) CleanPodPolicy(p kubeflowv1.CleanPodPolicy) *MPIJobWrapper {
	w.Spec.RunPolicy.CleanPodPolicy = &p
	return w
}

// Suspend sets runPolicy.suspend.
func (w *MPIJobWrapper) Suspend(s bool) *MPIJobWrapper {
	w.Spec.RunPolicy.Suspend = &s
	return w
}
