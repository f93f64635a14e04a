package gang

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Volcano pod annotations.
const (
	VolcanoGroupNameAnnotation = volcanov1beta1.KubeGroupNameAnnotationKey // scheduling.k8s.io/group-name
	VolcanoTaskSpecAnnotation  = "volcano.sh/task-spec"
)

var volcanoPodGroup = kindInfo{
	gvk:      volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup"),
	resource: "podgroups",
	hint:     "install Volcano, or at least its podgroups.scheduling.volcano.sh CRD",
	new:      func() client.Object { return &volcanov1beta1.PodGroup{} },
}

type volcanoBackend struct{}

func (volcanoBackend) name() string      { return "Volcano" }
func (volcanoBackend) kinds() []kindInfo { return []kindInfo{volcanoPodGroup} }

func (b volcanoBackend) sync(ctx context.Context, s *jobScope) (bool, string, error) {
	g := s.groupSpecFor(ctx, true)
	res, err := apply(ctx, s, volcanoPodGroup, b.name(), func(pg *volcanov1beta1.PodGroup, _ bool) {
		setVolcanoSpec(pg, g)
	})
	if err != nil || res.held != "" {
		return false, res.held, err
	}
	if pg := res.obj; !volcanoAdmitted(pg) {
		return false, volcanoWaitMessage(pg), nil
	}
	return true, "", nil
}

// volcanoAdmitted: pods are created once Volcano has moved the group past
// Pending (Inqueue, Running, ...). A group whose pods already ran stays
// admitted even if Volcano shows it Pending again (for example after an
// eviction), so lost pods are re-created instead of the gang waiting forever.
func volcanoAdmitted(pg *volcanov1beta1.PodGroup) bool {
	switch pg.Status.Phase {
	case "", volcanov1beta1.PodGroupPending:
		return pg.Status.Running+pg.Status.Succeeded+pg.Status.Failed > 0
	}
	return true
}

// setVolcanoSpec sets the fields the operator owns; others (minTaskMember,
// networkTopology, ...) are kept, and so is a queue already set.
func setVolcanoSpec(pg *volcanov1beta1.PodGroup, g groupSpec) {
	pg.Spec.MinMember = g.MinMember
	if pg.Spec.Queue == "" {
		pg.Spec.Queue = g.Queue
	}
	pg.Spec.PriorityClassName = g.PriorityClassName
	switch {
	case g.MinResources == nil:
		pg.Spec.MinResources = nil
	case pg.Spec.MinResources == nil || !equality.Semantic.DeepEqual(*pg.Spec.MinResources, g.MinResources):
		rl := g.MinResources.DeepCopy()
		pg.Spec.MinResources = &rl
	}
}

// volcanoWaitMessage says why pods are held: Volcano has not admitted the gang.
func volcanoWaitMessage(pg *volcanov1beta1.PodGroup) string {
	phase := string(pg.Status.Phase)
	if phase == "" {
		phase = "not yet set"
	}
	msg := fmt.Sprintf("waiting for Volcano to admit PodGroup %s (phase %s, minMember %d, queue %q); pods are created once it is Inqueue",
		pg.Name, phase, pg.Spec.MinMember, pg.Spec.Queue)
	for _, c := range pg.Status.Conditions {
		if c.Type == volcanov1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue && c.Message != "" {
			msg += ": " + c.Message
		}
	}
	return msg
}

func (volcanoBackend) decorate(job client.Object, rtype kubeflowv1.ReplicaType, pod *corev1.Pod) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[VolcanoGroupNameAnnotation] = job.GetName()
	pod.Annotations[VolcanoTaskSpecAnnotation] = strings.ToLower(string(rtype))
}
