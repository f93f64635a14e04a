package engine

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Autoscaled is an optional capability of elastic frameworks: the engine
// owns a HorizontalPodAutoscaler named after the job that drives its Worker
// replicas through the scale subresource.
type Autoscaled interface {
	// Autoscaling returns the elastic bounds and metrics; ok=false when the
	// job wants no autoscaler (not elastic, or no metrics: an empty list would
	// be defaulted to 80% CPU by the apiserver and look like drift forever).
	Autoscaling(job client.Object) (minReplicas *int32, maxReplicas int32, metrics []autoscalingv2.MetricSpec, ok bool)
}

// DesiredHPA is the pure constructor of a job's autoscaler, or nil.
func DesiredHPA(fw Framework, job client.Object) *autoscalingv2.HorizontalPodAutoscaler {
	a, ok := fw.(Autoscaled)
	if !ok {
		return nil
	}
	minReplicas, maxReplicas, metrics, ok := a.Autoscaling(job)
	if !ok {
		return nil
	}
	ref := ownerReference(fw.Kind(), job)
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name:      job.GetName(),
			Namespace: job.GetNamespace(),
			// The cache only holds HPAs with the operator-name label.
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

// reconcileAutoscaler creates or repairs the HPA of an active elastic job
// and deletes it when the job is suspended, finished or no longer elastic.
// HPAs are watched, so drift is repaired; someone else's HPA is left alone.
func (r *Reconciler) reconcileAutoscaler(ctx context.Context, job client.Object, active bool) error {
	if _, ok := r.fw.(Autoscaled); !ok {
		return nil
	}
	var existing autoscalingv2.HorizontalPodAutoscaler
	err := r.client.Get(ctx, client.ObjectKeyFromObject(job), &existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	found := err == nil
	if found {
		if ref := metav1.GetControllerOf(&existing); ref == nil || ref.UID != job.GetUID() {
			return nil
		}
	}
	desired := DesiredHPA(r.fw, job)
	switch {
	case (!active || desired == nil) && found:
		uid := existing.UID
		return client.IgnoreNotFound(r.client.Delete(ctx, &existing, client.Preconditions{UID: &uid}))
	case !active || desired == nil:
		return nil
	case !found:
		return client.IgnoreAlreadyExists(r.client.Create(ctx, desired))
	case !equality.Semantic.DeepEqual(existing.Spec, desired.Spec):
		updated := existing.DeepCopy()
		updated.Spec = desired.Spec
		return r.client.Update(ctx, updated)
	}
	return nil
}
