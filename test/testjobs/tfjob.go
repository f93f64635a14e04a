package testjobs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// TFImage is the image the TFJob builder puts in every container.
const TFImage = "tensorflow/tensorflow:2.17.0-gpu"

// TFJobWrapper builds a TFJob.
type TFJobWrapper struct{ kubeflowv1.TFJob }

// MakeTFJob starts a TFJob with no replicas.
func MakeTFJob(name, ns string) *TFJobWrapper {
	return &TFJobWrapper{kubeflowv1.TFJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.TFJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// Obj returns the built job.
func (w *TFJobWrapper) Obj() *kubeflowv1.TFJob { return w.DeepCopy() }

// UID sets the job UID (for pure-function tests).
func (w *TFJobWrapper) UID(uid string) *TFJobWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Replicas adds a replica spec of any type with n replicas and one tensorflow container.
func (w *TFJobWrapper) Replicas(rt kubeflowv1.ReplicaType, n int32) *TFJobWrapper {
	w.Spec.TFReplicaSpecs[rt] = imageReplicaSpec(n, kubeflowv1.TFJobDefaultContainerName, TFImage)
	return w
}

// Chief adds a Chief replica spec with n replicas.
func (w *TFJobWrapper) Chief(n int32) *TFJobWrapper {
	return w.Replicas(kubeflowv1.TFJobReplicaTypeChief, n)
}

// Master adds a Master replica spec with n replicas.
func (w *TFJobWrapper) Master(n int32) *TFJobWrapper {
	return w.Replicas(kubeflowv1.TFJobReplicaTypeMaster, n)
}

// PS adds a PS replica spec with n replicas.
func (w *TFJobWrapper) PS(n int32) *TFJobWrapper { return w.Replicas(kubeflowv1.TFJobReplicaTypePS, n) }

// Workers adds a Worker replica spec with n replicas.
func (w *TFJobWrapper) Workers(n int32) *TFJobWrapper {
	return w.Replicas(kubeflowv1.TFJobReplicaTypeWorker, n)
}

// Evaluator adds an Evaluator replica spec with n replicas.
func (w *TFJobWrapper) Evaluator(n int32) *TFJobWrapper {
	return w.Replicas(kubeflowv1.TFJobReplicaTypeEval, n)
}

// Port sets the tfjob-port of one replica type's tensorflow container.
func (w *TFJobWrapper) Port(rt kubeflowv1.ReplicaType, port int32) *TFJobWrapper {
	setNamedPort(&w.Spec.TFReplicaSpecs[rt].Template.Spec, kubeflowv1.TFJobDefaultContainerName, kubeflowv1.TFJobDefaultPortName, port)
	return w
}

// RestartPolicy sets the restart policy of every replica type present.
func (w *TFJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *TFJobWrapper {
	for _, s := range w.Spec.TFReplicaSpecs {
		s.RestartPolicy = p
	}
	return w
}

// Annotation sets a pod-template annotation on one replica type (e.g. KWOK's exit code).
func (w *TFJobWrapper) Annotation(rt kubeflowv1.ReplicaType, k, v string) *TFJobWrapper {
	setTemplateAnnotation(&w.Spec.TFReplicaSpecs[rt].Template, k, v)
	return w
}

// SuccessPolicy sets spec.successPolicy.
func (w *TFJobWrapper) SuccessPolicy(p kubeflowv1.SuccessPolicy) *TFJobWrapper {
	w.Spec.SuccessPolicy = &p
	return w
}

// EnableDynamicWorker sets spec.enableDynamicWorker.
func (w *TFJobWrapper) EnableDynamicWorker(b bool) *TFJobWrapper {
	w.Spec.EnableDynamicWorker = b
	return w
}

// CleanPodPolicy sets runPolicy.cleanPodPolicy.
func (w *TFJobWrapper) CleanPodPolicy(p kubeflowv1.CleanPodPolicy) *TFJobWrapper {
	w.Spec.RunPolicy.CleanPodPolicy = &p
	return w
}

// Suspend sets runPolicy.suspend.
func (w *TFJobWrapper) Suspend(s bool) *TFJobWrapper {
	w.Spec.RunPolicy.Suspend = &s
	return w
}

// imageReplicaSpec is a replica spec with one named container running image.
func imageReplicaSpec(n int32, container, image string) *kubeflowv1.ReplicaSpec {
	s := replicaSpec(n, container)
	s.Template.Spec.Containers[0].Image = image
	return s
}

// setNamedPort sets (or adds) the named port on the named container.
func setNamedPort(spec *corev1.PodSpec, container, portName string, port int32) {
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != container {
			continue
		}
		for j := range c.Ports {
			if c.Ports[j].Name == portName {
				c.Ports[j].ContainerPort = port
				return
			}
		}
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: portName, ContainerPort: port})
		return
	}
}

// setTemplateAnnotation sets one pod-template annotation.
func setTemplateAnnotation(t *corev1.PodTemplateSpec, k, v string) {
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[k] = v
}
