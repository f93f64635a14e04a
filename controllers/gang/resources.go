package gang

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// DefaultQueue is the Volcano queue of jobs that name none.
const DefaultQueue = "default"

// groupSpec is what every backend derives its PodGroup from.
type groupSpec struct {
	MinMember              int32
	MinResources           corev1.ResourceList // nil when nothing is requested
	Queue                  string
	PriorityClassName      string
	ScheduleTimeoutSeconds *int32
}

// priorities are PriorityClass values by name, and the global default's.
type priorities struct {
	byName map[string]int32
	def    int32
}

func (p priorities) of(name string) int32 {
	if name == "" {
		return p.def
	}
	return p.byName[name] // an unknown class counts as 0, as the scheduler would reject the pod anyway
}

// groupSpecFor computes a job's group. withResources=false skips
// minResources (the native API has no such field).
func (s *jobScope) groupSpecFor(ctx context.Context, withResources bool) groupSpec {
	job := s.g
	sp := job.Job.RunPolicy().SchedulingPolicy
	g := groupSpec{MinMember: minMember(job), Queue: DefaultQueue}
	if sp != nil {
		if sp.Queue != "" {
			g.Queue = sp.Queue
		}
		g.PriorityClassName = sp.PriorityClass
		g.ScheduleTimeoutSeconds = sp.ScheduleTimeoutSeconds
	}
	if !withResources {
		return g
	}
	if sp != nil && sp.MinResources != nil {
		g.MinResources = corev1.ResourceList{}
		for name, q := range *sp.MinResources {
			g.MinResources[name] = q.DeepCopy()
		}
		return g
	}
	var prio priorities
	if usesPriorityClasses(job) {
		prio = s.m.priorities.get(ctx, s.m)
	}
	g.MinResources = minResources(job, g.MinMember, prio)
	return g
}

// minMember is schedulingPolicy.minAvailable, else the number of pods the
// engine creates (replicas summed over the job's replica types, nil as 1).
func minMember(job engine.GangJob) int32 {
	if sp := job.Job.RunPolicy().SchedulingPolicy; sp != nil && sp.MinAvailable != nil {
		return *sp.MinAvailable
	}
	specs := job.Job.ReplicaSpecs()
	var n int32
	for _, rt := range job.ReplicaTypes {
		n += specs[rt].ReplicaCount()
	}
	return n
}

func usesPriorityClasses(job engine.GangJob) bool {
	for _, spec := range job.Job.ReplicaSpecs() {
		if spec != nil && spec.Template.Spec.PriorityClassName != "" {
			return true
		}
	}
	return false
}

// minResources sums the requests of the first n pods the job creates, taking
// replica types by their PriorityClass value (highest first, ties in the
// framework's order), every resource name included.
func minResources(job engine.GangJob, n int32, prio priorities) corev1.ResourceList {
	specs := job.Job.ReplicaSpecs()
	types := make([]kubeflowv1.ReplicaType, 0, len(specs))
	for _, rt := range job.ReplicaTypes {
		if specs[rt] != nil {
			types = append(types, rt)
		}
	}
	sort.SliceStable(types, func(i, j int) bool {
		return prio.of(specs[types[i]].Template.Spec.PriorityClassName) > prio.of(specs[types[j]].Template.Spec.PriorityClassName)
	})
	total := corev1.ResourceList{}
	left := n
	for _, rt := range types {
		if left <= 0 {
			break
		}
		count := min(specs[rt].ReplicaCount(), left)
		left -= count
		perPod := podRequests(builtPodSpec(job, rt, specs[rt]))
		for range count {
			addTo(total, perPod)
		}
	}
	if len(total) == 0 {
		return nil
	}
	return total
}

// builtPodSpec is the spec of the pods the engine creates for a replica type
// (the template plus the framework's additions, such as PyTorch's or MPI's
// init containers), else the template.
func builtPodSpec(job engine.GangJob, rt kubeflowv1.ReplicaType, spec *kubeflowv1.ReplicaSpec) *corev1.PodSpec {
	if pod, _, err := job.BuildPod(rt, 0, spec); err == nil {
		return &pod.Spec
	}
	return &spec.Template.Spec
}

// podRequests is what the scheduler reserves for one pod: the containers'
// requests (a limit stands in for a missing request), sidecar init
// containers added, regular init containers as a peak (max with the rest),
// pod-level resources where set, plus the pod overhead.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	reqs := corev1.ResourceList{}
	for i := range spec.Containers {
		addTo(reqs, containerRequests(&spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initPeak := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r := containerRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar keeps running next to the main containers.
			addTo(reqs, r)
			addTo(sidecars, r)
			maxInto(initPeak, sidecars)
			continue
		}
		// A regular init container runs alone, next to the sidecars started before it.
		peak := corev1.ResourceList{}
		addTo(peak, r)
		addTo(peak, sidecars)
		maxInto(initPeak, peak)
	}
	maxInto(reqs, initPeak)
	if spec.Resources != nil {
		for name, q := range effectiveRequests(spec.Resources) {
			reqs[name] = q.DeepCopy()
		}
	}
	addTo(reqs, spec.Overhead)
	return reqs
}

func containerRequests(c *corev1.Container) corev1.ResourceList {
	return effectiveRequests(&c.Resources)
}

// effectiveRequests are the requests with the limits of resources that have
// no request (the API server defaults a missing request to the limit).
func effectiveRequests(r *corev1.ResourceRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r.Requests {
		out[name] = q.DeepCopy()
	}
	for name, q := range r.Limits {
		if _, ok := out[name]; !ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

func addTo(dst, src corev1.ResourceList) {
	for name, q := range src {
		sum := dst[name].DeepCopy()
		sum.Add(q)
		dst[name] = sum
	}
}

func maxInto(dst, src corev1.ResourceList) {
	for name, q := range src {
		if cur, ok := dst[name]; !ok || q.Cmp(cur) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}

// priorityCache keeps PriorityClass values for a short while: minResources
// is recomputed on every reconcile of a gang job.
type priorityCache struct {
	mu      sync.Mutex
	at      time.Time
	cached  priorities
	hasData bool
}

const priorityTTL = 30 * time.Second

func (c *priorityCache) get(ctx context.Context, m *Manager) priorities {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := m.opts.Clock.Now()
	if c.hasData && now.Sub(c.at) < priorityTTL {
		return c.cached
	}
	var list schedulingv1.PriorityClassList
	if err := m.opts.APIReader.List(ctx, &list); err != nil {
		// Without PriorityClasses every type counts as equal: the order falls
		// back to the framework's, which is still deterministic.
		// Retried after the TTL, not on every reconcile.
		log.FromContext(ctx).V(1).Info("listing PriorityClasses for minResources", "err", err.Error())
		c.at, c.hasData = now, true
		return c.cached
	}
	p := priorities{byName: make(map[string]int32, len(list.Items))}
	for _, pc := range list.Items {
		p.byName[pc.Name] = pc.Value
		if pc.GlobalDefault {
			p.def = pc.Value
		}
	}
	c.cached, c.at, c.hasData = p, now, true
	return p
}
