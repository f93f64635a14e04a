package engine

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
)

// childrenFramework is fakeFramework with framework-owned children that
// fail with a fixed error, as MPI's hostfile ConfigMap update did when the
// cache lagged the operator's own previous write.
type childrenFramework struct {
	fakeFramework
	err error
}

func (childrenFramework) OwnedTypes() []client.Object { return nil }
func (f childrenFramework) ReconcileChildren(context.Context, client.Client, client.Object, bool) error {
	return f.err
}

type nopRecorder struct{}

func (nopRecorder) Event(runtime.Object, string, string, string) {}

// A conflict on a framework child must not hold back the job's pods (the
// chaos suite saw a deleted MPI worker wait behind ConfigMap conflict
// retries until its launcher finished); any other child error still does,
// since pods may depend on that child existing.
func TestExtraChildrenConflictDoesNotBlockPods(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "j-config", errors.New("stale"))
	for _, tc := range []struct {
		name     string
		err      error
		wantPods int
	}{
		{"conflict", conflict, 2},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "j-launcher", errors.New("no")), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = kubeflowv1.AddToScheme(scheme)
			job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
			index := func(o client.Object) []string {
				for _, ref := range o.GetOwnerReferences() {
					return []string{string(ref.UID)}
				}
				return nil
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job).
				WithStatusSubresource(job).
				WithIndex(&corev1.Pod{}, ControllerUIDIndex, index).
				WithIndex(&corev1.Service{}, ControllerUIDIndex, index).Build()
			r := NewReconciler(childrenFramework{err: tc.err}, c, c, nopRecorder{}, Options{StatusBatchWindow: -1})

			_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
			if !errors.Is(err, tc.err) {
				t.Errorf("Reconcile error = %v, want the child's error returned so the pass is retried", err)
			}
			var pods corev1.PodList
			if err := c.List(context.Background(), &pods); err != nil {
				t.Fatal(err)
			}
			if len(pods.Items) != tc.wantPods {
				t.Errorf("pods created = %d, want %d", len(pods.Items), tc.wantPods)
			}
		})
	}
}
