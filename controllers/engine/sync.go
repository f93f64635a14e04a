package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// ControllerUIDIndex indexes pods and Services by their controller owner's
// UID, so a new job that reuses a deleted job's name never adopts its children.
const ControllerUIDIndex = ".metadata.controllerUID"

// SetupIndexes registers the engine's field indexes; call once per manager.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	index := func(o client.Object) []string {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.APIVersion != kubeflowv1.GroupVersion.String() {
			return nil
		}
		return []string{string(ref.UID)}
	}
	for _, obj := range []client.Object{&corev1.Pod{}, NewServiceMeta()} {
		if err := indexer.IndexField(ctx, obj, ControllerUIDIndex, index); err != nil {
			return err
		}
	}
	return nil
}

// listChildren reads the job's pods and Services from the cache by owner UID.
// They are the cache's own objects, not copies (a 1000-replica job was
// deep-copied on every pass): the engine only reads them, and builds new
// objects for anything it writes.
func (r *Reconciler) listChildren(ctx context.Context, job client.Object) ([]*corev1.Pod, []*metav1.PartialObjectMetadata, error) {
	opts := []client.ListOption{client.InNamespace(job.GetNamespace()), client.MatchingFields{ControllerUIDIndex: string(job.GetUID())},
		client.UnsafeDisableDeepCopy}
	var pl corev1.PodList
	if err := r.client.List(ctx, &pl, opts...); err != nil {
		return nil, nil, err
	}
	var sl metav1.PartialObjectMetadataList
	sl.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
	if err := r.client.List(ctx, &sl, opts...); err != nil {
		return nil, nil, err
	}
	pods := make([]*corev1.Pod, 0, len(pl.Items))
	for i := range pl.Items {
		pods = append(pods, &pl.Items[i])
	}
	svcs := make([]*metav1.PartialObjectMetadata, 0, len(sl.Items))
	for i := range sl.Items {
		svcs = append(svcs, &sl.Items[i])
	}
	return pods, svcs, nil
}

func (r *Reconciler) needsServices() bool {
	if sl, ok := r.fw.(ServiceLess); ok {
		return sl.NeedsServices()
	}
	return true
}

// syncReplicas creates missing pods and Services by index and deletes the
// ones past the spec (scale down), in bounded parallel fan-out: all of a
// job's missing children in one batch, or one batch per replica type in the
// framework's order for frameworks that need it (OrderedCreation).
func (r *Reconciler) syncReplicas(ctx context.Context, job client.Object, ch children, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, p *plan, now metav1.Time, gang GangScheduler) error {
	ordered := false
	if oc, ok := r.fw.(OrderedCreation); ok {
		ordered = oc.CreateInOrder()
	}
	var conflicts []string
	var created createdChildren
	// One event per kind of child per pass, not one per object: a 1000-worker
	// job would otherwise spend as many requests on events as on pods.
	defer created.emit(r.recorder, job)
	var batch []client.Object
	// The template is the same for every index: warn once per type and pass.
	var warnings []event
	flush := func() error {
		c, err := r.createChildren(ctx, job, batch, &created)
		if created.madePods {
			for _, w := range warnings {
				r.recorder.Event(job, w.eventType, w.reason, w.message)
			}
		}
		batch, warnings, created.madePods = nil, nil, false
		conflicts = append(conflicts, c...)
		return err
	}
	for _, rt := range r.fw.ReplicaTypes(job) {
		creates, typeWarnings, err := r.missingChildren(job, ch, rt, specs[rt], p, now, gang)
		if err != nil {
			return err
		}
		batch = append(batch, creates...)
		warnings = append(warnings, typeWarnings...)
		if !ordered {
			continue
		}
		if err := flush(); err != nil {
			// Later types wait (MPI's launcher needs its workers); retried with backoff.
			r.recordConflicts(job, p, conflicts, now)
			return err
		}
	}
	if err := flush(); err != nil {
		r.recordConflicts(job, p, conflicts, now)
		return err
	}
	r.recordConflicts(job, p, conflicts, now)

	if err := r.deletePods(ctx, job, ch.strayPods); err != nil {
		return err
	}
	return r.deleteServices(ctx, job, ch.strayServices)
}

