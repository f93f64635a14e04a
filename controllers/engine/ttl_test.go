package engine

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

type reasonRecorder struct{ reasons []string }

func (r *reasonRecorder) Event(_ runtime.Object, _, reason, _ string) {
	r.reasons = append(r.reasons, reason)
}

// A finished job past its TTL is deleted and counted once. A second pass that
// still sees the job (the cache has not shown our delete yet) gets NotFound
// and must neither count it again nor repeat the event: make e2e's metrics
// spec expects jobs_deleted_total to be exactly 1 per job.
func TestExpireTTLCountsADeleteOnce(t *testing.T) {
	for _, tc := range []struct {
		name        string
		deleteErr   error
		wantCounted float64
		wantEvents  []string
	}{
		{"deleted by this pass", nil, 1, []string{"SuccessfulDeleteJob"}},
		{"already gone", apierrors.NewNotFound(kubeflowv1.Resource("pytorchjobs"), "j"), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = kubeflowv1.AddToScheme(scheme)
			ns := "ttl-" + map[bool]string{true: "gone", false: "live"}[tc.deleteErr != nil]
			job := testjobs.MakePyTorchJob("j", ns).UID("job-uid").Master(1).TTLSecondsAfterFinished(0).Obj()
			done := metav1.NewTime(time.Now().Add(-time.Minute))
			job.Status.CompletionTime = &done
			job.Status.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobSucceeded, Status: corev1.ConditionTrue}}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job).WithStatusSubresource(job).
				WithIndex(&corev1.Pod{}, ControllerUIDIndex, func(client.Object) []string { return nil }).
				WithIndex(&corev1.Service{}, ControllerUIDIndex, func(client.Object) []string { return nil }).
				WithInterceptorFuncs(interceptor.Funcs{
					Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
						if tc.deleteErr != nil {
							return tc.deleteErr
						}
						return c.Delete(ctx, obj, opts...)
					},
				}).Build()
			rec := &reasonRecorder{}
			r := NewReconciler(fakeFramework{}, c, c, rec, Options{StatusBatchWindow: -1})

			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			var m dto.Metric
			if err := jobsDeleted.WithLabelValues(ns, fakeMetricsLabel).Write(&m); err != nil {
				t.Fatal(err)
			}
			if got := m.GetCounter().GetValue(); got != tc.wantCounted {
				t.Errorf("jobs_deleted_total = %v, want %v", got, tc.wantCounted)
			}
			if len(rec.reasons) != len(tc.wantEvents) || (len(rec.reasons) > 0 && rec.reasons[0] != tc.wantEvents[0]) {
				t.Errorf("events = %v, want %v", rec.reasons, tc.wantEvents)
			}
		})
	}
}
