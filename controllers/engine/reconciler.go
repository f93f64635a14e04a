package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Options tune one framework's controller.
type Options struct {
	// MaxConcurrentReconciles is how many jobs of this kind reconcile at once.
	MaxConcurrentReconciles int
	// Fanout bounds parallel child creates and deletes within one job.
	Fanout int
	// Clock is injectable for tests.
	Clock clock.Clock
	// StatusBatchWindow bounds how long status changes without a transition
	// (replica counts) wait to be written together; 0 means
	// DefaultStatusBatchWindow, negative writes every change at once.
	StatusBatchWindow time.Duration
	// ChildEventDelay is how long a child's event waits before its job's
	// pass, to take the job's other children changing meanwhile along; 0
	// means DefaultChildEventDelay, negative no wait.
	ChildEventDelay time.Duration
	// Gang selects the gang-scheduling backend per job; nil disables it.
	Gang GangSelector
	// Memory is what the engine remembers per job (JobMemory); nil means a
	// memory of this controller's own. Sharing it with the gang scheduler
	// frees the gang's records with the job.
	Memory *JobMemory
	// OnController, if set, receives the built controller so that callers can
	// add watches later (the gang scheduler watches PodGroups once their API
	// is served).
	OnController func(controller.Controller) error
}

// DefaultChildEventDelay batches the events of a job's children: KWOK and
// kubelets move a job's pods through their phases within moments of each
// other, and make bench counted a pass per pod without it. It delays no pod
// creation: a new job's pass is not a child's event.
const DefaultChildEventDelay = time.Second

// EventRecorder is the slice of an event recorder the engine needs; it keeps
// the engine independent of the events API flavour.
type EventRecorder interface {
	Event(obj runtime.Object, eventType, reason, message string)
}

// Reconciler is the generic job controller, one instance per framework.
type Reconciler struct {
	fw        Framework
	client    client.Client
	apiReader client.Reader
	recorder  EventRecorder
	clock     clock.Clock
	opts      Options
	memory    *JobMemory
	written   lastWrites
	holds     statusHolds
	external  externalJobs
	podMemos  podMemos
	vanished  vanishedPods
	// started is when this reconciler was built: jobs created before it may
	// have pod events a previous operator process recorded.
	started time.Time
}

// NewReconciler builds the engine for one framework.
func NewReconciler(fw Framework, c client.Client, apiReader client.Reader, rec EventRecorder, opts Options) *Reconciler {
	if opts.MaxConcurrentReconciles < 1 {
		opts.MaxConcurrentReconciles = 1
	}
	if opts.Fanout < 1 {
		// make bench: a 1000-replica job's pods and Services were created
		// 21% faster with 32 creates in flight than with 16.
		opts.Fanout = 32
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.StatusBatchWindow == 0 {
		opts.StatusBatchWindow = DefaultStatusBatchWindow
	}
	if opts.ChildEventDelay == 0 {
		opts.ChildEventDelay = DefaultChildEventDelay
	}
	if opts.Memory == nil {
		opts.Memory = NewJobMemory(opts.Clock)
	}
	registerMetrics()
	mem := kindMemory{opts.Memory, fw.Kind()}
	return &Reconciler{fw: fw, client: c, apiReader: apiReader, recorder: rec, clock: opts.Clock, opts: opts, memory: opts.Memory,
		written: lastWrites{mem}, holds: statusHolds{mem}, external: externalJobs{mem}, podMemos: podMemos{mem}, vanished: vanishedPods{mem},
		started: opts.Clock.Now()}
}

// SetupWithManager registers the controller. Call SetupIndexes once per manager first.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	gvk, err := apiutil.GVKForObject(r.fw.NewJob(), mgr.GetScheme())
	if err != nil {
		return err
	}
	owner := enqueueController(gvk.GroupKind(), r.opts.ChildEventDelay)
	mine := ownedBy(gvk.GroupKind())
	b := ctrl.NewControllerManagedBy(mgr).
		For(r.fw.NewJob(), builder.WithPredicates(r.jobGone(), r.notOwnEcho())).
		Named(r.fw.ControllerName()).
		Watches(&corev1.Pod{}, owner, builder.WithPredicates(mine, r.goneFromCache("pod/"), r.podLeft(), podChanged())).
		Watches(NewServiceMeta(), owner, builder.WithPredicates(mine, r.goneFromCache("svc/"), metaChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles})
	for _, t := range extraTypes(r.fw) {
		b = b.Watches(t.Object, owner, builder.WithPredicates(mine, r.goneFromCache(strings.ToLower(kindOf(t.Object))+"/")))
	}
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	if err := r.setupPodTracking(mgr); err != nil {
		return err
	}
	if r.opts.OnController == nil {
		return nil
	}
	return r.opts.OnController(c)
}

