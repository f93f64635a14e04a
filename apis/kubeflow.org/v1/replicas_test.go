package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestReplicaName(t *testing.T) {
	if got := ReplicaName("my-job", "Worker", 3); got != "my-job-worker-3" {
		t.Errorf("got %q", got)
	}
}

func TestReplicaCount(t *testing.T) {
	three := int32(3)
	for _, c := range []struct {
		spec *ReplicaSpec
		want int32
	}{{nil, 0}, {&ReplicaSpec{}, 1}, {&ReplicaSpec{Replicas: &three}, 3}} {
		if got := c.spec.ReplicaCount(); got != c.want {
			t.Errorf("ReplicaCount(%v) = %d, want %d", c.spec, got, c.want)
		}
	}
}

func TestMainContainerName(t *testing.T) {
	pod := func(names ...string) *corev1.PodSpec {
		var s corev1.PodSpec
		for _, n := range names {
			s.Containers = append(s.Containers, corev1.Container{Name: n})
		}
		return &s
	}
	mpi := func(main string) *MPIJob { return &MPIJob{Spec: MPIJobSpec{MainContainer: main}} }
	cases := map[string]struct {
		job  Job
		spec *corev1.PodSpec
		want string
	}{
		"PyTorchJob: its default container":              {&PyTorchJob{}, pod("sidecar", "pytorch"), "pytorch"},
		"MPIJob: the first container, whatever its name": {mpi(""), pod("launcher", "sidecar"), "launcher"},
		"MPIJob: not mpi when it is not first":           {mpi(""), pod("sidecar", "mpi"), "sidecar"},
		"MPIJob: spec.mainContainer":                     {mpi("trainer"), pod("sidecar", "trainer"), "trainer"},
		"MPIJob: spec.mainContainer absent, the first":   {mpi("trainer"), pod("worker"), "worker"},
		"MPIJob: no container":                           {mpi(""), pod(), ""},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, MainContainerName(tc.job, tc.spec)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
