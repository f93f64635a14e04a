package testjobs

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// PaddleImage is the image the PaddleJob builder puts in every container.
const PaddleImage = "registry.baidubce.com/paddlepaddle/paddle:2.4.0rc0-cpu"

// PaddleJobWrapper builds a PaddleJob.
type PaddleJobWrapper struct{ kubeflowv1.PaddleJob }

// MakePaddleJob starts a PaddleJob with no replicas.
func MakePaddleJob(name, ns string) *PaddleJobWrapper {
	return &PaddleJobWrapper{kubeflowv1.PaddleJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.PaddleJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubeflowv1.PaddleJobSpec{PaddleReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// Obj returns the built job.
func (w *PaddleJobWrapper) Obj() *kubeflowv1.PaddleJob { return w.DeepCopy() }

// UID sets the job UID (for pure-function tests).
func (w *PaddleJobWrapper) UID(uid string) *PaddleJobWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Master adds a Master replica spec with n replicas (parameter-server mode).
func (w *PaddleJobWrapper) Master(n int32) *PaddleJobWrapper {
	w.Spec.PaddleReplicaSpecs[kubeflowv1.PaddleJobReplicaTypeMaster] = imageReplicaSpec(n, kubeflowv1.PaddleJobDefaultContainerName, PaddleImage)
	return w
}

// Workers adds a Worker replica spec with n replicas.
func (w *PaddleJobWrapper) Workers(n int32) *PaddleJobWrapper {
	w.Spec.PaddleReplicaSpecs[kubeflowv1.PaddleJobReplicaTypeWorker] = imageReplicaSpec(n, kubeflowv1.PaddleJobDefaultContainerName, PaddleImage)
	return w
}

// Port sets the "master" port of one replica type's paddle container.
func (w *PaddleJobWrapper) Port(rt kubeflowv1.ReplicaType, port int32) *PaddleJobWrapper {
	setNamedPort(&w.Spec.PaddleReplicaSpecs[rt].Template.Spec, kubeflowv1.PaddleJobDefaultContainerName, kubeflowv1.PaddleJobDefaultPortName, port)
	return w
}

// RestartPolicy sets the restart policy of every replica type present.
func (w *PaddleJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *PaddleJobWrapper {
	for _, s := range w.Spec.PaddleReplicaSpecs {
		s.RestartPolicy = p
	}
	return w
}

// Annotation sets a pod-template annotation on one replica type (e.g. KWOK's exit code).
func (w *PaddleJobWrapper) Annotation(rt kubeflowv1.ReplicaType, k, v string) *PaddleJobWrapper {
	setTemplateAnnotation(&w.Spec.PaddleReplicaSpecs[rt].Template, k, v)
	return w
}

// Elastic sets an elastic policy with min/max replicas and optional metrics.
func (w *PaddleJobWrapper) Elastic(minR, maxR int32, metrics ...autoscalingv2.MetricSpec) *PaddleJobWrapper {
	w.Spec.ElasticPolicy = &kubeflowv1.PaddleElasticPolicy{MinReplicas: &minR, MaxReplicas: &maxR, Metrics: metrics}
	return w
}

// Suspend sets runPolicy.suspend.
func (w *PaddleJobWrapper) Suspend(s bool) *PaddleJobWrapper {
	w.Spec.RunPolicy.Suspend = &s
	return w
}