// goneFromCache ends the in-flight record of a child we created when the
// cache shows its deletion, not at the job's next reconcile: under a backlog
// that reconcile may come after the child is already gone again (deleted by
// a user or evicted), and the stale record would then hold back its
// re-creation until inflightTTL. Its appearance is left to the reconcile
// that lists it: ending the record then could race a pass whose list was
// taken just before, which would create the child a second time (409s seen
// by make bench on a 1000-replica job). It never filters events.
func (r *Reconciler) goneFromCache(prefix string) predicate.Funcs {
	gone := func(o client.Object) bool {
		if ref := metav1.GetControllerOf(o); ref != nil {
			r.memory.Observed(JobRef{Kind: ref.Kind, NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}, UID: ref.UID}, prefix+o.GetName())
		}
		return true
	}
	return predicate.Funcs{
		DeleteFunc: func(e ctrlevent.DeleteEvent) bool { return gone(e.Object) },
	}
}

// jobRef names a job of this controller in the memory.
func (r *Reconciler) jobRef(job client.Object) JobRef { return JobRefOf(r.fw.Kind(), job) }

// jobGone drops a deleted job's record on its delete event. The
// NotFound of the reconcile that follows does too; this covers a job whose
// name is reused before that reconcile runs. It never filters events.
func (r *Reconciler) jobGone() predicate.Funcs {
	return predicate.Funcs{
		DeleteFunc: func(e ctrlevent.DeleteEvent) bool {
			r.memory.Forget(r.jobRef(e.Object))
			return true
		},
	}
}

// notOwnEcho drops the update event of a job version our own status write
// made (lastWrites.isEcho): make bench counted one such pass per status
// write, each re-reading the job and its children to find nothing to do.
func (r *Reconciler) notOwnEcho() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e ctrlevent.UpdateEvent) bool { return !r.written.isEcho(e.ObjectNew) },
	}
}

// plan collects what one reconcile decided; status is written once, then
// events, metrics and retry deletions follow.
type plan struct {
	status       kubeflowv1.JobStatus
	events       []event
	requeueAfter time.Duration
	retryDeletes []*corev1.Pod
	jobDeleted   bool
	pods         podReport
	// vanished are the vanishedPods entries the pass dealt with, counted the
	// pods whose restart it counted: settled once the status is written.
	vanished, counted []types.UID
	// release are pods whose tracking finalizer goes once the status is
	// written (nothing left to count of them); track are live pods of a
	// tracked job that lack it (made before the job was tracked).
	release, track []*corev1.Pod
	// policyAction is the failure policy's decision in this pass, if any;
	// restartTook is how long a whole-job restart took, once its new
	// attempt runs.
	policyAction string
	restartTook  time.Duration
	// releasedOld says the pass releases the last held pods of an older
	// attempt, after which the new attempt may be created.
	releasedOld bool
	// stale says the job's status is older than its pods: nothing is done.
	stale bool
	// transitions, for metrics
	created, running, succeeded, failed, restarted bool
}

type event struct {
	eventType, reason, message string
}

func (p *plan) event(eventType, reason, format string, args ...any) {
	p.events = append(p.events, event{eventType, reason, fmt.Sprintf(format, args...)})
}

func (p *plan) requeue(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if p.requeueAfter == 0 || d < p.requeueAfter {
		p.requeueAfter = d
	}
}

