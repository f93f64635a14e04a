// Package testjobs holds test builders for jobs and pods, so tests read as
// MakePyTorchJob("j", "ns").Workers(3).Obj() instead of literal structs.
package testjobs

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// DefaultImage is the image the builders put in every container.
const DefaultImage = "pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime"

// PyTorchJobWrapper builds a PyTorchJob.
type PyTorchJobWrapper struct{ kubeflowv1.PyTorchJob }

// MakePyTorchJob starts a PyTorchJob with no replicas.
func MakePyTorchJob(name, ns string) *PyTorchJobWrapper {
	return &PyTorchJobWrapper{kubeflowv1.PyTorchJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.PyTorchJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       kubeflowv1.PyTorchJobSpec{PyTorchReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// Obj returns the built job.
func (w *PyTorchJobWrapper) Obj() *kubeflowv1.PyTorchJob { return w.DeepCopy() }

// UID sets the job UID (for pure-function tests).
func (w *PyTorchJobWrapper) UID(uid string) *PyTorchJobWrapper {
	w.ObjectMeta.UID = types.UID(uid)
	return w
}

// Master adds a Master replica spec with n replicas.
func (w *PyTorchJobWrapper) Master(n int32) *PyTorchJobWrapper {
	w.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster] = replicaSpec(n, "pytorch")
	return w
}

// Workers adds a Worker replica spec with n replicas.
func (w *PyTorchJobWrapper) Workers(n int32) *PyTorchJobWrapper {
	w.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker] = replicaSpec(n, "pytorch")
	return w
}

// RestartPolicy sets the restart policy of every replica type present.
func (w *PyTorchJobWrapper) RestartPolicy(p kubeflowv1.RestartPolicy) *PyTorchJobWrapper {
	for _, s := range w.Spec.PyTorchReplicaSpecs {
		s.RestartPolicy = p
	}
	return w
}

// Annotation sets a pod-template annotation on one replica type (e.g. KWOK's exit code).
func (w *PyTorchJobWrapper) Annotation(rt kubeflowv1.ReplicaType, k, v string) *PyTorchJobWrapper {
	t := &w.Spec.PyTorchReplicaSpecs[rt].Template
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[k] = v
	return w
}

// GPUs sets an nvidia.com/gpu limit on every container of every replica type.
func (w *PyTorchJobWrapper) GPUs(n int64) *PyTorchJobWrapper {
	for _, s := range w.Spec.PyTorchReplicaSpecs {
		for i := range s.Template.Spec.Containers {
			c := &s.Template.Spec.Containers[i]
			c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resourceQuantity(n)}
		}
	}
	return w
}

// CleanPodPolicy sets runPolicy.cleanPodPolicy.
func (w *PyTorchJobWrapper) CleanPodPolicy(p kubeflowv1.CleanPodPolicy) *PyTorchJobWrapper {
	w.Spec.RunPolicy.CleanPodPolicy = &p
	return w
}

// BackoffLimit sets runPolicy.backoffLimit.
func (w *PyTorchJobWrapper) BackoffLimit(n int32) *PyTorchJobWrapper {
	w.Spec.RunPolicy.BackoffLimit = &n
	return w
}

// ActiveDeadlineSeconds sets runPolicy.activeDeadlineSeconds.
func (w *PyTorchJobWrapper) ActiveDeadlineSeconds(n int64) *PyTorchJobWrapper {
	w.Spec.RunPolicy.ActiveDeadlineSeconds = &n
	return w
}

// TTLSecondsAfterFinished sets runPolicy.ttlSecondsAfterFinished.
func (w *PyTorchJobWrapper) TTLSecondsAfterFinished(n int32) *PyTorchJobWrapper {
	w.Spec.RunPolicy.TTLSecondsAfterFinished = &n
	return w
}

// Suspend sets runPolicy.suspend.
func (w *PyTorchJobWrapper) Suspend(s bool) *PyTorchJobWrapper {
	w.Spec.RunPolicy.Suspend = &s
	return w
}

// ManagedBy sets runPolicy.managedBy.
func (w *PyTorchJobWrapper) ManagedBy(m string) *PyTorchJobWrapper {
	w.Spec.RunPolicy.ManagedBy = &m
	return w
}

// NodeSelector sets a nodeSelector entry on one replica type's pods.
func (w *PyTorchJobWrapper) NodeSelector(rt kubeflowv1.ReplicaType, k, v string) *PyTorchJobWrapper {
	t := &w.Spec.PyTorchReplicaSpecs[rt].Template.Spec
	if t.NodeSelector == nil {
		t.NodeSelector = map[string]string{}
	}
	t.NodeSelector[k] = v
	return w
}

// SchedulingGate holds one replica type's pods back from scheduling.
func (w *PyTorchJobWrapper) SchedulingGate(rt kubeflowv1.ReplicaType, name string) *PyTorchJobWrapper {
	t := &w.Spec.PyTorchReplicaSpecs[rt].Template.Spec
	t.SchedulingGates = append(t.SchedulingGates, corev1.PodSchedulingGate{Name: name})
	return w
}

// InitContainer appends an init container to one replica type's template.
func (w *PyTorchJobWrapper) InitContainer(rt kubeflowv1.ReplicaType, c corev1.Container) *PyTorchJobWrapper {
	t := &w.Spec.PyTorchReplicaSpecs[rt].Template.Spec
	t.InitContainers = append(t.InitContainers, c)
	return w
}

// NprocPerNode sets spec.nprocPerNode.
func (w *PyTorchJobWrapper) NprocPerNode(n string) *PyTorchJobWrapper {
	w.Spec.NprocPerNode = &n
	return w
}

// Elastic sets an elastic policy with min/max replicas and optional metrics.
func (w *PyTorchJobWrapper) Elastic(minR, maxR int32, metrics ...autoscalingv2.MetricSpec) *PyTorchJobWrapper {
	w.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{MinReplicas: &minR, MaxReplicas: &maxR, Metrics: metrics}
	return w
}

// ElasticPolicy replaces the elastic policy.
func (w *PyTorchJobWrapper) ElasticPolicy(ep *kubeflowv1.ElasticPolicy) *PyTorchJobWrapper {
	w.Spec.ElasticPolicy = ep
	return w
}

// CPUMetric is a 80% CPU utilisation metric for elastic HPAs.
func CPUMetric(utilization int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(utilization)},
		},
	}
}

func replicaSpec(n int32, container string) *kubeflowv1.ReplicaSpec {
	return &kubeflowv1.ReplicaSpec{
		Replicas: ptr.To(n),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:    container,
			Image:   DefaultImage,
			Command: []string{"python", "/workspace/train.py"},
		}}}},
	}
}
