// Package gang implements gang scheduling for the job engine: it keeps one
// PodGroup per job in the API of the job's gang scheduler and joins the job's
// pods to it.
//
// Three backends exist:
//
//   - Volcano: a scheduling.volcano.sh/v1beta1 PodGroup; pods carry the
//     scheduling.k8s.io/group-name and volcano.sh/task-spec annotations and
//     are held back until Volcano admits the group (phase Inqueue or later).
//   - scheduler-plugins: a scheduling.x-k8s.io/v1alpha1 PodGroup of the
//     coscheduling plugin; pods carry the scheduling.x-k8s.io/pod-group label.
//   - Kubernetes: the native scheduling.k8s.io/v1beta1 Workload and PodGroup
//     (gang policy) of Kubernetes 1.37+; pods join through
//     spec.schedulingGroup.podGroupName.
//
// The backend is chosen per job: a replica template whose schedulerName is
// "volcano" selects Volcano, one naming the configured scheduler-plugins
// scheduler selects scheduler-plugins, otherwise the operator default applies
// (gangScheduling.schedulerName and gangScheduling.podGroupAPI).
//
// A backend is one file implementing the backend interface, its entry in
// registry.go's table and its value of the Configuration's podGroupAPI.
//
// A missing PodGroup API (CRD not installed, API version disabled) never
// fails the operator: it is discovered at call time, reported on the job and
// in an event, and the job proceeds once the API appears. PodGroups are
// watched from the first time a job needs them.
package gang

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// VolcanoSchedulerName is the schedulerName that selects Volcano.
const VolcanoSchedulerName = "volcano"

// Event reasons. SuccessfulDeletePodGroup, FailedDeletePodGroup and JobTerminated are v1's.
const (
	ReasonCreatePodGroup       = "SuccessfulCreatePodGroup"
	ReasonFailedCreatePodGroup = "FailedCreatePodGroup"
	ReasonDeletePodGroup       = "SuccessfulDeletePodGroup"
	ReasonFailedDeletePodGroup = "FailedDeletePodGroup"
	ReasonJobTerminated        = "JobTerminated"
)

// jobTerminatedMessage is v1's JobTerminated message.
const jobTerminatedMessage = "Job has been terminated. Deleting PodGroup"

// overrideWarning is v1's SetPodTemplateSchedulerName message.
const overrideWarning = "Another scheduler is specified when gang-scheduling is enabled and it will not be overwritten"

// Options configure a Manager.
type Options struct {
	// Config is the operator's gang-scheduling configuration (defaulted).
	Config configv1alpha1.GangScheduling
	// Client reads PodGroups through the informer cache and writes them.
	Client client.Client
	// APIReader reads around the cache (after AlreadyExists, PriorityClasses).
	APIReader client.Reader
	// RESTMapper tells whether a PodGroup API is served, at call time.
	RESTMapper meta.RESTMapper
	// Scheme knows the PodGroup types (see AddToScheme).
	Scheme *runtime.Scheme
	// Cache backs the PodGroup watches; nil disables them.
	Cache cache.Cache
	// Recorder returns the event recorder of a controller (by its name).
	Recorder func(controllerName string) engine.EventRecorder
	// Clock is injectable for tests.
	Clock clock.Clock
	// Memory records the PodGroups deleted and not yet gone from the
	// cache: the job controllers' memory, so the records go with the job
	// (a Manager of its own when nil, for tests).
	Memory *engine.JobMemory
}

// Manager chooses and runs the gang-scheduling backend of each job. One
// Manager serves every job controller of the operator.
type Manager struct {
	opts Options

	// selectable are the backends a replica template selects by its
	// schedulerName, in the table's order; def is the operator default (nil:
	// gang scheduling off for jobs that select none).
	selectable []*scheduler
	def        *scheduler

	mu          sync.Mutex
	missing     map[schema.GroupVersionKind]time.Time // API absent, re-checked after the time
	controllers map[string]registration               // by controller name
	watched     map[string]bool                       // controller name + GVK
	memory      *engine.JobMemory                     // recently deleted objects (no duplicate events)
	priorities  *priorityCache
}

type registration struct {
	ctrl  controller.Controller
	owner client.Object
}

// New builds a Manager. It never talks to the API server.
func New(opts Options) *Manager {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.APIReader == nil {
		opts.APIReader = opts.Client
	}
	if opts.Memory == nil {
		opts.Memory = engine.NewJobMemory(opts.Clock)
	}
	m := &Manager{
		opts:        opts,
		missing:     map[schema.GroupVersionKind]time.Time{},
		controllers: map[string]registration{},
		watched:     map[string]bool{},
		memory:      opts.Memory,
		priorities:  &priorityCache{},
	}
	cfg := opts.Config
	for _, e := range backends {
		if e.schedulerName != nil && enabled(cfg, e.api) {
			m.selectable = append(m.selectable, &scheduler{m: m, b: e.new(), api: e.api, schedulerName: e.schedulerName(cfg)})
		}
	}
	api, name := defaultBackend(cfg)
	if e, ok := entryOf(api); ok && enabled(cfg, api) {
		m.def = &scheduler{m: m, b: e.new(), api: e.api, schedulerName: name}
	}
	return m
}