// Reconcile is thin: read, skip what is not ours, plan, write status once, then side effects.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cached := r.fw.NewJob()
	// cached is only read: the pass plans on the one deep copy made below,
	// so the cache's own copy is not duplicated first.
	if err := r.client.Get(ctx, req.NamespacedName, cached, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			r.memory.Forget(JobRef{Kind: r.fw.Kind(), NamespacedName: req.NamespacedName})
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cached = r.written.freshest(cached)
	logger := log.FromContext(ctx).WithValues("uid", cached.GetUID())
	ctx = log.IntoContext(ctx, logger)
	if cached.GetDeletionTimestamp() != nil {
		r.memory.Forget(r.jobRef(cached))
		return ctrl.Result{}, nil
	}
	if mb := r.fw.RunPolicy(cached).ManagedBy; mb != nil && *mb != kubeflowv1.KubeflowJobsController {
		logger.V(3).Info("skipping job managed by another controller", "managedBy", *mb)
		// v1 counts every job created, whoever manages it.
		if r.external.first(req.NamespacedName, cached.GetUID()) {
			jobsCreated.WithLabelValues(cached.GetNamespace(), r.fw.MetricsLabel()).Inc()
		}
		return ctrl.Result{}, nil
	}
	// Never mutate the cache: default and plan on a copy.
	job := cached.DeepCopyObject().(client.Object)
	r.fw.Default(job)
	p := &plan{status: *r.fw.Status(job).DeepCopy()}
	reconcileErr := r.reconcile(ctx, job, p)

	if !p.jobDeleted {
		delay, err := r.writeStatus(ctx, cached, &p.status)
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				// Someone else wrote the job meanwhile; its watch event brings us
				// back, and a short requeue covers a missed one.
				logger.V(2).Info("status write conflicted, requeueing", "err", err.Error())
				return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}
			return ctrl.Result{}, err
		}
		if delay > 0 {
			// Nothing was recorded, so this pass's transitions (if any) are
			// planned again by the pass that writes them; its pod writes rest
			// on what is written already.
			p.requeue(delay)
			if err := r.applyPodWrites(ctx, job, p); err != nil || reconcileErr != nil {
				return ctrl.Result{}, errors.Join(reconcileErr, err)
			}
			return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
		}
	}
	if rp := r.fw.RunPolicy(job); IsFinished(&p.status) || p.jobDeleted || (rp.Suspend != nil && *rp.Suspend) {
		// Pods leaving now are no restart.
		r.vanished.forget(req.NamespacedName, job.GetUID())
	} else {
		r.vanished.settle(req.NamespacedName, job.GetUID(), p.vanished, p.counted)
	}
	if err := r.afterStatus(ctx, job, p); err != nil || reconcileErr != nil {
		// A failed retry deletion is retried with backoff (its Warning event
		// is recorded by deletePods).
		return ctrl.Result{}, errors.Join(reconcileErr, err)
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// writeStatus patches the status subresource when it changed, or returns how
// long a change without news may wait (see statusDelay). The patch carries
// the resourceVersion so a stale cache can never overwrite newer status.
func (r *Reconciler) writeStatus(ctx context.Context, cached client.Object, st *kubeflowv1.JobStatus) (time.Duration, error) {
	cur := r.fw.Status(cached)
	if equality.Semantic.DeepEqual(cur, st) {
		r.holds.unhold(cached)
		return 0, nil
	}
	now := r.clock.Now()
	held := r.holds.hold(cached, now)
	if d := statusDelay(cur, st, held, now, r.opts.StatusBatchWindow); d > 0 {
		return d, nil
	}
	patch, stored, err := statusPatch(cached.GetResourceVersion(), cur, st)
	if err != nil {
		return 0, err
	}
	gvk, err := apiutil.GVKForObject(cached, r.client.Scheme())
	if err != nil {
		return 0, err
	}
	// The response is asked for as metadata only: the patch was locked to
	// cached's resourceVersion, so the job now is cached with the status
	// written and the response's metadata. make bench's profile had the
	// whole job's JSON decoding as a third of a status write's cost, and
	// the apiserver encoded it for nothing.
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	meta.SetNamespace(cached.GetNamespace())
	meta.SetName(cached.GetName())
	if err := r.client.Status().Patch(ctx, meta, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return 0, err
	}
	written := cached.DeepCopyObject().(client.Object)
	ws := r.fw.Status(written)
	*ws = kubeflowv1.JobStatus{}
	if err := json.Unmarshal(stored, ws); err != nil {
		return 0, err
	}
	written.SetResourceVersion(meta.GetResourceVersion())
	written.SetGeneration(meta.GetGeneration())
	r.written.remember(cached.GetResourceVersion(), written)
	return 0, nil
}

// statusPatch is the JSON merge patch from status cur to next, locked to the
// resourceVersion both were computed over. client.MergeFrom built the same
// patch by copying the job, serialising it twice whole and diffing generic
// maps of both: in make bench's CPU profile of a 500-job burst, status
// writes took 6.6% of the operator, most of it building the patch.
// It also returns next as stored (JSON: times in whole seconds).
func statusPatch(resourceVersion string, cur, next *kubeflowv1.JobStatus) (patch, stored []byte, err error) {
	from, err := json.Marshal(cur)
	if err != nil {
		return nil, nil, err
	}
	to, err := json.Marshal(next)
	if err != nil {
		return nil, nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, nil, err
	}
	var body statusPatchBody
	body.Metadata.ResourceVersion = resourceVersion
	body.Status = diff
	patch, err = json.Marshal(body)
	return patch, to, err
}

// statusPatchBody is a status merge patch with its optimistic lock.
type statusPatchBody struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Status json.RawMessage `json:"status"`
}

