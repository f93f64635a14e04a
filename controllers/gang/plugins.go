package gang

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	schedpluginsv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/scheduling/v1alpha1"
)

var pluginsPodGroup = kindInfo{
	gvk:      schedpluginsv1alpha1.GroupVersion.WithKind("PodGroup"),
	resource: "podgroups",
	hint:     "install the scheduler-plugins coscheduling CRD podgroups.scheduling.x-k8s.io",
	new:      func() client.Object { return &schedpluginsv1alpha1.PodGroup{} },
}

type pluginsBackend struct{}

func (pluginsBackend) name() string      { return "scheduler-plugins" }
func (pluginsBackend) kinds() []kindInfo { return []kindInfo{pluginsPodGroup} }

// sync never holds pods back once the group exists: the coscheduling plugin
// itself keeps the gang's pods waiting until minMember of them fit.
func (b pluginsBackend) sync(ctx context.Context, s *jobScope) (bool, string, error) {
	g := s.groupSpecFor(ctx, true)
	res, err := apply(ctx, s, pluginsPodGroup, b.name(), func(pg *schedpluginsv1alpha1.PodGroup, _ bool) {
		setPluginsSpec(pg, g)
	})
	if err != nil || res.held != "" {
		return false, res.held, err
	}
	return true, "", nil
}

func setPluginsSpec(pg *schedpluginsv1alpha1.PodGroup, g groupSpec) {
	pg.Spec.MinMember = g.MinMember
	if !equality.Semantic.DeepEqual(pg.Spec.MinResources, g.MinResources) {
		pg.Spec.MinResources = g.MinResources.DeepCopy()
	}
	pg.Spec.ScheduleTimeoutSeconds = nil
	if g.ScheduleTimeoutSeconds != nil {
		pg.Spec.ScheduleTimeoutSeconds = ptr.To(*g.ScheduleTimeoutSeconds)
	}
}

func (pluginsBackend) decorate(job client.Object, _ kubeflowv1.ReplicaType, pod *corev1.Pod) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[schedpluginsv1alpha1.PodGroupLabel] = job.GetName()
}