// adoptUnindexed gives v1's MPI launcher, which has no replica-index label
// and is found by name, the label. It is no creation: a pass that finishes
// the job (v1's launcher completed while no operator ran) does it too.
func (r *Reconciler) adoptUnindexed(ctx context.Context, ch children) error {
	for _, o := range ch.unindexed {
		if err := r.adopt(ctx, o, map[string]string{kubeflowv1.ReplicaIndexLabel: "0"}); err != nil {
			return fmt.Errorf("adopting %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// missingChildren builds the pods and Services of one replica type that
// neither exist nor are being created, and the template warnings to record
// once they are.
func (r *Reconciler) missingChildren(job client.Object, ch children, rt kubeflowv1.ReplicaType, spec *kubeflowv1.ReplicaSpec, p *plan, now metav1.Time, gang GangScheduler) ([]client.Object, []event, error) {
	j := r.jobRef(job)
	var creates []client.Object
	var restartWarning, schedulerWarning string
	for i := 0; i < int(spec.ReplicaCount()); i++ {
		name := childName(r.fw, job, rt, i)
		if r.needsServices() {
			if _, ok := ch.services[rt][i]; ok {
				r.memory.Observed(j, "svc/"+name)
			} else if !r.memory.IsCreating(j, "svc/"+name) {
				creates = append(creates, BuildService(r.fw, job, rt, i, spec))
			}
		}
		if _, ok := ch.pods[rt][i]; ok {
			r.memory.Observed(j, "pod/"+name)
			continue
		}
		if left, ok := r.memory.Creating(j, "pod/"+name); ok {
			// Created, not seen yet. A pod normally shows within moments; one
			// deleted before the cache ever showed it (its events lost while a
			// watch was broken: chaos had a job wait forever so) brings the job
			// back by no event: look again once the record expires.
			if left < inflightTTL-unseenCreate {
				p.requeue(left + time.Second)
			}
			continue
		}
		pod, ov, err := BuildPod(r.fw, job, rt, i, spec)
		if err != nil {
			return nil, nil, fmt.Errorf("building pod %s: %w", name, err)
		}
		if ov {
			restartWarning = "Restart policy in pod template will be overwritten by restart policy in replica spec"
		}
		if gang != nil {
			if w := gang.DecoratePod(job, r.fw, rt, pod); w != "" {
				schedulerWarning = w
			}
		}
		creates = append(creates, pod)
	}
	var warnings []event
	if restartWarning != "" {
		warnings = append(warnings, event{corev1.EventTypeWarning, "SetPodTemplateRestartPolicy", restartWarning})
	}
	if schedulerWarning != "" {
		warnings = append(warnings, event{corev1.EventTypeWarning, "SetPodTemplateSchedulerName", schedulerWarning})
	}
	return creates, warnings, nil
}

// unseenCreate is how long a created pod may stay unseen by the cache
// before its job looks again when the in-flight record expires.
const unseenCreate = 5 * time.Second

// createdChildren collects what one pass created, for its events.
type createdChildren struct {
	mu       sync.Mutex
	pods     []string
	services []string
	// madePods says the last batch created at least one pod.
	madePods bool
}

func (c *createdChildren) add(obj client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, isPod := obj.(*corev1.Pod); isPod {
		c.pods = append(c.pods, obj.GetName())
		c.madePods = true
		return
	}
	c.services = append(c.services, obj.GetName())
}

// emit records v1's SuccessfulCreatePod/SuccessfulCreateService reasons with
// v1's message for a single object ("Created pod: x") and the list otherwise.
func (c *createdChildren) emit(rec EventRecorder, job client.Object) {
	for _, e := range []struct {
		reason, noun string
		names        []string
	}{{"SuccessfulCreatePod", "pod", c.pods}, {"SuccessfulCreateService", "service", c.services}} {
		switch len(e.names) {
		case 0:
		case 1:
			rec.Event(job, corev1.EventTypeNormal, e.reason, fmt.Sprintf("Created %s: %s", e.noun, e.names[0]))
		default:
			sort.Strings(e.names)
			rec.Event(job, corev1.EventTypeNormal, e.reason, fmt.Sprintf("Created %d %ss: %s", len(e.names), e.noun, joinNames(e.names)))
		}
	}
}

// joinNames lists names, eliding the middle of very long lists so the event
// stays readable (and under the API's message size limit).
func joinNames(names []string) string {
	const keep = 10
	if len(names) <= 2*keep {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, ... (%d more), %s", strings.Join(names[:keep], ", "), len(names)-2*keep, strings.Join(names[len(names)-keep:], ", "))
}

// createChildren creates objects in parallel. It returns the names held by
// objects this job does not own, and the other creation errors joined.
func (r *Reconciler) createChildren(ctx context.Context, job client.Object, objs []client.Object, created *createdChildren) ([]string, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	var mu sync.Mutex
	var conflicts []string
	var errs []error
	failed, failedCount := map[string]error{}, map[string]int{}
	workqueue.ParallelizeUntil(ctx, r.opts.Fanout, len(objs), func(i int) {
		obj := objs[i]
		_, isPod := obj.(*corev1.Pod)
		what, prefix := "Service", "svc/"
		if isPod {
			what, prefix = "Pod", "pod/"
		}
		err := r.client.Create(ctx, obj)
		switch {
		case err == nil:
			r.memory.MarkCreated(r.jobRef(job), prefix+obj.GetName())
			created.add(obj)
		case apierrors.IsAlreadyExists(err):
			// The cache lags, or the name belongs to someone else: ask the API.
			existing := emptyLike(obj)
			if gerr := r.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); gerr != nil {
				// Deleted meanwhile: the next pass creates it. Anything else
				// must fail the pass, so it is retried with backoff.
				if !apierrors.IsNotFound(gerr) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("reading %s %s after AlreadyExists: %w", lower(what), obj.GetName(), gerr))
					mu.Unlock()
				}
				return
			}
			if ref := metav1.GetControllerOf(existing); ref != nil && ref.UID == job.GetUID() {
				// Ours: either the cache lags our create, or it is the previous
				// incarnation still terminating (its deletion event brings us
				// back), or it was made without the labels our cache selects
				// on, and adopting it lets the cache see it.
				if existing.GetDeletionTimestamp() == nil {
					if err := r.adopt(ctx, existing, obj.GetLabels()); err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("adopting %s %s: %w", lower(what), obj.GetName(), err))
						mu.Unlock()
						return
					}
					r.memory.MarkCreated(r.jobRef(job), prefix+obj.GetName())
				}
				return
			}
			mu.Lock()
			conflicts = append(conflicts, fmt.Sprintf("%s %s", lower(what), obj.GetName()))
			mu.Unlock()
		default:
			mu.Lock()
			if failed[what] == nil {
				failed[what] = err
			}
			failedCount[what]++
			errs = append(errs, fmt.Errorf("creating %s %s: %w", lower(what), obj.GetName(), err))
			mu.Unlock()
		}
	})
	// A quota or admission denial fails every object alike: one event each way.
	for _, what := range []string{"Pod", "Service"} {
		if err := failed[what]; err != nil {
			msg := "Error creating: " + err.Error()
			if n := failedCount[what]; n > 1 {
				msg = fmt.Sprintf("Error creating %d %ss, first: %v", n, lower(what), err)
			}
			r.recorder.Event(job, corev1.EventTypeWarning, "FailedCreate"+what, msg)
		}
	}
	return conflicts, errors.Join(errs...)
}