// NewForManager builds a Manager on a controller-runtime manager and
// registers the PodGroup types in its scheme. Call before the manager
// starts. memory is the job controllers' per-job memory, so that its
// records go with the job.
func NewForManager(mgr ctrl.Manager, cfg configv1alpha1.GangScheduling, recorder func(controllerName string) engine.EventRecorder, memory *engine.JobMemory) (*Manager, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	if err := AddToScheme(mgr.GetScheme()); err != nil {
		return nil, err
	}
	return New(Options{
		Config:     cfg,
		Client:     mgr.GetClient(),
		APIReader:  mgr.GetAPIReader(),
		RESTMapper: mgr.GetRESTMapper(),
		Scheme:     mgr.GetScheme(),
		Cache:      mgr.GetCache(),
		Recorder:   recorder,
		Memory:     memory,
	}), nil
}

// Selector is the engine's per-job backend choice.
func (m *Manager) Selector() engine.GangSelector {
	return func(job engine.GangJob) engine.GangScheduler {
		if s := m.choose(job); s != nil {
			return s
		}
		return nil // a typed nil would look non-nil to the engine
	}
}

// choose returns the job's backend: the first replica template (in the
// framework's order) naming a backend's scheduler (Volcano's, the
// scheduler-plugins scheduler) wins,
// else the operator default (nil when gang scheduling is off).
func (m *Manager) choose(job engine.GangJob) *scheduler {
	specs := job.Job.ReplicaSpecs()
	for _, rt := range job.ReplicaTypes {
		spec := specs[rt]
		if spec == nil {
			continue
		}
		name := spec.Template.Spec.SchedulerName
		if name == "" {
			continue
		}
		for _, sc := range m.selectable {
			if name == sc.schedulerName {
				return sc
			}
		}
	}
	return m.def
}

// Register lets the Manager add PodGroup watches to a job controller once a
// job of that controller uses a PodGroup API that is served. owner is an
// empty job of the controller's kind.
func (m *Manager) Register(controllerName string, owner client.Object, c controller.Controller) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.controllers[controllerName] = registration{ctrl: c, owner: owner}
}

// scheduler is one backend with the scheduler name its pods get.
type scheduler struct {
	m             *Manager
	b             backend
	api           configv1alpha1.PodGroupAPI
	schedulerName string
}

var _ engine.GangScheduler = (*scheduler)(nil)

// backend is one PodGroup API.
type backend interface {
	// name is shown in messages ("Volcano", ...).
	name() string
	// kinds are the objects kept per job, in creation order; the last one is
	// the PodGroup the pods join (and the one watched).
	kinds() []kindInfo
	// sync creates or updates the job's objects and tells whether pods may be created.
	sync(ctx context.Context, s *jobScope) (ready bool, message string, err error)
	// decorate joins a pod to the job's group.
	decorate(job client.Object, rtype kubeflowv1.ReplicaType, pod *corev1.Pod)
}

// kindInfo describes one API object kind a backend keeps.
type kindInfo struct {
	gvk schema.GroupVersionKind
	// resource is the kind's plural API resource (for RBAC).
	resource string
	// hint says how to get the API when it is missing.
	hint string
	new  func() client.Object
}

func (k kindInfo) String() string {
	return k.gvk.Kind + " " + k.gvk.GroupVersion().String()
}

// Sync implements engine.GangScheduler.
func (s *scheduler) Sync(ctx context.Context, job engine.GangJob) (bool, string, error) {
	return s.b.sync(ctx, s.m.scope(job))
}

// DecoratePod implements engine.GangScheduler.
func (s *scheduler) DecoratePod(job client.Object, rtype kubeflowv1.ReplicaType, pod *corev1.Pod) string {
	warning := ""
	switch pod.Spec.SchedulerName {
	case "":
		pod.Spec.SchedulerName = s.schedulerName
	case s.schedulerName:
	default:
		if s.schedulerName != "" {
			warning = overrideWarning
		}
	}
	s.b.decorate(job, rtype, pod)
	return warning
}

// Delete implements engine.GangScheduler. A finished job's PodGroup
// deletion is announced with v1's JobTerminated, once: v1 said it on every
// reconcile of a finished job, we when the PodGroup is actually deleted.
func (s *scheduler) Delete(ctx context.Context, job engine.GangJob) error {
	kinds := s.b.kinds()
	sc := s.m.scope(job)
	finished := engine.IsFinished(job.Job.JobStatus())
	for i := len(kinds) - 1; i >= 0; i-- {
		if err := sc.remove(ctx, kinds[i], finished && i == len(kinds)-1); err != nil {
			return err
		}
	}
	return nil
}
