package engine

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	// NoPodTracking turns pod tracking off (tracking.go): no pod gets the
	// finalizer, and pods that have it lose it.
	NoPodTracking bool
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
	// Children hands the controllers the events of the pods and Services
	// their jobs control (ChildEvents); nil means a fan-out of this
	// controller's own. One shared by every kind keeps one handler per
	// child informer.
	Children *ChildEvents
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

// Reconciler is the generic job controller, one instance per framework; J
// is the framework's job type.
type Reconciler[J Job[J]] struct {
	fw        *adapter[J]
	client    client.Client
	apiReader client.Reader
	recorder  EventRecorder
	clock     clock.Clock
	opts      Options
	memory    *JobMemory
	written   lastWrites[J]
	holds     statusHolds
	external  externalJobs
	podMemos  podMemos
	vanished  vanishedPods
	// started is when this reconciler was built: jobs created before it may
	// have pod events a previous operator process recorded.
	started time.Time
}

// NewReconciler builds the engine for one framework; the framework's
// optional capabilities are looked up here, once.
func NewReconciler[J Job[J]](fw Framework[J], c client.Client, apiReader client.Reader, rec EventRecorder, opts Options) *Reconciler[J] {
	if opts.MaxConcurrentReconciles < 1 {
		opts.MaxConcurrentReconciles = 1
	}
	if opts.Fanout < 1 {
		// A big job's pods and Services are created faster with 32 creates
		// in flight than with 16 (make bench; figures in the README).
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
	a := resolve(fw)
	a.noTracking = opts.NoPodTracking
	mem := kindMemory{opts.Memory, a.Kind()}
	return &Reconciler[J]{fw: a, client: c, apiReader: apiReader, recorder: rec, clock: opts.Clock, opts: opts, memory: opts.Memory,
		written: lastWrites[J]{mem}, holds: statusHolds{mem}, external: externalJobs{mem}, podMemos: podMemos{mem}, vanished: vanishedPods{mem},
		started: opts.Clock.Now()}
}

// SetupWithManager registers the controller. Call SetupIndexes once per manager first.
func (r *Reconciler[J]) SetupWithManager(mgr ctrl.Manager) error {
	gvk, err := apiutil.GVKForObject(r.fw.NewJob(), mgr.GetScheme())
	if err != nil {
		return err
	}
	gk := gvk.GroupKind()
	owner := enqueueController(gk, r.opts.ChildEventDelay)
	mine := ownedBy(gk)
	children := r.opts.Children
	if children == nil {
		children = NewChildEvents(mgr.GetCache())
	}
	pods, err := children.Source(childPods, &corev1.Pod{}, gk, owner, r.goneFromCache("pod/"), r.podLeft(), podChanged())
	if err != nil {
		return err
	}
	services, err := children.Source(childServices, NewServiceMeta(), gk, owner, r.goneFromCache("svc/"), metaChanged())
	if err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(r.fw.NewJob(), builder.WithPredicates(r.jobGone(), r.notOwnEcho())).
		Named(r.fw.ControllerName()).
		WatchesRawSource(pods).
		WatchesRawSource(services).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles})
	for _, t := range r.fw.extraTypes {
		b = b.Watches(t.Object, owner, builder.WithPredicates(mine, r.goneFromCache(strings.ToLower(kindOf(t.Object))+"/")))
	}
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	if err := r.setupPodTracking(mgr, children, gk); err != nil {
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
func (r *Reconciler[J]) goneFromCache(prefix string) predicate.Funcs {
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
func (r *Reconciler[J]) jobRef(job client.Object) JobRef { return JobRefOf(r.fw.Kind(), job) }

// jobGone drops a deleted job's record on its delete event. The
// NotFound of the reconcile that follows does too; this covers a job whose
// name is reused before that reconcile runs. It never filters events.
func (r *Reconciler[J]) jobGone() predicate.Funcs {
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
func (r *Reconciler[J]) notOwnEcho() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e ctrlevent.UpdateEvent) bool { return !r.written.isEcho(e.ObjectNew) },
	}
}

// Reconcile is thin: read the job and skip what is not ours, then one pass
// over it: plan on a defaulted copy (planPass), then apply what was planned:
// the child writes, the one status write, the pod writes that follow it,
// events (apply).
func (r *Reconciler[J]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
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
	job := cached.DeepCopy()
	job.ApplyDefaults()
	p := &plan{status: *job.JobStatus().DeepCopy()}
	planErr := r.planPass(ctx, job, p)
	return r.apply(ctx, req.NamespacedName, cached, job, p, planErr)
}
