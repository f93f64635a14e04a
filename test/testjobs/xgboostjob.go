package testjobs

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// XGBoostImage is the image the XGBoostJob builder puts in every container.
const XGBoostImage = "xgboost/xgboost:latest"

// XGBoostJobWrapper builds an XGBoostJob.
type XGBoostJobWrapper struct{ kubeflowv1.XGBoostJob }

// MakeXGBoostJob starts an XGBoostJob with no replicas.
func MakeXGBoostJob(name, ns string) *XGBoostJobWrapper {
	return &XGBoostJobWrapper{kubeflowv1.XGBoostJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.XGBoostJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubeflowv1.XGBoostJobSpec{XGBReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// Obj returns the built job.
func (w *XGBoostJobWrapper) Obj() *kubeflowv1.XGBoostJob { return w.DeepCopy() }

// UID sets the job UID (for pure-function tests).
func (w *XGBoostJobWrapper) UID(uid string) *XGBoostJobWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Master adds a Master replica spec with n replicas.
func (w *XGBoostJobWrapper) Master(n int32) *XGBoostJobWrapper {
	w.Spec.XGBReplicaSpecs[kubeflowv1.XGBoostJobReplicaTypeMaster] = imageReplicaSpec(n, kubeflowv1.XGBoostJobDefaultContainerName, XGBoostImage)
	return w
}

// Workers adds a Worker replica spec with n replicas.
func (w *XGBoostJobWrapper) Workers(n int32) *XGBoostJobWrapper {
	w.Spec.XGBReplicaSpecs[kubeflowv1.XGBoostJobReplicaTypeWorker] = imageReplicaSpec(n, kubeflowv1.XGBoostJobDefaultContainerName, XGBoostImage)
	return w
}

// Port sets the xgboostjob-port of one replica type's xgboost container.
func (w *XGBoostJobWrapper) Port(rt kubeflowv1.ReplicaType, port int32) *XGBoostJobWrapper {
	setNamedPort(&w.Spec.XGBReplicaSpecs[rt].Template.Spec, kubeflowv1.XGBoostJobDefaultContainerName, kubeflowv1.XGBoostJobDefaultPortName, port)
	return w
}

// RestartPolicy sets the restart policy of every replica type present.
func (w *XGBoostJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *XGBoostJobWrapper {
	for _, s := range w.Spec.XGBReplicaSpecs {
		s.RestartPolicy = p
	}
	return w
}

// Annotation sets a pod-template annotation on one replica type (e.g. KWOK's exit code).
func (w *XGBoostJobWrapper) Annotation(rt kubeflowv1.ReplicaType, k, v string) *XGBoostJobWrapper {
	setTemplateAnnotation(&w.Spec.XGBReplicaSpecs[rt].Template, k, v)
	return w
}

// CleanPodPolicy sets runPolicy.cleanPodPolicy.
func (w *XGBoostJobWrapper) CleanPodPolicy(p kubeflowv1.CleanPodPolicy) *XGBoostJobWrapper {
	w.Spec.RunPolicy.CleanPodPolicy = &p
	return w
}
