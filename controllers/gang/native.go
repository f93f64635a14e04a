package gang

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// NativeTemplateName is the name of the single PodGroupTemplate of a job's
// Workload; the job's PodGroup references it.
const NativeTemplateName = "gang"

const nativeHint = "Kubernetes 1.37+ with the GenericWorkload feature gate on kube-apiserver, " +
	"kube-controller-manager and kube-scheduler, and --runtime-config=scheduling.k8s.io/v1beta1=true"

var (
	nativeWorkload = kindInfo{
		gvk:      schedulingv1beta1.SchemeGroupVersion.WithKind("Workload"),
		resource: "workloads",
		hint:     nativeHint,
		new:      func() client.Object { return &schedulingv1beta1.Workload{} },
	}
	nativePodGroup = kindInfo{
		gvk:      schedulingv1beta1.SchemeGroupVersion.WithKind("PodGroup"),
		resource: "podgroups",
		hint:     nativeHint,
		new:      func() client.Object { return &schedulingv1beta1.PodGroup{} },
	}
)

// nativeBackend keeps a Workload (the job's scheduling template) and a
// PodGroup (its runtime instance) with a gang policy; kube-scheduler's
// GangScheduling plugin binds the group's pods all or nothing, so pods are
// created right away.
type nativeBackend struct{}

func (nativeBackend) name() string      { return "Kubernetes" }
func (nativeBackend) kinds() []kindInfo { return []kindInfo{nativeWorkload, nativePodGroup} }

func (b nativeBackend) sync(ctx context.Context, s *jobScope) (bool, string, error) {
	g := s.groupSpecFor(ctx, false)
	kind := s.info.Kind
	wl, err := apply(ctx, s, nativeWorkload, b.name(), func(w *schedulingv1beta1.Workload, created bool) {
		setWorkloadSpec(w, kind, g, created)
	})
	if err != nil || wl.held != "" {
		return false, wl.held, err
	}
	pg, err := apply(ctx, s, nativePodGroup, b.name(), func(p *schedulingv1beta1.PodGroup, created bool) {
		setNativePodGroupSpec(p, g, created)
	})
	if err != nil || pg.held != "" {
		return false, pg.held, err
	}
	if pg.obj.Spec.SchedulingPolicy.Gang == nil {
		return false, fmt.Sprintf("PodGroup %s has no gang scheduling policy; delete it so that it is re-created", pg.obj.Name), nil
	}
	return true, "", nil
}

// nativeMinCount is the gang's minCount, which must be at least 1.
func nativeMinCount(g groupSpec) int32 {
	return max(g.MinMember, 1)
}

// setWorkloadSpec: the controller reference and the template list are fixed
// at creation; afterwards only the gang's minCount follows the job.
func setWorkloadSpec(w *schedulingv1beta1.Workload, kind string, g groupSpec, created bool) {
	if created {
		w.Spec.ControllerRef = &schedulingv1beta1.TypedLocalObjectReference{
			APIGroup: kubeflowv1.GroupVersion.Group, Kind: kind, Name: w.Name,
		}
		w.Spec.PodGroupTemplates = []schedulingv1beta1.PodGroupTemplate{{
			Name:              NativeTemplateName,
			SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{}},
			PriorityClassName: g.PriorityClassName,
		}}
	}
	for i := range w.Spec.PodGroupTemplates {
		t := &w.Spec.PodGroupTemplates[i]
		if t.Name == NativeTemplateName && t.SchedulingPolicy.Gang != nil {
			t.SchedulingPolicy.Gang.MinCount = nativeMinCount(g)
		}
	}
}

// setNativePodGroupSpec: the policy kind, the Workload reference and the
// priority are immutable; minCount follows the job.
func setNativePodGroupSpec(p *schedulingv1beta1.PodGroup, g groupSpec, created bool) {
	if created {
		p.Spec.WorkloadRef = &schedulingv1beta1.WorkloadReference{WorkloadName: p.Name, TemplateName: NativeTemplateName}
		p.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{}}
		p.Spec.PriorityClassName = g.PriorityClassName
	}
	if p.Spec.SchedulingPolicy.Gang != nil {
		p.Spec.SchedulingPolicy.Gang.MinCount = nativeMinCount(g)
	}
}

func (nativeBackend) decorate(job client.Object, _ kubeflowv1.ReplicaType, pod *corev1.Pod) {
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(job.GetName())}
}
