package gang

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// fakeFramework is a minimal adapter over PyTorchJob objects with a
// configurable replica-type order.
type fakeFramework struct {
	order []kubeflowv1.ReplicaType
	// initContainer, if set, is added to every built pod (like PyTorch's and MPI's).
	initContainer *corev1.Container
}

func (fakeFramework) NewJob() *kubeflowv1.PyTorchJob { return &kubeflowv1.PyTorchJob{} }
func (f fakeFramework) ReplicaTypes(*kubeflowv1.PyTorchJob) []kubeflowv1.ReplicaType {
	if f.order != nil {
		return f.order
	}
	return []kubeflowv1.ReplicaType{"Master", "Worker"}
}
func (fakeFramework) IsMasterRole(_ *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == "Master"
}
func (f fakeFramework) DecoratePod(_ *kubeflowv1.PyTorchJob, _ kubeflowv1.ReplicaType, _ int, pod *corev1.Pod) error {
	if f.initContainer != nil {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, *f.initContainer)
	}
	return nil
}
func (fakeFramework) Evaluate(*kubeflowv1.PyTorchJob, engine.ReplicaView) engine.Verdict {
	return engine.Verdict{}
}

// gangJob is job as the engine hands it to its gang scheduler.
func (f fakeFramework) gangJob(job *kubeflowv1.PyTorchJob) engine.GangJob {
	return engine.GangJob{
		Job:          job,
		ReplicaTypes: f.ReplicaTypes(job),
		BuildPod: func(rt kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) (*corev1.Pod, bool, error) {
			return engine.BuildPod(f, job, rt, index, spec)
		},
	}
}

// recorder keeps events as "Type Reason Message".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Event(_ runtime.Object, eventType, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s", eventType, reason, message))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func container(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func replicaSpec(n *int32, pc string, containers ...corev1.Container) *kubeflowv1.ReplicaSpec {
	return &kubeflowv1.ReplicaSpec{
		Replicas: n,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: pc, Containers: containers}},
	}
}

// pytorchJob has a Master (1 cpu) and workers (n, 2 cpu + 1 GPU each).
func pytorchJob(workers int32) *kubeflowv1.PyTorchJob {
	return &kubeflowv1.PyTorchJob{
		ObjectMeta: metaFor("job"),
		Spec: kubeflowv1.PyTorchJobSpec{
			PyTorchReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
				"Master": replicaSpec(ptr.To[int32](1), "", container(corev1.ResourceList{"cpu": q("1")}, nil)),
				"Worker": replicaSpec(ptr.To(workers), "", container(
					corev1.ResourceList{"cpu": q("2")}, corev1.ResourceList{"nvidia.com/gpu": q("1")})),
			},
		},
	}
}

func metaFor(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Annotations: map[string]string{"team": "a"}}
}
