package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// quantityCmp compares quantities by value (1000m == 1).
var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cases := []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		{
			name: "containers are summed over every resource name",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container(corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi"), "nvidia.com/gpu": q("2")}, nil),
				container(corev1.ResourceList{"cpu": q("500m"), "example.com/foo": q("3")}, nil),
			}},
			want: corev1.ResourceList{"cpu": q("1500m"), "memory": q("1Gi"), "nvidia.com/gpu": q("2"), "example.com/foo": q("3")},
		},
		{
			name: "a limit stands in for a missing request, per resource",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container(corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"cpu": q("4"), "memory": q("2Gi"), "nvidia.com/gpu": q("1")}),
			}},
			want: corev1.ResourceList{"cpu": q("1"), "memory": q("2Gi"), "nvidia.com/gpu": q("1")},
		},
		{
			name: "init containers count as a peak, not a sum",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					container(corev1.ResourceList{"cpu": q("3"), "memory": q("100Mi")}, nil),
					container(corev1.ResourceList{"cpu": q("2"), "memory": q("4Gi")}, nil),
				},
				Containers: []corev1.Container{container(corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}, nil)},
			},
			want: corev1.ResourceList{"cpu": q("3"), "memory": q("4Gi")},
		},
		{
			name: "sidecars add to the containers and to later init containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					func() corev1.Container {
						c := container(corev1.ResourceList{"cpu": q("1")}, nil)
						c.RestartPolicy = &always
						return c
					}(),
					container(corev1.ResourceList{"cpu": q("4")}, nil),
				},
				Containers: []corev1.Container{container(corev1.ResourceList{"cpu": q("2")}, nil)},
			},
			// max(2 + 1 sidecar, 4 init + 1 sidecar)
			want: corev1.ResourceList{"cpu": q("5")},
		},
		{
			name: "overhead is added",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container(corev1.ResourceList{"cpu": q("1")}, nil)},
				Overhead:   corev1.ResourceList{"cpu": q("250m"), "memory": q("120Mi")},
			},
			want: corev1.ResourceList{"cpu": q("1250m"), "memory": q("120Mi")},
		},
		{
			name: "pod-level resources replace the container sum where set",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container(corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi"), "nvidia.com/gpu": q("1")}, nil)},
				Resources:  &corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("8")}},
			},
			want: corev1.ResourceList{"cpu": q("8"), "memory": q("1Gi"), "nvidia.com/gpu": q("1")},
		},
		{
			name: "nothing requested",
			spec: corev1.PodSpec{Containers: []corev1.Container{container(nil, nil)}},
			want: corev1.ResourceList{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podRequests(&tc.spec), quantityCmp); diff != "" {
				t.Errorf("podRequests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMinMember(t *testing.T) {
	fw := fakeFramework{}
	cases := []struct {
		name string
		job  func() *kubeflowv1.PyTorchJob
		want int32
	}{
		{name: "sum of replicas", job: func() *kubeflowv1.PyTorchJob { return pytorchJob(3) }, want: 4},
		{name: "nil replicas count as one", job: func() *kubeflowv1.PyTorchJob {
			j := pytorchJob(3)
			j.Spec.PyTorchReplicaSpecs["Worker"].Replicas = nil
			return j
		}, want: 2},
		{name: "zero replicas count as zero", job: func() *kubeflowv1.PyTorchJob { return pytorchJob(0) }, want: 1},
		{name: "minAvailable wins", job: func() *kubeflowv1.PyTorchJob {
			j := pytorchJob(3)
			j.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{MinAvailable: ptr.To[int32](10)}
			return j
		}, want: 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := minMember(fw.gangJob(tc.job())); got != tc.want {
				t.Errorf("minMember = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMinResources(t *testing.T) {
	gpu := func(n string) corev1.ResourceList { return corev1.ResourceList{"nvidia.com/gpu": q(n)} }
	// Three types with distinct requests so the counted pods are visible.
	job := func(launcherPC, workerPC, psPC string) *kubeflowv1.PyTorchJob {
		j := &kubeflowv1.PyTorchJob{ObjectMeta: metaFor("job")}
		j.Spec.PyTorchReplicaSpecs = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			"Launcher": replicaSpec(nil, launcherPC, container(corev1.ResourceList{"cpu": q("1")}, nil)),
			"Worker":   replicaSpec(ptr.To[int32](4), workerPC, container(corev1.ResourceList{"cpu": q("2")}, gpu("1"))),
			"PS":       replicaSpec(ptr.To[int32](2), psPC, container(corev1.ResourceList{"memory": q("1Gi")}, nil)),
		}
		return j
	}
	fw := fakeFramework{order: []kubeflowv1.ReplicaType{"Launcher", "Worker", "PS"}}
	prio := priorities{byName: map[string]int32{"high": 1000, "low": 10}, def: 100}
	cases := []struct {
		name string
		job  *kubeflowv1.PyTorchJob
		n    int32
		prio priorities
		want corev1.ResourceList
	}{
		{
			name: "all pods",
			job:  job("", "", ""), n: 7,
			want: corev1.ResourceList{"cpu": q("9"), "nvidia.com/gpu": q("4"), "memory": q("2Gi")},
		},
		{
			name: "more than the pods: all pods",
			job:  job("", "", ""), n: 50,
			want: corev1.ResourceList{"cpu": q("9"), "nvidia.com/gpu": q("4"), "memory": q("2Gi")},
		},
		{
			name: "equal priorities keep the framework's order",
			job:  job("", "", ""), n: 3,
			want: corev1.ResourceList{"cpu": q("5"), "nvidia.com/gpu": q("2")},
		},
		{
			name: "highest PriorityClass first",
			job:  job("low", "", "high"), n: 3, prio: prio,
			// PS (1000) x2, then Worker (global default 100) x1
			want: corev1.ResourceList{"memory": q("2Gi"), "cpu": q("2"), "nvidia.com/gpu": q("1")},
		},
		{
			name: "unknown PriorityClass counts as zero",
			job:  job("missing", "low", ""), n: 2, prio: prio,
			// PS (default 100) x2
			want: corev1.ResourceList{"memory": q("2Gi")},
		},
		{
			name: "no pods counted",
			job:  job("", "", ""), n: 0,
			want: nil,
		},
	}
	// The framework's own additions to the pods count too.
	init := container(corev1.ResourceList{"cpu": q("100m"), "memory": q("512Mi"), "ephemeral-storage": q("5Gi")}, nil)
	got := minResources(fakeFramework{order: fw.order, initContainer: &init}.gangJob(job("", "", "")), 1, priorities{})
	want := corev1.ResourceList{"cpu": q("1"), "memory": q("512Mi"), "ephemeral-storage": q("5Gi")}
	if diff := cmp.Diff(want, got, quantityCmp); diff != "" {
		t.Errorf("minResources with a framework init container (-want +got):\n%s", diff)
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := minResources(fw.gangJob(tc.job), tc.n, tc.prio)
			if diff := cmp.Diff(tc.want, got, quantityCmp); diff != "" {
				t.Errorf("minResources (-want +got):\n%s", diff)
			}
		})
	}
}
