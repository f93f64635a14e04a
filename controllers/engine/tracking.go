package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Failure accounting that survives the operator, as batch/v1 Job tracks
// its pods: the pods of a job whose failures decide its outcome (tracked:
// backoffLimit or failurePolicy set) carry kubeflowv1.PodTrackingFinalizer
// from their creation. A pod that fails, or that someone else deletes or
// evicts, stays (terminating) until a pass has counted it in status
// (restartCount with countedPods, or a whole-job restart) and the status
// write has succeeded; only then is the finalizer removed. So a deletion
// while the operator is down, during a failover or while the watch is
// broken is seen by the next pass, and a failure counted before a crash
// is in status.countedPods after it and not counted again.
//
// The finalizer goes once nothing is left to count: a pod counted,
// succeeded, of an older attempt, of a finished or suspended job, or of a
// job that is gone (podTracking, below). Jobs without backoffLimit or
// failurePolicy are not tracked: their restartCount changes nothing, and
// tracking costs a request per pod.

// tracked reports whether job's pods carry the tracking finalizer. With
// tracking off, none do: failures are counted from the pods seen, as in v1,
// and the finalizer goes from the pods that have it.
func (fw *adapter[J]) tracked(rp *kubeflowv1.RunPolicy) bool {
	return !fw.noTracking && (rp.BackoffLimit != nil || rp.FailurePolicy != nil)
}

func hasTrackingFinalizer(o metav1.Object) bool {
	return slices.Contains(o.GetFinalizers(), kubeflowv1.PodTrackingFinalizer)
}