func lower(s string) string {
	if s == "Pod" {
		return "pod"
	}
	return "service"
}

// recordConflicts turns child-name collisions into a condition and an event
// and a slow requeue, never a hot loop; the condition goes once resolved.
func (r *Reconciler) recordConflicts(job client.Object, p *plan, conflicts []string, now metav1.Time) {
	st := &p.status
	if len(conflicts) == 0 {
		removeCondition(st, ConditionChildConflict)
		return
	}
	msg := fmt.Sprintf("%s %s cannot create its children: %v already exist and are owned by another object; delete them or rename the job",
		r.fw.Kind(), job.GetName(), conflicts)
	cur := getCondition(st, ConditionChildConflict)
	if cur == nil || cur.Status != corev1.ConditionTrue {
		p.event(corev1.EventTypeWarning, "ErrResourceExists", "%s", msg)
	}
	if cur != nil && cur.Status == corev1.ConditionTrue {
		cur.Message = msg
	} else {
		setCondition(st, newCondition(ConditionChildConflict, corev1.ConditionTrue, "ChildNameConflict", msg, now))
	}
	p.requeue(conflictRetry)
}

// cleanup applies a cleanPodPolicy. While the job is not finished (suspend)
// every pod and Service goes, whatever the policy.
func (r *Reconciler) cleanup(ctx context.Context, job client.Object, ch children, policy kubeflowv1.CleanPodPolicy, finished bool) error {
	if finished && (policy == kubeflowv1.CleanPodPolicyNone || policy == kubeflowv1.CleanPodPolicyUndefined) {
		return nil
	}
	var pods []*corev1.Pod
	names := map[string]bool{}
	for _, pod := range ch.allPods {
		if finished && policy == kubeflowv1.CleanPodPolicyRunning &&
			pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodPending {
			continue
		}
		pods = append(pods, pod)
		names[pod.Name] = true
	}
	var svcs []*metav1.PartialObjectMetadata
	for _, s := range ch.allServices {
		if !finished || policy == kubeflowv1.CleanPodPolicyAll || names[s.Name] {
			svcs = append(svcs, s)
		}
	}
	return errors.Join(r.deletePods(ctx, job, pods), r.deleteServices(ctx, job, svcs))
}

