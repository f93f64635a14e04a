package paddlepaddle

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// OwnedTypes implements engine.ChildReconciler: the elastic HPA is watched,
// so drift is repaired.
func (*Framework) OwnedTypes() []client.Object {
	return []client.Object{&autoscalingv2.HorizontalPodAutoscaler{}}
}

// desiredHPA builds the elastic autoscaler (v1 had none for Paddle; it
// scales the Worker replicas through the scale subresource like PyTorch's),
// or nil when the job has no metrics (an empty list too: the API server
// would default it to 80% CPU and every reconcile would see drift).
func desiredHPA(j *kubeflowv1.PaddleJob) *autoscalingv2.HorizontalPodAutoscaler {
	ep := j.Spec.ElasticPolicy
	if ep == nil || len(ep.Metrics) == 0 || ep.MaxReplicas == nil {
		return nil
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name:      j.Name,
			Namespace: j.Namespace,
			// The operator's cache only holds HPAs with the operator-name label.
			Labels: engine.JobLabels(ControllerName, j.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         kubeflowv1.GroupVersion.String(),
				Kind:               kubeflowv1.PaddleJobKind,
				Name:               j.Name,
				UID:                j.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				Kind:       kubeflowv1.PaddleJobKind,
				Name:       j.Name,
				APIVersion: kubeflowv1.GroupVersion.String(),
			},
			MinReplicas: ep.MinReplicas,
			MaxReplicas: *ep.MaxReplicas,
			Metrics:     ep.Metrics,
		},
	}
}

// ReconcileChildren implements engine.ChildReconciler: create or repair the
// HPA of an active elastic job; delete it when the job is suspended,
// finished or no longer elastic. The engine passes active=false for the
// suspended and finished cases.
func (*Framework) ReconcileChildren(ctx context.Context, c client.Client, obj client.Object, active bool) error {
	j := job(obj)
	var existing autoscalingv2.HorizontalPodAutoscaler
	err := c.Get(ctx, client.ObjectKey{Namespace: j.Namespace, Name: j.Name}, &existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	found := err == nil
	if found {
		if ref := metav1.GetControllerOf(&existing); ref == nil || ref.UID != j.UID {
			return nil // not ours: leave it alone
		}
	}
	desired := desiredHPA(j)
	switch {
	case (!active || desired == nil) && found:
		uid := existing.UID
		return client.IgnoreNotFound(c.Delete(ctx, &existing, client.Preconditions{UID: &uid}))
	case !active || desired == nil:
		return nil
	case !found:
		return client.IgnoreAlreadyExists(c.Create(ctx, desired))
	case !equality.Semantic.DeepEqual(existing.Spec, desired.Spec):
		updated := existing.DeepCopy()
		updated.Spec = desired.Spec
		return c.Update(ctx, updated)
	}
	return nil
}