// releasePatch removes the tracking finalizer and nothing else (a
// strategic merge patch on the finalizer list, so other finalizers and
// concurrent writers are untouched).
var releasePatch = client.RawPatch(types.StrategicMergePatchType,
	[]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["`+kubeflowv1.PodTrackingFinalizer+`"]}}`))

// trackPatch adds the tracking finalizer to a pod made before the job was
// tracked (by v1, or by an earlier operator version).
var trackPatch = client.RawPatch(types.StrategicMergePatchType,
	[]byte(`{"metadata":{"finalizers":["`+kubeflowv1.PodTrackingFinalizer+`"]}}`))

// releasePods removes the tracking finalizer of pods, each once: the
// cache may show a released pod with it for a while, and each pass would
// PATCH it again.
func (r *Reconciler[J]) releasePods(ctx context.Context, job client.Object, pods []*corev1.Pod) error {
	j := r.jobRef(job)
	todo := pods[:0:0]
	for _, p := range pods {
		if !r.memory.IsReleased(j, p.UID) {
			todo = append(todo, p)
		}
	}
	err := patchPods(ctx, r.client, r.opts.Fanout, todo, releasePatch, func(p *corev1.Pod) { r.memory.MarkReleased(j, p.UID) })
	return err
}

// patchPods applies patch to pods in parallel, asking for metadata only;
// done, if set, is called for each pod patched or already gone.
func patchPods(ctx context.Context, c client.Client, fanout int, pods []*corev1.Pod, patch client.Patch, done func(*corev1.Pod)) error {
	if len(pods) == 0 {
		return nil
	}
	var mu sync.Mutex
	var errs []error
	workqueue.ParallelizeUntil(ctx, fanout, len(pods), func(i int) {
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		meta.SetNamespace(pods[i].Namespace)
		meta.SetName(pods[i].Name)
		if err := c.Patch(ctx, meta, patch); err != nil && !apierrors.IsNotFound(err) {
			mu.Lock()
			errs = append(errs, fmt.Errorf("pod %s: %w", pods[i].Name, err))
			mu.Unlock()
			return
		}
		if done != nil {
			done(pods[i])
		}
	})
	return errors.Join(errs...)
}

// withFinalizer keeps the pods that still carry the tracking finalizer,
// once each.
func withFinalizer(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	seen := map[types.UID]bool{}
	for _, p := range pods {
		if p != nil && hasTrackingFinalizer(p) && !seen[p.UID] {
			seen[p.UID] = true
			out = append(out, p)
		}
	}
	return out
}

// untrackedLive are the live pods of a tracked job without the finalizer.
func untrackedLive(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && !hasTrackingFinalizer(p) &&
			p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// releasable are the pods whose tracking finalizer may go once the pass's
// status is written, and the live pods of a tracked job still without it.
// A pod that is replaced (counted, or of an older attempt) keeps it until
// its deletion is confirmed (deletionConfirmed), so its name is not free
// for its successor while the pod may still be deleted by name. Releasing
// it just before its delete instead costs a pass per pod leaving for
// little time saved (make bench restart-policy-128; see the README).
func (r *Reconciler[J]) releasable(job J, st *kubeflowv1.JobStatus, ch children) releases {
	rp := r.fw.RunPolicy(job)
	if IsFinished(st) || (rp.Suspend != nil && *rp.Suspend) || !r.fw.tracked(rp) {
		return releases{release: withFinalizer(ch.allPods)}
	}
	var release, track []*corev1.Pod
	old, oldReleased := 0, 0
	counted := countedSet(st.CountedPods)
	tolerance := r.fw.tolerance
	for _, pod := range ch.allPods {
		if !hasTrackingFinalizer(pod) {
			continue
		}
		tolerated := false
		if tolerance != nil && pod.Status.Phase == corev1.PodFailed {
			if rt, ok := replicaTypeOf(r.fw.ReplicaTypes(job), job.ReplicaSpecs(), pod); ok {
				tolerated = tolerance.ToleratesFailure(job, rt)
			}
		}
		isOld := rp.FailurePolicy != nil && attemptOf(pod) != st.Attempt()
		replaced := isOld || counted[string(pod.UID)]
		if isOld {
			old++
		}
		// A succeeded pod of a job with a failure policy is held until the job
		// finishes (or the pod's attempt is replaced): were it deleted and
		// gone, its slot would be filled again within the attempt, running a
		// finished rank alone (make chaos: two pods in one attempt).
		doneForGood := pod.Status.Phase == corev1.PodSucceeded && rp.FailurePolicy == nil
		// A pod the suspension ended has nothing to count (suspension.go).
		if (replaced && deletionConfirmed(pod)) || doneForGood || tolerated || endedBySuspension(pod) {
			release = append(release, pod)
			if isOld {
				oldReleased++
			}
		}
	}
	for _, pod := range untrackedLive(ch.allPods) {
		if rp.FailurePolicy == nil || attemptOf(pod) == st.Attempt() {
			track = append(track, pod)
		}
	}
	return releases{release: release, track: track, releasedOld: old > 0 && oldReleased == old}
}

// deletionConfirmed reports a pod deleted with no grace period left: the
// kubelet's (or KWOK's) final delete, after the containers stopped, or a
// forced delete. Until then a replaced pod keeps its finalizer: the pod
// object stays until its kubelet is done in any case, and the local
// cluster's KWOK, which deletes pods by name, once killed the successor
// that had taken a pod's name between two of its deletes.
func deletionConfirmed(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
}

// podTracking releases the tracking finalizer of pods whose job can no
// longer count them: the job was deleted (the garbage collector deletes its
// pods), is being deleted, or its name now belongs to a new job. A job
// that exists counts and releases its own pods.
type podTracking[J Job[J]] struct {
	r *Reconciler[J]
}

// setupPodTracking registers the pod-tracking controller of r's kind (gk),
// fed by children.
func (r *Reconciler[J]) setupPodTracking(mgr ctrl.Manager, children *ChildEvents, gk schema.GroupKind) error {
	pt := &podTracking[J]{r: r}
	kind := r.fw.Kind()
	// Only pods of a job that cannot release them: otherwise every pod of a
	// restart costs passes here while the job releases them itself.
	mine := func(o client.Object) bool {
		ref := metav1.GetControllerOfNoCopy(o)
		return ref != nil && ref.Kind == kind && hasTrackingFinalizer(o) && o.GetDeletionTimestamp() != nil &&
			pt.orphaned(o.GetNamespace(), ref)
	}
	// A job deleted (or being deleted) after its pods' last event: their
	// requests come from the job's own event.
	jobGone := handler.Funcs{
		UpdateFunc: func(_ context.Context, e ctrlevent.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil {
				pt.enqueuePods(e.ObjectNew, q)
			}
		},
		DeleteFunc: func(_ context.Context, e ctrlevent.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			pt.enqueuePods(e.Object, q)
		},
	}
	pods, err := children.Source(childPods, &corev1.Pod{}, gk, &handler.EnqueueRequestForObject{}, predicate.Funcs{
		CreateFunc:  func(e ctrlevent.CreateEvent) bool { return mine(e.Object) },
		UpdateFunc:  func(e ctrlevent.UpdateEvent) bool { return mine(e.ObjectNew) },
		DeleteFunc:  func(ctrlevent.DeleteEvent) bool { return false },
		GenericFunc: func(e ctrlevent.GenericEvent) bool { return mine(e.Object) },
	})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.fw.ControllerName()+"-pod-tracking").
		WatchesRawSource(pods).
		Watches(r.fw.NewJob(), jobGone).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles}).
		Complete(pt)
}

// orphaned reports whether the job ref names is gone from the cache,
// replaced by a new job of its name, or being deleted.
func (pt *podTracking[J]) orphaned(ns string, ref *metav1.OwnerReference) bool {
	job := pt.r.fw.NewJob()
	err := pt.r.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: ref.Name}, job, client.UnsafeDisableDeepCopy)
	if err != nil {
		return true // NotFound; any other error: the pass finds out
	}
	return job.GetUID() != ref.UID || job.GetDeletionTimestamp() != nil
}

// enqueuePods asks for the job's pods that carry the finalizer.
func (pt *podTracking[J]) enqueuePods(job client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var pl corev1.PodList
	if err := pt.r.client.List(context.Background(), &pl, client.InNamespace(job.GetNamespace()),
		client.MatchingFields{ControllerUIDIndex: string(job.GetUID())}, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range pl.Items {
		if hasTrackingFinalizer(&pl.Items[i]) {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pl.Items[i])})
		}
	}
}

func (pt *podTracking[J]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r := pt.r
	pod := &corev1.Pod{}
	if err := r.client.Get(ctx, req.NamespacedName, pod, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || !hasTrackingFinalizer(pod) || pod.DeletionTimestamp == nil {
		return ctrl.Result{}, nil
	}
	job := r.fw.NewJob()
	err := r.client.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}, job, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, err
	case job.GetUID() == ref.UID && job.GetDeletionTimestamp() == nil:
		// The job counts and releases its own pods.
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, patchPods(ctx, r.client, 1, []*corev1.Pod{pod}, releasePatch, nil)
}
