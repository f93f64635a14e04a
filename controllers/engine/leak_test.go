package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// Jobs deleted without a pass seeing their deletion timestamp (TTL with
// background propagation, a user's delete without finalizers) must leave
// nothing behind: jobs created, reconciled and deleted leave no record in
// the job memory, whether the NotFound pass or the delete event comes
// first. A fake-client pass costs ~40 ms, so 100 jobs here; the in-flight
// part alone is driven through 10,000 in inflight_test.go.
func TestDeletedJobsLeaveNoMemory(t *testing.T) {
	const jobs = 100
	for _, tc := range []struct {
		name        string
		deleteEvent bool
	}{
		{"forgotten on NotFound", false},
		{"forgotten on the delete event, then NotFound", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = kubeflowv1.AddToScheme(scheme)
			index := func(o client.Object) []string {
				if ref := metav1.GetControllerOf(o); ref != nil {
					return []string{string(ref.UID)}
				}
				return nil
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&kubeflowv1.PyTorchJob{}).
				WithIndex(&corev1.Pod{}, ControllerUIDIndex, index).
				WithIndex(&corev1.Service{}, ControllerUIDIndex, index).Build()
			r := NewReconciler(fakeFramework{}, c, c, &eventLog{}, Options{StatusBatchWindow: -1})
			ctx := context.Background()
			jobGone, podLeft := r.jobGone(), r.podLeft()
			var peak memorySizes
			for i := range jobs {
				ns, uid := fmt.Sprintf("ns-%d", i), fmt.Sprintf("uid-%d", i)
				w := testjobs.MakePyTorchJob("j", ns).UID(uid).Master(1).Workers(1)
				if i%10 == 9 {
					w = w.ManagedBy("kueue.x-k8s.io/multikueue")
				}
				job := w.Obj()
				// A stuck master gives the job a pod-event memo; the worker
				// is created by the pass, giving it an in-flight record.
				stuck := testjobs.MakePod("j-master-0", ns).UID(uid+"-m").ControlledBy("PyTorchJob", "j", uid).
					Label(kubeflowv1.ReplicaTypeLabel, "master").Label(kubeflowv1.ReplicaIndexLabel, "0").
					Phase(corev1.PodPending).Waiting("pytorch", "ImagePullBackOff", "Back-off").Obj()
				for _, o := range []client.Object{job, stuck} {
					if err := c.Create(ctx, o); err != nil {
						t.Fatal(err)
					}
				}
				req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)}
				if _, err := r.Reconcile(ctx, req); err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
				if i == 0 || i == 9 {
					s := r.memory.sizes()
					peak.Inflight += s.Inflight
					peak.Written += s.Written
					peak.PodMemos += s.PodMemos
					peak.Looked += s.Looked
					peak.External += s.External
				}
				var pods corev1.PodList
				if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				// Someone deletes the pods of the live job: the pod watch
				// records them (vanishedPods) for the pass that never comes.
				if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				for i := range pods.Items {
					podLeft.Delete(ctrlevent.DeleteEvent{Object: &pods.Items[i]})
				}
				if i == 0 {
					peak.Vanished = r.memory.sizes().Vanished
				}
				if err := c.Delete(ctx, job); err != nil {
					t.Fatal(err)
				}
				// Garbage collection, so the fake store stays small.
				if err := c.DeleteAllOf(ctx, &corev1.Service{}, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				if tc.deleteEvent {
					jobGone.Delete(ctrlevent.DeleteEvent{Object: job})
				}
				if _, err := r.Reconcile(ctx, req); err != nil {
					t.Fatalf("Reconcile after delete: %v", err)
				}
			}
			// Every part was used (by job 0, or job 9 for the external count).
			if peak.Inflight == 0 || peak.Written == 0 || peak.PodMemos == 0 || peak.External == 0 || peak.Looked == 0 || peak.Vanished == 0 {
				t.Fatalf("the test does not exercise every memory: %+v", peak)
			}
			if d := cmp.Diff(memorySizes{}, r.memory.sizes()); d != "" {
				t.Errorf("after %d jobs created and deleted (-want +got):\n%s", jobs, d)
			}
		})
	}
}
