package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// ReleaseAllPods removes the tracking finalizer from every pod of the
// operator's jobs in namespace (all namespaces when empty), live or
// terminating, and returns how many pods it released. It is what an
// uninstall runs once the operator is gone (the chart's post-delete hook,
// "manager --release-pod-finalizers"): with nobody left to count them,
// the finalizer would only keep deleted pods from going away.
func ReleaseAllPods(ctx context.Context, c client.Client, namespace string) (int, error) {
	var pods metav1.PartialObjectMetadataList
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	opts := []client.ListOption{client.HasLabels{kubeflowv1.OperatorNameLabel}, client.Limit(500)}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	var todo []*corev1.Pod
	for {
		if err := c.List(ctx, &pods, opts...); err != nil {
			return 0, fmt.Errorf("listing pods: %w", err)
		}
		for i := range pods.Items {
			if m := &pods.Items[i]; hasTrackingFinalizer(m) {
				todo = append(todo, &corev1.Pod{ObjectMeta: m.ObjectMeta})
			}
		}
		if pods.Continue == "" {
			break
		}
		opts = append(opts, client.Continue(pods.Continue))
	}
	err := patchPods(ctx, c, 16, todo, releasePatch, nil)
	return len(todo), err
}