func (r *Reconciler) deletePods(ctx context.Context, job client.Object, pods []*corev1.Pod) error {
	objs := make([]client.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p)
	}
	return r.deleteChildren(ctx, job, objs, "Pod")
}

func (r *Reconciler) deleteServices(ctx context.Context, job client.Object, svcs []*metav1.PartialObjectMetadata) error {
	objs := make([]client.Object, 0, len(svcs))
	for _, s := range svcs {
		objs = append(objs, s)
	}
	return r.deleteChildren(ctx, job, objs, "Service")
}

// deleteChildren deletes in parallel, skipping what is already going away.
// The UID precondition protects a same-named replacement.
func (r *Reconciler) deleteChildren(ctx context.Context, job client.Object, objs []client.Object, what string) error {
	todo := objs[:0:0]
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil || r.memory.IsDeleting(r.jobRef(job), o.GetUID()) {
			continue
		}
		todo = append(todo, o)
	}
	if len(todo) == 0 {
		return nil
	}
	var mu sync.Mutex
	var errs []error
	var deleted []string
	workqueue.ParallelizeUntil(ctx, r.opts.Fanout, len(todo), func(i int) {
		o := todo[i]
		uid := o.GetUID()
		err := r.client.Delete(ctx, o, client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		r.memory.MarkDeleted(r.jobRef(job), uid)
		if err == nil {
			mu.Lock()
			deleted = append(deleted, o.GetName())
			mu.Unlock()
		}
	})
	// One event per outcome and call, as for creates.
	switch noun := lower(what); len(deleted) {
	case 0:
	case 1:
		r.recorder.Event(job, corev1.EventTypeNormal, "SuccessfulDelete"+what, fmt.Sprintf("Deleted %s: %s", noun, deleted[0]))
	default:
		sort.Strings(deleted)
		r.recorder.Event(job, corev1.EventTypeNormal, "SuccessfulDelete"+what, fmt.Sprintf("Deleted %d %ss: %s", len(deleted), noun, joinNames(deleted)))
	}
	if err := errors.Join(errs...); err != nil {
		r.recorder.Event(job, corev1.EventTypeWarning, "FailedDelete"+what, err.Error())
		return err
	}
	return nil
}

// adopt adds the labels want to a child the job controls that lacks some of
// them (made by v1), so the label-filtered cache holds it from then on and
// it is bucketed like the children we make.
func (r *Reconciler) adopt(ctx context.Context, obj client.Object, want map[string]string) error {
	updated := obj.DeepCopyObject().(client.Object)
	if !addLabels(updated, want) {
		return nil
	}
	return client.IgnoreNotFound(r.client.Patch(ctx, updated, client.MergeFrom(obj)))
}
