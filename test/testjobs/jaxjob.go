package testjobs

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// JAXImage is the image the JAXJob builder puts in every container.
const JAXImage = "docker.io/kubeflow/jaxjob-simple:latest"

// JAXJobWrapper builds a JAXJob.
type JAXJobWrapper struct{ kubeflowv1.JAXJob }

// MakeJAXJob starts a JAXJob with no replicas.
func MakeJAXJob(name, ns string) *JAXJobWrapper {
	return &JAXJobWrapper{kubeflowv1.JAXJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.JAXJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubeflowv1.JAXJobSpec{JAXReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// Obj returns the built job.
func (w *JAXJobWrapper) Obj() *kubeflowv1.JAXJob { return w.DeepCopy() }

// UID sets the job UID (for pure-function tests).
func (w *JAXJobWrapper) UID(uid string) *JAXJobWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Workers adds the Worker replica spec with n replicas.
func (w *JAXJobWrapper) Workers(n int32) *JAXJobWrapper {
	w.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker] = imageReplicaSpec(n, kubeflowv1.JAXJobDefaultContainerName, JAXImage)
	return w
}

// Port sets the jaxjob-port of the Worker's jax container.
func (w *JAXJobWrapper) Port(port int32) *JAXJobWrapper {
	setNamedPort(&w.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker].Template.Spec, kubeflowv1.JAXJobDefaultContainerName, kubeflowv1.JAXJobDefaultPortName, port)
	return w
}

// RestartPolicy sets the restart policy of the Worker.
func (w *JAXJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *JAXJobWrapper {
	for _, s := range w.Spec.JAXReplicaSpecs {
		s.RestartPolicy = p
	}
	return w
}

// Annotation sets a Worker pod-template annotation (e.g. KWOK's exit code).
func (w *JAXJobWrapper) Annotation(k, v string) *JAXJobWrapper {
	setTemplateAnnotation(&w.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker].Template, k, v)
	return w
}
