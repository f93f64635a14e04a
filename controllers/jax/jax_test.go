package jax

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/engine/frameworktest"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func defaulted(w *testjobs.JAXJobWrapper) *kubeflowv1.JAXJob {
	j := w.Obj()
	kubeflowv1.SetDefaults_JAXJob(j)
	return j
}

func TestEnvVars(t *testing.T) {
	cases := map[string]struct {
		job   *kubeflowv1.JAXJob
		index int
		want  []corev1.EnvVar
	}{
		"worker 0": {
			job: defaulted(testjobs.MakeJAXJob("jx", "ns").Workers(4)), index: 0,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "COORDINATOR_PORT", "6666", "COORDINATOR_ADDRESS", "jx-worker-0",
				"NUM_PROCESSES", "4", "PROCESS_ID", "0"),
		},
		"worker 3 with a custom port": {
			job: defaulted(testjobs.MakeJAXJob("jx", "ns").Workers(4).Port(7777)), index: 3,
			want: testjobs.Env("PYTHONUNBUFFERED", "1", "COORDINATOR_PORT", "7777", "COORDINATOR_ADDRESS", "jx-worker-0",
				"NUM_PROCESSES", "4", "PROCESS_ID", "3"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := envVars(tc.job, tc.index)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPortNotExposed(t *testing.T) {
	j := testjobs.MakeJAXJob("jx", "ns").Workers(2).Obj()
	j.Spec.JAXReplicaSpecs["Worker"].Template.Spec.Containers[0].Name = "main"
	kubeflowv1.SetDefaults_JAXJob(j) // the port lands on "main", which v1 does not read
	_, err := envVars(j, 0)
	if !errors.Is(err, errPortNotExposed) || err.Error() != "default container port is not exposed" {
		t.Errorf("error = %v, want v1's %q", err, "default container port is not exposed")
	}
	if _, _, err := engine.BuildPod(New(Options{}), j, "Worker", 0, j.Spec.JAXReplicaSpecs["Worker"]); err == nil {
		t.Error("BuildPod must fail without the coordinator port")
	}
}

// Names, labels, owner, restartPolicy and Services are the conformance
// test's; here only the JAX wiring of the pod.
func TestConformance(t *testing.T) {
	frameworktest.Conformance(t, New(Options{}), map[string]*kubeflowv1.JAXJob{
		"two workers": testjobs.MakeJAXJob("jx", "ns").Workers(2).Obj(),
		"one worker":  testjobs.MakeJAXJob("jx", "ns").Workers(1).Obj(),
	})
}

func TestBuildPod(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeJAXJob("jx", "ns").UID("uid-1").Workers(2))
	pod, _, err := engine.BuildPod(fw, j, "Worker", 1, j.Spec.JAXReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "jax",
		Image:   testjobs.JAXImage,
		Command: []string{"python", "/workspace/train.py"},
		Ports:   []corev1.ContainerPort{{Name: "jaxjob-port", ContainerPort: 6666}},
		Env: testjobs.Env("PYTHONUNBUFFERED", "1", "COORDINATOR_PORT", "6666", "COORDINATOR_ADDRESS", "jx-worker-0",
			"NUM_PROCESSES", "2", "PROCESS_ID", "1"),
	}}}
	// restartPolicy is the conformance test's.
	if diff := cmp.Diff(want, pod.Spec, cmpopts.IgnoreFields(corev1.PodSpec{}, "RestartPolicy")); diff != "" {
		t.Errorf("pod spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Worker"}, fw.ReplicaTypes(j)); diff != "" {
		t.Errorf("replica types (-want +got):\n%s", diff)
	}
}

func TestEvaluate(t *testing.T) {
	fw := New(Options{})
	st := func(active, succeeded int32) *kubeflowv1.ReplicaStatus {
		return &kubeflowv1.ReplicaStatus{Active: active, Succeeded: succeeded}
	}
	type statuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus
	v := func(running, succeeded bool) engine.Verdict {
		return engine.Verdict{Running: running, Succeeded: succeeded,
			RunningMessage: "JAXJob ns/jx is running.", SucceededMessage: "JAXJob ns/jx successfully completed."}
	}
	j := defaulted(testjobs.MakeJAXJob("jx", "ns").Workers(2))
	cases := map[string]struct {
		statuses statuses
		want     engine.Verdict
	}{
		"pending":              {statuses: statuses{"Worker": st(0, 0)}, want: v(false, false)},
		"running":              {statuses: statuses{"Worker": st(2, 0)}, want: v(true, false)},
		"one of two succeeded": {statuses: statuses{"Worker": st(1, 1)}, want: v(true, false)},
		"all succeeded":        {statuses: statuses{"Worker": st(0, 2)}, want: v(false, true)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fw.Evaluate(j, engine.ReplicaView{Specs: j.Spec.JAXReplicaSpecs, Statuses: tc.statuses})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	fw := New(Options{})
	info := fw.NewJob().KindInfo()
	got := []string{info.Kind, info.ControllerName, info.FrameworkName, info.DefaultContainerName, kubeflowv1.JAXJobDefaultPortName}
	want := []string{"JAXJob", "jaxjob-controller", "jax", "jax", "jaxjob-port"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
}
