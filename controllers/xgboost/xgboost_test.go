package xgboost

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/engine/frameworktest"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func defaulted(w *testjobs.XGBoostJobWrapper) *kubeflowv1.XGBoostJob {
	j := w.Obj()
	kubeflowv1.SetDefaults_XGBoostJob(j)
	return j
}

func TestEnvVars(t *testing.T) {
	cases := map[string]struct {
		job   *kubeflowv1.XGBoostJob
		rtype kubeflowv1.ReplicaType
		index int
		want  []corev1.EnvVar
	}{
		"master": {
			job:   defaulted(testjobs.MakeXGBoostJob("xgb", "ns").Master(1).Workers(3)),
			rtype: "Master", index: 0,
			want: testjobs.Env("MASTER_PORT", "9999", "MASTER_ADDR", "xgb-master-0", "WORLD_SIZE", "4", "RANK", "0",
				"PYTHONUNBUFFERED", "1", "WORKER_PORT", "9999", "WORKER_ADDRS", "xgb-worker-0,xgb-worker-1,xgb-worker-2"),
		},
		"worker rank is offset by the masters, custom ports": {
			job:   defaulted(testjobs.MakeXGBoostJob("xgb", "ns").Master(1).Workers(2).Port("Master", 9991).Port("Worker", 9992)),
			rtype: "Worker", index: 1,
			want: testjobs.Env("MASTER_PORT", "9991", "MASTER_ADDR", "xgb-master-0", "WORLD_SIZE", "3", "RANK", "2",
				"PYTHONUNBUFFERED", "1", "WORKER_PORT", "9992", "WORKER_ADDRS", "xgb-worker-0,xgb-worker-1"),
		},
		"master only: no worker variables": {
			job:   defaulted(testjobs.MakeXGBoostJob("xgb", "ns").Master(1)),
			rtype: "Master", index: 0,
			want: testjobs.Env("MASTER_PORT", "9999", "MASTER_ADDR", "xgb-master-0", "WORLD_SIZE", "1", "RANK", "0", "PYTHONUNBUFFERED", "1"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := envVars(tc.job, tc.rtype, tc.index)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvVarsErrors(t *testing.T) {
	cases := map[string]struct {
		job  *kubeflowv1.XGBoostJob
		want string
	}{
		"no master": {job: defaulted(testjobs.MakeXGBoostJob("x", "ns").Workers(2)), want: "no Master replica spec"},
		"no master port": {
			job: func() *kubeflowv1.XGBoostJob {
				j := testjobs.MakeXGBoostJob("x", "ns").Master(1).Obj()
				j.Spec.XGBReplicaSpecs["Master"].Template.Spec.Containers[0].Name = "main"
				return j // not defaulted: no port at all
			}(),
			want: "no port named xgboostjob-port",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := envVars(tc.job, "Master", 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Names, labels, owner, restartPolicy and Services are the conformance
// test's; here only the XGBoost wiring of the pod.
func TestConformance(t *testing.T) {
	frameworktest.Conformance(t, New(Options{}), map[string]*kubeflowv1.XGBoostJob{
		"master and workers": testjobs.MakeXGBoostJob("xgb", "ns").Master(1).Workers(2).Obj(),
		"master only":        testjobs.MakeXGBoostJob("xgb", "ns").Master(1).Obj(),
	})
}

func TestBuildPod(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeXGBoostJob("xgb", "ns").UID("uid-1").Master(1).Workers(1))
	j.Spec.XGBReplicaSpecs["Worker"].Template.Spec.Containers = append(j.Spec.XGBReplicaSpecs["Worker"].Template.Spec.Containers,
		corev1.Container{Name: "sidecar", Image: "busybox"})
	pod, _, err := engine.BuildPod(fw, j, "Worker", 0, j.Spec.XGBReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	wantEnv := testjobs.Env("MASTER_PORT", "9999", "MASTER_ADDR", "xgb-master-0", "WORLD_SIZE", "2", "RANK", "1",
		"PYTHONUNBUFFERED", "1", "WORKER_PORT", "9999", "WORKER_ADDRS", "xgb-worker-0")
	want := corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "xgboost",
		Image:   testjobs.XGBoostImage,
		Command: []string{"python", "/workspace/train.py"},
		Ports:   []corev1.ContainerPort{{Name: "xgboostjob-port", ContainerPort: 9999}},
		Env:     wantEnv,
	}, {Name: "sidecar", Image: "busybox", Env: wantEnv}}}
	// restartPolicy is the conformance test's.
	if diff := cmp.Diff(want, pod.Spec, cmpopts.IgnoreFields(corev1.PodSpec{}, "RestartPolicy")); diff != "" {
		t.Errorf("pod spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Master", "Worker"}, fw.ReplicaTypes(j)); diff != "" {
		t.Errorf("replica types (-want +got):\n%s", diff)
	}
}

func TestIsMasterRole(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeXGBoostJob("x", "ns").Master(1).Workers(2))
	for _, tc := range []struct {
		rtype kubeflowv1.ReplicaType
		index int
		want  bool
	}{{"Master", 0, true}, {"Worker", 0, false}, {"Worker", 1, false}} {
		if got := fw.IsMasterRole(j, tc.rtype, tc.index); got != tc.want {
			t.Errorf("IsMasterRole(%s, %d) = %v, want %v", tc.rtype, tc.index, got, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	fw := New(Options{})
	st := func(active, succeeded int32) *kubeflowv1.ReplicaStatus {
		return &kubeflowv1.ReplicaStatus{Active: active, Succeeded: succeeded}
	}
	type statuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus
	const (
		running   = "XGBoostJob x is running."
		succeeded = "XGBoostJob x is successfully completed."
	)
	j := defaulted(testjobs.MakeXGBoostJob("x", "ns").Master(1).Workers(2))
	cases := map[string]struct {
		statuses statuses
		want     engine.Verdict
	}{
		"pending":                      {statuses: statuses{"Master": st(0, 0), "Worker": st(0, 0)}, want: engine.Verdict{RunningMessage: running, SucceededMessage: succeeded}},
		"master running":               {statuses: statuses{"Master": st(1, 0), "Worker": st(2, 0)}, want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded}},
		"workers done, master running": {statuses: statuses{"Master": st(1, 0), "Worker": st(0, 2)}, want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded}},
		// v1 records Running (if it never was) before Succeeded, so a Master
		// that finished between two passes still shows the job ran.
		"master succeeded decides":      {statuses: statuses{"Master": st(0, 1), "Worker": st(2, 0)}, want: engine.Verdict{Running: true, Succeeded: true, RunningMessage: running, SucceededMessage: succeeded}},
		"missing status counts nothing": {statuses: statuses{}, want: engine.Verdict{RunningMessage: running, SucceededMessage: succeeded}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fw.Evaluate(j, engine.ReplicaView{Specs: j.Spec.XGBReplicaSpecs, Statuses: tc.statuses})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	fw := New(Options{})
	info := fw.NewJob().KindInfo()
	got := []string{info.Kind, info.ControllerName, info.FrameworkName, info.DefaultContainerName, kubeflowv1.XGBoostJobDefaultPortName}
	want := []string{"XGBoostJob", "xgboostjob-controller", "xgboost", "xgboost", "xgboostjob-port"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
}
