package engine

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestControllerOf(t *testing.T) {
	pytorch := schema.GroupKind{Group: "kubeflow.org", Kind: "PyTorchJob"}
	ref := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "j", UID: "u", Controller: ptr.To(controller)}
	}
	job := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}
	for _, tc := range []struct {
		name   string
		refs   []metav1.OwnerReference
		want   reconcile.Request
		wantOK bool
	}{
		{"controlled by a job of the kind", []metav1.OwnerReference{ref("kubeflow.org/v1", "PyTorchJob", true)}, job, true},
		{"another version of the group", []metav1.OwnerReference{ref("kubeflow.org/v2", "PyTorchJob", true)}, job, true},
		{"owned but not controlled", []metav1.OwnerReference{ref("kubeflow.org/v1", "PyTorchJob", false)}, reconcile.Request{}, false},
		{"controlled by another kind", []metav1.OwnerReference{ref("kubeflow.org/v1", "TFJob", true)}, reconcile.Request{}, false},
		{"same kind in another group", []metav1.OwnerReference{ref("example.com/v1", "PyTorchJob", true)}, reconcile.Request{}, false},
		{"core group owner", []metav1.OwnerReference{ref("v1", "PyTorchJob", true)}, reconcile.Request{}, false},
		{"no owner", nil, reconcile.Request{}, false},
		{"controller after a plain owner", []metav1.OwnerReference{ref("v1", "ConfigMap", false), ref("kubeflow.org/v1", "PyTorchJob", true)}, job, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testjobs.MakePod("j-worker-0", "ns").Obj()
			pod.OwnerReferences = tc.refs
			got, ok := controllerOf(pytorch, pod)
			if ok != tc.wantOK {
				t.Errorf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// queueLog records how a handler enqueues.
type queueLog struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	now, later []string
}

func (q *queueLog) Add(r reconcile.Request) { q.now = append(q.now, r.Name) }
func (q *queueLog) AddAfter(r reconcile.Request, _ time.Duration) {
	q.later = append(q.later, r.Name)
}

func TestEnqueueControllerBatchesChildEvents(t *testing.T) {
	gk := schema.GroupKind{Group: kubeflowv1.GroupVersion.Group, Kind: kubeflowv1.PyTorchJobKind}
	pod := testjobs.MakePod("p", "ns").ControlledBy(kubeflowv1.PyTorchJobKind, "j", "u").Obj()
	h := enqueueController(gk, time.Second)
	ctx := context.Background()

	q := &queueLog{}
	h.Create(ctx, ctrlevent.CreateEvent{Object: pod}, q)
	h.Update(ctx, ctrlevent.UpdateEvent{ObjectOld: pod, ObjectNew: pod}, q)
	if len(q.now) != 0 || len(q.later) != 3 {
		t.Errorf("child events: now %v, later %v; want all 3 delayed", q.now, q.later)
	}

	// Deletion is seen at once: a pass must find the pod terminating to
	// count the restart.
	q = &queueLog{}
	terminating := testjobs.MakePod("p", "ns").ControlledBy(kubeflowv1.PyTorchJobKind, "j", "u").Terminating().Obj()
	h.Update(ctx, ctrlevent.UpdateEvent{ObjectOld: pod, ObjectNew: terminating}, q)
	h.Delete(ctx, ctrlevent.DeleteEvent{Object: terminating}, q)
	if len(q.now) != 3 || len(q.later) != 0 {
		t.Errorf("deletion: now %v, later %v; want all 3 at once", q.now, q.later)
	}

	q = &queueLog{}
	h.Create(ctx, ctrlevent.CreateEvent{Object: pod, IsInInitialList: true}, q)
	if len(q.now) != 1 || len(q.later) != 0 {
		t.Errorf("initial list: now %v, later %v; want enqueued at once (keeps its low priority)", q.now, q.later)
	}

	q = &queueLog{}
	enqueueController(gk, -1).Update(ctx, ctrlevent.UpdateEvent{ObjectOld: pod, ObjectNew: pod}, q)
	if len(q.now) != 2 || len(q.later) != 0 {
		t.Errorf("no delay: now %v, later %v", q.now, q.later)
	}
}

func TestUrgent(t *testing.T) {
	fpPod := func() *testjobs.PodWrapper {
		return testjobs.MakePod("p", "ns").Label(kubeflowv1.RestartAttemptLabel, "0").Phase(corev1.PodRunning)
	}
	confirmed := func(p *corev1.Pod, finalizer bool) *corev1.Pod {
		now := metav1.Now()
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, new(int64)
		if finalizer {
			p.Finalizers = []string{kubeflowv1.PodTrackingFinalizer}
		}
		return p
	}
	terminating := func(finalizer bool) *corev1.Pod {
		p := testjobs.MakePod("p", "ns").Phase(corev1.PodRunning).Terminating().Obj()
		p.DeletionGracePeriodSeconds = ptr.To[int64](30)
		if finalizer {
			p.Finalizers = []string{kubeflowv1.PodTrackingFinalizer}
		}
		return p
	}
	for _, tc := range []struct {
		name          string
		before, after *corev1.Pod
		want          bool
	}{
		{"failure-policy pod fails", fpPod().Obj(), fpPod().Phase(corev1.PodFailed).Obj(), true},
		{"failure-policy pod already failed", fpPod().Phase(corev1.PodFailed).Obj(), fpPod().Phase(corev1.PodFailed).Reason("x").Obj(), false},
		{"v1 pod fails", testjobs.MakePod("p", "ns").Phase(corev1.PodRunning).Obj(), testjobs.MakePod("p", "ns").Phase(corev1.PodFailed).Obj(), false},
		{"tracked pod's deletion confirmed", terminating(true), confirmed(terminating(true), true), true},
		{"untracked pod's deletion confirmed", terminating(false), confirmed(terminating(false), false), false},
	} {
		if got := urgent(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: urgent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
