package engine

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// controllerOf is the job of kind gk that controls a child, if any. Job
// kinds are namespaced, so the job is in the child's namespace.
func controllerOf(gk schema.GroupKind, child client.Object) (reconcile.Request, bool) {
	ref := metav1.GetControllerOfNoCopy(child)
	if ref == nil || ref.Kind != gk.Kind {
		return reconcile.Request{}, false
	}
	group, _, found := strings.Cut(ref.APIVersion, "/")
	if !found {
		group = "" // the core group has bare versions ("v1")
	}
	if group != gk.Group {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: child.GetNamespace(), Name: ref.Name}}, true
}

// ownedBy passes the events of children controlled by a job of kind gk
// (either side of an update, as enqueueController enqueues both). Every
// kind's controller watches the same pod and Service informers, so it goes
// first: without it, each pod update ran all six controllers' comparisons
// of the pod, five of them for a job they would not enqueue.
func ownedBy(gk schema.GroupKind) predicate.Funcs {
	owned := func(o client.Object) bool {
		_, ok := controllerOf(gk, o)
		return ok
	}
	return predicate.Funcs{
		CreateFunc:  func(e ctrlevent.CreateEvent) bool { return owned(e.Object) },
		UpdateFunc:  func(e ctrlevent.UpdateEvent) bool { return owned(e.ObjectOld) || owned(e.ObjectNew) },
		DeleteFunc:  func(e ctrlevent.DeleteEvent) bool { return owned(e.Object) },
		GenericFunc: func(e ctrlevent.GenericEvent) bool { return owned(e.Object) },
	}
}

// enqueueController enqueues the job controlling a changed child. It does
// what controller-runtime's EnqueueRequestForOwner does for Owns, without
// asking the REST mapper on every event whether the owner is namespaced:
// job kinds are namespaced, and the lookup on every child event was a
// visible share of the operator's CPU and allocations.
//
// With delay > 0 the job is enqueued that much later, so that the children
// of a job changing together (pods starting, finishing, being created) cost
// one pass: an item waiting in the queue is not added twice. The children
// listed when the operator starts are enqueued at once: handler.Funcs gives
// them the priority queue's low priority (a delayed add would lose it), so
// that after a restart the jobs created meanwhile are not queued behind
// every finished job of the cluster.
func enqueueController(gk schema.GroupKind, delay time.Duration) handler.EventHandler {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], delay time.Duration, objs ...client.Object) {
		for _, o := range objs {
			if req, ok := controllerOf(gk, o); ok {
				if delay > 0 {
					q.AddAfter(req, delay)
				} else {
					q.Add(req)
				}
			}
		}
	}
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		enqueue(q, delay, objs...)
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e ctrlevent.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.IsInInitialList {
				enqueue(q, 0, e.Object)
				return
			}
			add(q, e.Object)
		},
		// Both sides: a child whose controller changed concerns both jobs.
		UpdateFunc: func(_ context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil {
				// At once: a pass must see a pod terminating to count it as
				// a restart; batched, it may find it gone and only replace it.
				enqueue(q, 0, e.ObjectOld, e.ObjectNew)
				return
			}
			if urgent(e.ObjectOld, e.ObjectNew) {
				enqueue(q, 0, e.ObjectOld, e.ObjectNew)
				return
			}
			add(q, e.ObjectOld, e.ObjectNew)
		},
		// At once, as its terminating update: deletions are rare and the
		// replacement should not wait.
		DeleteFunc: func(_ context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, 0, e.Object)
		},
		GenericFunc: func(_ context.Context, e ctrlevent.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
	}
}

// urgent are the pod updates a whole-job restart waits on, taken at once
// rather than batched: a failure of a pod of a job with a failure policy
// (every rank of the job hangs until the restart), and the confirmed
// deletion of a pod that carries the tracking finalizer (its successor
// waits for the name). make bench's restart-policy had a child-event delay
// on each step of the restart.
func urgent(before, after client.Object) bool {
	b, ok1 := before.(*corev1.Pod)
	a, ok2 := after.(*corev1.Pod)
	if !ok1 || !ok2 {
		return false
	}
	if _, ok := a.Labels[kubeflowv1.RestartAttemptLabel]; ok && a.Status.Phase == corev1.PodFailed && b.Status.Phase != corev1.PodFailed {
		return true
	}
	return hasTrackingFinalizer(a) && !deletionConfirmed(b) && deletionConfirmed(a)
}