// afterStatus runs what must follow a durable status write: events for the
// transitions just recorded, metrics, and deleting pods whose retry was counted.
func (r *Reconciler) afterStatus(ctx context.Context, job client.Object, p *plan) error {
	r.recordPodEvents(job, p.pods)
	for _, e := range p.events {
		r.recorder.Event(job, e.eventType, e.reason, e.message)
	}
	ns, fwLabel := job.GetNamespace(), r.fw.MetricsLabel()
	if p.created {
		jobsCreated.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.running {
		jobStartupSeconds.WithLabelValues(ns, fwLabel).Observe(r.clock.Since(job.GetCreationTimestamp().Time).Seconds())
	}
	if p.restarted {
		jobsRestarted.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.succeeded {
		jobsSuccessful.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.failed {
		jobsFailed.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.jobDeleted {
		jobsDeleted.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.policyAction != "" {
		failurePolicyActions.WithLabelValues(fwLabel, p.policyAction).Inc()
	}
	if p.restartTook > 0 {
		jobRestartSeconds.WithLabelValues(fwLabel).Observe(p.restartTook.Seconds())
	}
	return r.applyPodWrites(ctx, job, p)
}

// applyPodWrites runs the pass's pod writes that must follow the status
// that counted them: finalizers released or added, pods deleted to be
// recreated (retries, and a whole-job restart's old attempt). When the
// status of a later pass is held (statusDelay: replica counts only), what
// they depend on is already written, so they run then too: holding them
// kept a restarting job's old pods 15 s (make bench, restart-policy).
func (r *Reconciler) applyPodWrites(ctx context.Context, job client.Object, p *plan) error {
	errs := []error{
		r.releasePods(ctx, job, p.release),
		patchPods(ctx, r.client, r.opts.Fanout, p.track, trackPatch, nil),
	}
	if len(p.retryDeletes) > 0 {
		errs = append(errs, r.deletePods(ctx, job, p.retryDeletes))
	}
	if p.releasedOld {
		// The last pods of the old attempt go with their finalizers: look
		// again soon for the new attempt rather than wait for their delete
		// events' batching.
		p.requeue(restartRecheck)
	}
	return errors.Join(errs...)
}

// reconcile is the linear recipe of one pass over a job.
func (r *Reconciler) reconcile(ctx context.Context, job client.Object, p *plan) error {
	now := metav1.NewTime(r.clock.Now())
	st := &p.status
	kind, name := r.fw.Kind(), job.GetName()
	specs := r.fw.ReplicaSpecs(job)
	rp := r.fw.RunPolicy(job)

	if getCondition(st, kubeflowv1.JobCreated) == nil {
		setCondition(st, newCondition(kubeflowv1.JobCreated, corev1.ConditionTrue, kind+reasonCreated,
			createdMessage(kind, name), now))
		p.created = true
	}

	pods, svcs, err := r.listChildren(ctx, job)
	if err != nil {
		return err
	}
	ch := bucketChildren(specs, pods, svcs, func(rt kubeflowv1.ReplicaType, i int) string { return childName(r.fw, job, rt, i) })
	st.CountedPods = stillPresent(st.CountedPods, pods)
	p.pods = r.planPodEvents(ctx, job, IsFinished(st), ch.allPods)
	// Whatever this pass decides, once its status is written (releasable).
	defer func() {
		if !p.stale {
			p.release, p.track, p.releasedOld = r.releasable(job, &p.status, ch)
		}
	}()

	if IsFinished(st) {
		return r.finish(ctx, job, ch, p)
	}
	if msg := runnable(specs, r.fw.ReplicaTypes(job)); msg != "" {
		r.fail(p, job, kind+"FailedValidation", msg, corev1.EventTypeWarning, now)
		return r.finishAfterWrite(p)
	}
	if rp.Suspend != nil && *rp.Suspend {
		return r.suspend(ctx, job, ch, p, now)
	}
	if hasCondition(st, kubeflowv1.JobSuspended) {
		msg := fmt.Sprintf("%s %s is resumed.", kind, name)
		setCondition(st, newCondition(kubeflowv1.JobSuspended, corev1.ConditionFalse, kind+reasonResumed, msg, now))
		// Set afresh below, once pods may be created again.
		st.StartTime = nil
		p.event(corev1.EventTypeNormal, kind+reasonResumed, "%s", msg)
	}
	// With a gang, startTime waits for its admission (below): as in v1, time
	// held by the gang backend does not count against activeDeadlineSeconds.
	if st.StartTime == nil && r.gang(job) == nil {
		st.StartTime = &now
	}
	// With a failure policy, pods of older attempts are being replaced:
	// only the current attempt's pods are judged, counted and evaluated.
	fp := rp.FailurePolicy
	cur, old := ch, []*corev1.Pod(nil)
	if fp != nil {
		if n := newestAttempt(ch.allPods); n > st.Restarts {
			// A pod of a later attempt than the job's status knows: the status
			// was written, this copy of the job is older (make chaos saw one
			// after an apiserver restart, and the pass took the new attempt for
			// an old one and replaced it). Never act on it.
			log.FromContext(ctx).Info("job status older than its pods' restart attempt, waiting for the cache", "restarts", st.Restarts, "attempt", n)
			p.status, p.stale = *r.fw.Status(job).DeepCopy(), true
			p.requeue(staleRetry)
			return nil
		}
		cur, old = ch.ofAttempt(st.Restarts)
	}
	st.ReplicaStatuses = replicaStatuses(r.fw, name, specs, cur.allPods)
	blockCreates := false
	if fp != nil {
		switch r.applyFailurePolicy(job, cur, specs, p, now) {
		case policyFailed:
			return r.finishAfterWrite(p)
		case policyRestarted:
			// Its status write comes first, then every pod goes (afterStatus);
			// nothing is created in this pass.
			p.retryDeletes = ch.allPods
			p.requeue(restartRecheck)
			return nil
		}
		// A restart in progress: old pods go (again, after a crash), and with
		// BlockingRecreate nothing new is made until all of them are gone.
		p.retryDeletes = append(p.retryDeletes, old...)
		blockCreates = len(old) > 0 && fp.RestartStrategy != kubeflowv1.RestartStrategyRecreate
	}

	a := r.assess(job, cur, r.vanished.pending(client.ObjectKeyFromObject(job), job.GetUID()), specs, now.Time)
	p.vanished, p.counted = a.vanished, a.counted
	if !r.failOnAssessment(p, job, a, now) {
		r.checkDeadline(p, job, rp, now)
	}
	if IsFinished(st) {
		return r.finishAfterWrite(p)
	}

	st.RestartCount += a.newlyCounted
	for _, c := range a.counted {
		st.CountedPods = append(st.CountedPods, string(c))
	}
	if len(a.retries) > 0 {
		p.retryDeletes = append(p.retryDeletes, a.retryPods...)
		msg := a.restartMessage(kind, name)
		if setCondition(st, newCondition(kubeflowv1.JobRestarting, corev1.ConditionTrue, kind+reasonRestarting, msg, now)) {
			p.event(corev1.EventTypeWarning, kind+reasonRestarting, "%s", msg)
			p.restarted = true
		}
	}

	// A conflict on a framework child (someone else, or our own write the
	// cache has not shown yet, changed it) is retried, but must not hold back
	// the job's pods: the child exists, and a deleted pod waits for nobody.
	extraConflicts, extraErr := r.reconcileExtraChildren(ctx, job, ch.allPods, true)
	if extraErr != nil && !apierrors.IsConflict(extraErr) {
		return extraErr
	}
	if len(extraConflicts) > 0 {
		// Never wire pods to a name someone else holds (a launcher would run
		// with a foreign ServiceAccount): wait until it is free.
		r.recordConflicts(job, p, extraConflicts, now)
		return extraErr
	}
	gang := r.gang(job)
	if gang != nil {
		ready, msg, err := gang.Sync(ctx, job, r.fw)
		if err != nil {
			return err
		}
		if !ready {
			// Pods wait for the gang; say so instead of sitting silently Pending.
			st.LastReconcileTime = &now
			if c := getCondition(st, kubeflowv1.JobCreated); c != nil && c.Message != msg {
				c.Message = msg
				c.LastUpdateTime = now
			}
			p.requeue(gangRetry)
			return extraErr
		}
		// Admitted: the Created condition says what v1 says again.
		if c := getCondition(st, kubeflowv1.JobCreated); c != nil && c.Message != createdMessage(kind, name) {
			c.Message = createdMessage(kind, name)
			c.LastUpdateTime = now
		}
		if st.StartTime == nil {
			st.StartTime = &now
			if r.checkDeadline(p, job, rp, now) {
				_ = r.finishAfterWrite(p)
				return extraErr
			}
		}
	}
	// The outcome is decided before any child is written: a pass that
	// finishes the job creates nothing (chaos saw a job completed and, in the
	// same pass, a deleted worker of it recreated).
	if err := r.adoptUnindexed(ctx, ch); err != nil {
		return errors.Join(err, extraErr)
	}
	v := r.fw.Evaluate(job, ReplicaView{Specs: specs, Statuses: st.ReplicaStatuses, Pods: cur.pods})
	if !v.Succeeded && !blockCreates {
		if err := r.syncReplicas(ctx, job, ch, specs, p, now, gang); err != nil {
			return errors.Join(err, extraErr)
		}
	}
	switch {
	case v.Succeeded:
		if v.Running {
			// The rule saw the job run and finish in one pass (a rule may count
			// a finished replica as having run): record Running first, as v1 does.
			r.markRunning(p, v.RunningMessage, now)
		}
		if st.CompletionTime == nil {
			st.CompletionTime = &now
		}
		if setCondition(st, newCondition(kubeflowv1.JobSucceeded, corev1.ConditionTrue, kind+reasonSucceeded, v.SucceededMessage, now)) {
			p.event(corev1.EventTypeNormal, kind+reasonSucceeded, "%s", v.SucceededMessage)
			p.succeeded = true
		}
		return r.finishAfterWrite(p)
	case v.Running && len(a.retries) == 0:
		if r.restartDone(p, job, specs, cur, now) {
			r.markRunning(p, v.RunningMessage, now)
		}
	}
	return extraErr
}

// failOnAssessment fails the job when the per-pod rule says so: the
// backoff limit reached, or a failure its restart policy does not retry.
func (r *Reconciler) failOnAssessment(p *plan, job client.Object, a assessment, now metav1.Time) bool {
	kind := r.fw.Kind()
	switch {
	case a.backoffExceeded(r.fw.RunPolicy(job).BackoffLimit, p.status.RestartCount):
		r.fail(p, job, kind+reasonFailed,
			fmt.Sprintf("Job %s has failed because it has reached the specified backoff limit", job.GetName()), corev1.EventTypeNormal, now)
	case len(a.terminal) > 0:
		r.fail(p, job, kind+reasonFailed, a.failureMessage(r.fw, job), corev1.EventTypeWarning, now)
	default:
		return false
	}
	return true
}

// markRunning records Running=True; the first one ever is the job's start
// for the startup metric.
func (r *Reconciler) markRunning(p *plan, msg string, now metav1.Time) {
	first := getCondition(&p.status, kubeflowv1.JobRunning) == nil
	if setCondition(&p.status, newCondition(kubeflowv1.JobRunning, corev1.ConditionTrue, r.fw.Kind()+reasonRunning, msg, now)) && first {
		p.running = true
	}
}

// checkDeadline fails a job active longer than activeDeadlineSeconds, else
// asks to be woken at its deadline; it reports whether the job failed. A job
// without startTime has not started: its deadline does not run yet.
func (r *Reconciler) checkDeadline(p *plan, job client.Object, rp *kubeflowv1.RunPolicy, now metav1.Time) bool {
	st := &p.status
	if rp.ActiveDeadlineSeconds == nil || st.StartTime == nil {
		return false
	}
	// Saturate: beyond ~292 years seconds*time.Second wraps negative,
	// which failed the job at once (activeDeadlineSeconds is an int64).
	d := time.Duration(1<<63 - 1)
	if s := *rp.ActiveDeadlineSeconds; s <= int64(d/time.Second) {
		d = time.Duration(s) * time.Second
	}
	deadline := st.StartTime.Add(d)
	if now.Time.Before(deadline) {
		p.requeue(deadline.Sub(now.Time))
		return false
	}
	r.fail(p, job, r.fw.Kind()+reasonFailed,
		fmt.Sprintf("Job %s has failed because it was active longer than specified deadline", job.GetName()), corev1.EventTypeNormal, now)
	return true
}

// stillPresent keeps the counted pod UIDs whose pods the cache still holds
// (the cache is synced before the first pass, and a counted pod was in it).
func stillPresent(uids []string, pods []*corev1.Pod) []string {
	if len(uids) == 0 {
		return uids
	}
	present := make(map[string]bool, len(pods))
	for _, pod := range pods {
		present[string(pod.UID)] = true
	}
	kept := uids[:0:0]
	for _, u := range uids {
		if present[u] {
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

func createdMessage(kind, name string) string { return fmt.Sprintf("%s %s is created.", kind, name) }

// gangRetry is how often a job whose gang is not admitted looks again
// (PodGroup watches bring it back sooner).
const gangRetry = 10 * time.Second

func (r *Reconciler) gang(job client.Object) GangScheduler {
	if r.opts.Gang == nil {
		return nil
	}
	return r.opts.Gang(job, r.fw)
}

// runnable rejects specs the engine cannot build pods from (the webhook
// normally stops them first); "" means fine.
func runnable(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, order []kubeflowv1.ReplicaType) string {
	if len(specs) == 0 {
		return "the job has no replica specs"
	}
	for _, rt := range order {
		s := specs[rt]
		if s == nil || len(s.Template.Spec.Containers) == 0 {
			return fmt.Sprintf("replica spec %s has no containers", rt)
		}
	}
	return ""
}

// fail records the Failed condition once.
func (r *Reconciler) fail(p *plan, job client.Object, reason, msg, eventType string, now metav1.Time) {
	st := &p.status
	if st.CompletionTime == nil {
		st.CompletionTime = &now
	}
	if setCondition(st, newCondition(kubeflowv1.JobFailed, corev1.ConditionTrue, reason, msg, now)) {
		p.event(eventType, r.fw.Kind()+reasonFailed, "%s", msg)
		p.failed = true
	}
}

// finishAfterWrite is finish for a job that turned terminal in this pass:
// only its status part. The side effects (cleanPodPolicy deletions, gang and
// extra children teardown, TTL) run in the next pass, which starts from the
// written terminal status. Deleting pods before the terminal condition is
// durable let a failed status write or an operator crash in between make the
// next pass see a running job without pods, recreate them and run a finished
// job again (found by make chaos).
func (r *Reconciler) finishAfterWrite(p *plan) error {
	finishStatus(&p.status)
	p.requeue(0)
	return nil
}

// finishStatus is the status part of finishing: a succeeded job has no
// active replicas left.
func finishStatus(st *kubeflowv1.JobStatus) {
	if hasCondition(st, kubeflowv1.JobSucceeded) {
		for _, rs := range st.ReplicaStatuses {
			rs.Succeeded += rs.Active
			rs.Active = 0
		}
	}
}

// finish handles a terminal job whose terminal condition is already
// written: cleanPodPolicy, extra children, TTL.
func (r *Reconciler) finish(ctx context.Context, job client.Object, ch children, p *plan) error {
	finishStatus(&p.status)
	policy := kubeflowv1.CleanPodPolicyNone
	if cp := r.fw.RunPolicy(job).CleanPodPolicy; cp != nil && *cp != "" {
		policy = *cp
	}
	if err := r.cleanup(ctx, job, ch, policy, true); err != nil {
		return err
	}
	if g := r.gang(job); g != nil {
		if err := g.Delete(ctx, job, r.fw); err != nil {
			return err
		}
	}
	if _, err := r.reconcileExtraChildren(ctx, job, nil, false); err != nil {
		return err
	}
	return r.expireTTL(ctx, job, p)
}

// suspend tears children down and records Suspended, once.
func (r *Reconciler) suspend(ctx context.Context, job client.Object, ch children, p *plan, now metav1.Time) error {
	st := &p.status
	kind := r.fw.Kind()
	msg := fmt.Sprintf("%s %s is suspended.", kind, job.GetName())
	if err := r.cleanup(ctx, job, ch, kubeflowv1.CleanPodPolicyAll, false); err != nil {
		return err
	}
	if g := r.gang(job); g != nil {
		if err := g.Delete(ctx, job, r.fw); err != nil {
			return err
		}
	}
	if _, err := r.reconcileExtraChildren(ctx, job, nil, false); err != nil {
		return err
	}
	for _, rs := range st.ReplicaStatuses {
		rs.Active = 0
	}
	if hasCondition(st, kubeflowv1.JobRunning) {
		setCondition(st, newCondition(kubeflowv1.JobRunning, corev1.ConditionFalse, kind+reasonSuspended, msg, now))
	}
	if !hasCondition(st, kubeflowv1.JobSuspended) {
		setCondition(st, newCondition(kubeflowv1.JobSuspended, corev1.ConditionTrue, kind+reasonSuspended, msg, now))
		p.event(corev1.EventTypeNormal, kind+reasonSuspended, "%s", msg)
	}
	return nil
}

// expireTTL deletes a finished job once ttlSecondsAfterFinished has passed,
// else asks to be woken exactly then. Children go by garbage collection.
func (r *Reconciler) expireTTL(ctx context.Context, job client.Object, p *plan) error {
	ttl := r.fw.RunPolicy(job).TTLSecondsAfterFinished
	if ttl == nil {
		return nil
	}
	st := &p.status
	if st.CompletionTime == nil {
		now := metav1.NewTime(r.clock.Now())
		st.CompletionTime = &now
	}
	expiry := st.CompletionTime.Add(time.Duration(*ttl) * time.Second)
	if left := expiry.Sub(r.clock.Now()); left > 0 {
		p.requeue(left)
		return nil
	}
	deleted, failed := "SuccessfulDeleteJob", "FailedDeleteJob"
	if d, ok := r.fw.(JobDeleteEvents); ok {
		deleted, failed = d.JobDeleteReasons()
	}
	uid := job.GetUID()
	err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		// Already gone: a pass on a cache that has not seen our own delete
		// yet (a GC'd pod's event can arrive before the job's) must not
		// count or announce the deletion a second time.
		return nil
	}
	if err != nil {
		r.recorder.Event(job, corev1.EventTypeWarning, failed, err.Error())
		return err
	}
	p.jobDeleted = true
	p.event(corev1.EventTypeNormal, deleted, "Deleted job: %s", job.GetName())
	return nil
}
