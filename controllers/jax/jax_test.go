package jax

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
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

func TestBuildPod(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeJAXJob("jx", "ns").UID("uid-1").Workers(2))
	pod, _, err := engine.BuildPod(fw, j, "Worker", 1, j.Spec.JAXReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "jx-worker-1",
			Namespace: "ns",
			Labels: map[string]string{
				kubeflowv1.OperatorNameLabel: "jaxjob-controller",
				kubeflowv1.JobNameLabel:      "jx",
				kubeflowv1.ReplicaTypeLabel:  "worker",
				kubeflowv1.ReplicaIndexLabel: "1",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kubeflow.org/v1", Kind: "JAXJob", Name: "jx", UID: "uid-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:    "jax",
				Image:   testjobs.JAXImage,
				Command: []string{"python", "/workspace/train.py"},
				Ports:   []corev1.ContainerPort{{Name: "jaxjob-port", ContainerPort: 6666}},
				Env: testjobs.Env("PYTHONUNBUFFERED", "1", "COORDINATOR_PORT", "6666", "COORDINATOR_ADDRESS", "jx-worker-0",
					"NUM_PROCESSES", "2", "PROCESS_ID", "1"),
			}},
		},
	}
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
	w0, _, err := engine.BuildPod(fw, j, "Worker", 0, j.Spec.JAXReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	if w0.Labels[kubeflowv1.JobRoleLabel] != "master" {
		t.Errorf("worker 0 labels = %v, want job-role=master", w0.Labels)
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
