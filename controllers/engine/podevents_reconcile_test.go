package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// messageRecorder keeps the events of one reason.
type messageRecorder struct {
	reason string
	got    []string
}

func (r *messageRecorder) Event(_ runtime.Object, _, reason, msg string) {
	if reason == r.reason {
		r.got = append(r.got, msg)
	}
}

// Pod events follow the status write: a pass whose write conflicts records
// nothing and keeps no memo, so the next pass records them; later passes
// do not repeat them, and a finished job's pods are not reported again.
func TestPodEventsFollowTheStatusWrite(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kubeflowv1.AddToScheme(scheme)
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	stuck := testjobs.MakePod("j-master-0", "ns").UID("pod-uid").ControlledBy("PyTorchJob", "j", "job-uid").
		Label(kubeflowv1.ReplicaTypeLabel, "master").Label(kubeflowv1.ReplicaIndexLabel, "0").
		Phase(corev1.PodPending).Waiting("pytorch", "ImagePullBackOff", `Back-off pulling image "nope"`).Obj()
	index := func(o client.Object) []string {
		if ref := o.GetOwnerReferences(); len(ref) > 0 {
			return []string{string(ref[0].UID)}
		}
		return nil
	}
	conflicts := 1
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, stuck).WithStatusSubresource(job).
		WithIndex(&corev1.Pod{}, ControllerUIDIndex, index).
		WithIndex(&corev1.Service{}, ControllerUIDIndex, index).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if conflicts > 0 {
					conflicts--
					return apierrors.NewConflict(kubeflowv1.Resource("pytorchjobs"), "j", errors.New("stale"))
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	rec := &messageRecorder{reason: "ImagePullBackOff"}
	r := NewReconciler(fakeFramework{}, c, c, rec, Options{StatusBatchWindow: -1})
	pass := func() {
		t.Helper()
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
	}
	want := []string{`Error pod j-master-0 container pytorch waiting message: Back-off pulling image "nope"`}

	pass()
	if len(rec.got) != 0 || r.memory.sizes().PodMemos != 0 {
		t.Fatalf("a pass whose status write conflicted recorded %v, memo %v", rec.got, r.podMemos.get(client.ObjectKeyFromObject(job), job.UID))
	}
	pass()
	pass()
	if diff := cmp.Diff(want, rec.got); diff != "" {
		t.Errorf("events after three passes (-want +got):\n%s", diff)
	}

	var cur kubeflowv1.PyTorchJob
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), &cur); err != nil {
		t.Fatal(err)
	}
	cur.Status.Conditions = append(cur.Status.Conditions, kubeflowv1.JobCondition{Type: kubeflowv1.JobFailed, Status: corev1.ConditionTrue})
	if err := c.Status().Update(context.Background(), &cur); err != nil {
		t.Fatal(err)
	}
	pass()
	if diff := cmp.Diff(want, rec.got); diff != "" {
		t.Errorf("a finished job's pods were reported (-want +got):\n%s", diff)
	}
	if r.memory.sizes().PodMemos != 0 {
		t.Errorf("a finished job kept its memo: %v", r.podMemos.get(client.ObjectKeyFromObject(job), job.UID))
	}
}
