package engine

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Autoscaled is an optional capability of elastic frameworks: the engine
// owns a HorizontalPodAutoscaler named after the job that drives its Worker
// replicas through the scale subresource.
type Autoscaled[J Job[J]] interface {
	// Autoscaling returns the elastic bounds and metrics; ok=false when the
	// job wants no autoscaler (not elastic, or no metrics: an empty list would
	// be defaulted to 80% CPU by the apiserver and look like drift forever).
	Autoscaling(job J) (minReplicas *int32, maxReplicas int32, metrics []autoscalingv2.MetricSpec, ok bool)
}

// DesiredHPA is the pure constructor of a job's autoscaler, or nil.
func DesiredHPA[J Job[J]](fw Framework[J], job J) *autoscalingv2.HorizontalPodAutoscaler {
	return resolve(fw).desiredHPA(job)
}

func (fw *adapter[J]) desiredHPA(job J) *autoscalingv2.HorizontalPodAutoscaler {
	if fw.autoscaled == nil {
		return nil
	}
	minReplicas, maxReplicas, metrics, ok := fw.autoscaled.Autoscaling(job)
	if !ok {
		return nil
	}
	ref := ownerReference(fw.Kind(), job)
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name:      job.GetName(),
			Namespace: job.GetNamespace(),
			// The cache only holds HPAs with the operator-name label; v1's
			// unlabelled HPA gets them when it is adopted.
			Labels:          JobLabels(fw.ControllerName(), job.GetName()),
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion},
			MinReplicas:    minReplicas,
			MaxReplicas:    maxReplicas,
			Metrics:        metrics,
		},
	}
}
