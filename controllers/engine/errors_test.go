package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

var errAPI = errors.New("apiserver unavailable")

// A pass whose API call fails returns the error, so it is retried with
// backoff, instead of dropping it.
func TestAPIErrorsFailThePass(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup runs passes that must succeed and arms the failure.
		setup func(h *harness, fail *bool)
		funcs func(fail *bool) interceptor.Funcs
	}{
		{
			name: "retry deletion of a failed pod",
			setup: func(h *harness, fail *bool) {
				h.reconcile()
				h.failPod("j-worker-0", 1)
				*fail = true
			},
			funcs: func(fail *bool) interceptor.Funcs {
				return interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					if _, ok := obj.(*corev1.Pod); ok && *fail {
						return errAPI
					}
					return c.Delete(ctx, obj, opts...)
				}}
			},
		},
		{
			name:  "read after AlreadyExists",
			setup: func(_ *harness, fail *bool) { *fail = true },
			funcs: func(fail *bool) interceptor.Funcs {
				return interceptor.Funcs{
					Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
						if _, ok := obj.(*corev1.Pod); ok && *fail {
							return apierrors.NewAlreadyExists(corev1.Resource("pods"), obj.GetName())
						}
						return c.Create(ctx, obj, opts...)
					},
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if _, ok := obj.(*corev1.Pod); ok && *fail {
							return errAPI
						}
						return c.Get(ctx, key, obj, opts...)
					},
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
			fail := false
			h := newHarness(t, fakeFramework{}, job, Options{}, tc.funcs(&fail))
			tc.setup(h, &fail)
			_, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key})
			if d := cmp.Diff(true, errors.Is(err, errAPI)); d != "" {
				t.Errorf("Reconcile error %v wraps the API error (-want +got):\n%s", err, d)
			}
		})
	}
}
