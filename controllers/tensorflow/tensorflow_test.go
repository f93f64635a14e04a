package tensorflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/engine/frameworktest"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func defaulted(w *testjobs.TFJobWrapper) *kubeflowv1.TFJob {
	j := w.Obj()
	kubeflowv1.SetDefaults_TFJob(j)
	return j
}

func TestTFConfig(t *testing.T) {
	cases := map[string]struct {
		job    *kubeflowv1.TFJob
		domain string
		rtype  kubeflowv1.ReplicaType
		index  int
		want   string
	}{
		"v1 example: evaluator included, custom domain": {
			job:    defaulted(testjobs.MakeTFJob("test-tfjob", "ns3").Workers(1).PS(1).Evaluator(1)),
			domain: "tf.training.io",
			rtype:  "Worker", index: 0,
			want: `{"cluster":{"evaluator":["test-tfjob-evaluator-0.ns3.svc.tf.training.io:2222"],"ps":["test-tfjob-ps-0.ns3.svc.tf.training.io:2222"],"worker":["test-tfjob-worker-0.ns3.svc.tf.training.io:2222"]},"task":{"type":"worker","index":0},"environment":"cloud"}`,
		},
		"sorted keys, per-type port, no domain": {
			job:   defaulted(testjobs.MakeTFJob("mnist", "ns").Workers(2).PS(1).Chief(1).Port("PS", 3333)),
			rtype: "PS", index: 0,
			want: `{"cluster":{"chief":["mnist-chief-0.ns.svc:2222"],"ps":["mnist-ps-0.ns.svc:3333"],"worker":["mnist-worker-0.ns.svc:2222","mnist-worker-1.ns.svc:2222"]},"task":{"type":"ps","index":0},"environment":"cloud"}`,
		},
		"master": {
			job:   defaulted(testjobs.MakeTFJob("j", "ns").Master(1).Workers(1)),
			rtype: "Master", index: 0,
			want: `{"cluster":{"master":["j-master-0.ns.svc:2222"],"worker":["j-worker-0.ns.svc:2222"]},"task":{"type":"master","index":0},"environment":"cloud"}`,
		},
		"dynamic worker: a worker sees all PS and itself": {
			job:   defaulted(testjobs.MakeTFJob("d", "ns").Workers(3).PS(2).EnableDynamicWorker(true)),
			rtype: "Worker", index: 2,
			want: `{"cluster":{"worker":{"2":"d-worker-2.ns.svc:2222"},"ps":["d-ps-0.ns.svc:2222","d-ps-1.ns.svc:2222"]},"task":{"type":"worker","index":2}}`,
		},
		"dynamic worker: a PS sees only itself": {
			job:   defaulted(testjobs.MakeTFJob("d", "ns").Workers(3).PS(2).EnableDynamicWorker(true)),
			rtype: "PS", index: 1,
			want: `{"cluster":{"worker":{},"ps":["d-ps-1.ns.svc:2222"]},"task":{"type":"ps","index":1}}`,
		},
		"dynamic worker: a chief sees neither": {
			job:   defaulted(testjobs.MakeTFJob("d", "ns").Chief(1).Workers(3).PS(2).EnableDynamicWorker(true)),
			rtype: "Chief", index: 0,
			want: `{"cluster":{"worker":{},"ps":[]},"task":{"type":"chief","index":0}}`,
		},
		"dynamic worker without PS writes an empty ps list": {
			job:   defaulted(testjobs.MakeTFJob("d", "ns").Workers(2).EnableDynamicWorker(true)),
			rtype: "Worker", index: 0,
			want: `{"cluster":{"worker":{"0":"d-worker-0.ns.svc:2222"},"ps":[]},"task":{"type":"worker","index":0}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tfConfig(tc.job, tc.rtype, tc.index, tc.domain)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TF_CONFIG (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsDistributed(t *testing.T) {
	cases := map[string]struct {
		job  *kubeflowv1.TFJob
		want bool
	}{
		"one worker":           {job: testjobs.MakeTFJob("j", "ns").Workers(1).Obj(), want: false},
		"one chief":            {job: testjobs.MakeTFJob("j", "ns").Chief(1).Obj(), want: false},
		"two workers":          {job: testjobs.MakeTFJob("j", "ns").Workers(2).Obj(), want: true},
		"worker and evaluator": {job: testjobs.MakeTFJob("j", "ns").Workers(1).Evaluator(1).Obj(), want: true},
		"zero workers":         {job: testjobs.MakeTFJob("j", "ns").Workers(0).Obj(), want: true},
		"nil replicas count 1": {job: func() *kubeflowv1.TFJob {
			j := testjobs.MakeTFJob("j", "ns").Workers(1).Obj()
			j.Spec.TFReplicaSpecs["Worker"].Replicas = nil
			return j
		}(), want: false},
		"unknown types ignored": {job: testjobs.MakeTFJob("j", "ns").Workers(1).Replicas("Sidecar", 3).Obj(), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := isDistributed(tc.job); got != tc.want {
				t.Errorf("isDistributed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDecoratePod(t *testing.T) {
	fw := New(Options{ClusterDomain: "cluster.local"})
	t.Run("only the first tensorflow container gets TF_CONFIG", func(t *testing.T) {
		j := testjobs.MakeTFJob("j", "ns").UID("u").Workers(2).Obj()
		spec := j.Spec.TFReplicaSpecs["Worker"]
		spec.Template.Spec.Containers = append([]corev1.Container{{Name: "sidecar", Image: "busybox"}}, spec.Template.Spec.Containers...)
		spec.Template.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "USER", Value: "x"}}
		kubeflowv1.SetDefaults_TFJob(j)
		pod, _, err := engine.BuildPod(fw, j, "Worker", 1, spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Containers[0].Env) != 0 {
			t.Errorf("sidecar env = %v, want none", pod.Spec.Containers[0].Env)
		}
		want := []corev1.EnvVar{{Name: "USER", Value: "x"}, {Name: "TF_CONFIG",
			Value: `{"cluster":{"worker":["j-worker-0.ns.svc.cluster.local:2222","j-worker-1.ns.svc.cluster.local:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`}}
		if diff := cmp.Diff(want, pod.Spec.Containers[1].Env); diff != "" {
			t.Errorf("tensorflow env (-want +got):\n%s", diff)
		}
	})
	t.Run("a local job gets no env at all", func(t *testing.T) {
		j := defaulted(testjobs.MakeTFJob("j", "ns").Workers(1))
		pod, _, err := engine.BuildPod(fw, j, "Worker", 0, j.Spec.TFReplicaSpecs["Worker"])
		if err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Containers[0].Env) != 0 {
			t.Errorf("env = %v, want none", pod.Spec.Containers[0].Env)
		}
	})
	t.Run("no tensorflow container, no TF_CONFIG", func(t *testing.T) {
		j := testjobs.MakeTFJob("j", "ns").Workers(2).Obj()
		j.Spec.TFReplicaSpecs["Worker"].Template.Spec.Containers[0].Name = "main"
		kubeflowv1.SetDefaults_TFJob(j)
		pod, _, err := engine.BuildPod(fw, j, "Worker", 0, j.Spec.TFReplicaSpecs["Worker"])
		if err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.Containers[0].Env) != 0 {
			t.Errorf("env = %v, want none", pod.Spec.Containers[0].Env)
		}
	})
}

// Names, labels (job-role by TF's rule), owner, restartPolicy and Services
// are the conformance test's; here only TF_CONFIG.
func TestConformance(t *testing.T) {
	frameworktest.Conformance(t, New(Options{}), map[string]*kubeflowv1.TFJob{
		"chief, workers and ps":  testjobs.MakeTFJob("mnist", "ns").Chief(1).Workers(2).PS(1).Obj(),
		"master and workers":     testjobs.MakeTFJob("mnist", "ns").Master(1).Workers(2).Obj(),
		"workers and ps":         testjobs.MakeTFJob("mnist", "ns").Workers(2).PS(1).Obj(),
		"every type":             testjobs.MakeTFJob("mnist", "ns").Chief(1).Master(1).PS(1).Workers(2).Evaluator(1).Obj(),
		"one worker (local job)": testjobs.MakeTFJob("mnist", "ns").Workers(1).Obj(),
	})
}

func TestBuildPod(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeTFJob("mnist", "ns").UID("uid-1").Chief(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyExitCode))
	pod, _, err := engine.BuildPod(fw, j, "Chief", 0, j.Spec.TFReplicaSpecs["Chief"])
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "tensorflow",
		Image:   testjobs.TFImage,
		Command: []string{"python", "/workspace/train.py"},
		Ports:   []corev1.ContainerPort{{Name: "tfjob-port", ContainerPort: 2222}},
		Env: []corev1.EnvVar{{Name: "TF_CONFIG",
			Value: `{"cluster":{"chief":["mnist-chief-0.ns.svc:2222"],"worker":["mnist-worker-0.ns.svc:2222"]},"task":{"type":"chief","index":0},"environment":"cloud"}`}},
	}}}
	// restartPolicy is the conformance test's.
	if diff := cmp.Diff(want, pod.Spec, cmpopts.IgnoreFields(corev1.PodSpec{}, "RestartPolicy")); diff != "" {
		t.Errorf("pod spec (-want +got):\n%s", diff)
	}
}

func TestReplicaTypesAndMasterRole(t *testing.T) {
	fw := New(Options{})
	all := defaulted(testjobs.MakeTFJob("j", "ns").Evaluator(1).Workers(2).PS(1).Master(1).Chief(1))
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Chief", "Master", "PS", "Worker", "Evaluator"}, fw.ReplicaTypes(all)); diff != "" {
		t.Errorf("replica types (-want +got):\n%s", diff)
	}
	withChief := defaulted(testjobs.MakeTFJob("j", "ns").Chief(1).Workers(2).PS(1))
	withMaster := defaulted(testjobs.MakeTFJob("j", "ns").Master(1).Workers(2))
	workerOnly := defaulted(testjobs.MakeTFJob("j", "ns").Workers(2).PS(1))
	cases := []struct {
		name  string
		job   *kubeflowv1.TFJob
		rtype kubeflowv1.ReplicaType
		index int
		want  bool
	}{
		{"chief", withChief, "Chief", 0, true},
		{"worker 0 with chief", withChief, "Worker", 0, false},
		{"ps with chief", withChief, "PS", 0, false},
		{"master", withMaster, "Master", 0, true},
		{"worker 0 with master", withMaster, "Worker", 0, false},
		{"worker 0 without chief", workerOnly, "Worker", 0, true},
		{"worker 1 without chief", workerOnly, "Worker", 1, false},
		{"ps 0 without chief", workerOnly, "PS", 0, false},
	}
	for _, tc := range cases {
		if got := fw.IsMasterRole(tc.job, tc.rtype, tc.index); got != tc.want {
			t.Errorf("%s: IsMasterRole = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	fw := New(Options{})
	st := func(active, succeeded int32) *kubeflowv1.ReplicaStatus {
		return &kubeflowv1.ReplicaStatus{Active: active, Succeeded: succeeded}
	}
	type statuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus
	type pods = map[kubeflowv1.ReplicaType]map[int]*corev1.Pod
	worker0 := func(phase corev1.PodPhase, code int32) pods {
		p := testjobs.MakePod("j-worker-0", "ns").Phase(phase)
		if code >= 0 {
			p = p.Terminated("tensorflow", code, "")
		}
		return pods{"Worker": {0: p.Obj()}}
	}
	const (
		running   = "TFJob ns/j is running."
		succeeded = "TFJob ns/j successfully completed."
	)
	withChief := defaulted(testjobs.MakeTFJob("j", "ns").Chief(1).Workers(2).PS(1))
	withMaster := defaulted(testjobs.MakeTFJob("j", "ns").Master(1).Workers(2))
	workerOnly := defaulted(testjobs.MakeTFJob("j", "ns").Workers(3).PS(1))
	allWorkers := defaulted(testjobs.MakeTFJob("j", "ns").Workers(3).PS(1).SuccessPolicy(kubeflowv1.SuccessPolicyAllWorkers))
	psOnly := defaulted(testjobs.MakeTFJob("j", "ns").PS(2))
	cases := map[string]struct {
		job      *kubeflowv1.TFJob
		statuses statuses
		pods     pods
		want     engine.Verdict
	}{
		"chief running": {
			job: withChief, statuses: statuses{"Chief": st(1, 0), "Worker": st(2, 0), "PS": st(1, 0)},
			want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"chief succeeded decides, workers still running": {
			job: withChief, statuses: statuses{"Chief": st(0, 1), "Worker": st(2, 0), "PS": st(1, 0)},
			want: engine.Verdict{Succeeded: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"workers succeeding do not finish a job with a chief": {
			job: withChief, statuses: statuses{"Chief": st(1, 0), "Worker": st(0, 2), "PS": st(1, 0)},
			pods: worker0(corev1.PodSucceeded, 0),
			want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"master is a chief": {
			job: withMaster, statuses: statuses{"Master": st(0, 1), "Worker": st(2, 0)},
			want: engine.Verdict{Succeeded: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"no chief: workers running": {
			job: workerOnly, statuses: statuses{"Worker": st(3, 0), "PS": st(1, 0)},
			want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"no chief: worker 0 exited 0 is enough by default": {
			job: workerOnly, statuses: statuses{"Worker": st(2, 1), "PS": st(1, 0)},
			pods: worker0(corev1.PodSucceeded, 0),
			want: engine.Verdict{Succeeded: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"no chief: worker 0 succeeded without a tensorflow exit code is not enough": {
			job: workerOnly, statuses: statuses{"Worker": st(2, 1), "PS": st(1, 0)},
			pods: worker0(corev1.PodSucceeded, -1),
			want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"no chief: worker 0 still running, worker 1 done": {
			job: workerOnly, statuses: statuses{"Worker": st(2, 1), "PS": st(1, 0)},
			pods: worker0(corev1.PodRunning, -1),
			want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"AllWorkers: worker 0 is not enough": {
			job: allWorkers, statuses: statuses{"Worker": st(2, 1), "PS": st(1, 0)},
			pods: worker0(corev1.PodSucceeded, 0),
			want: engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"AllWorkers: all workers": {
			job: allWorkers, statuses: statuses{"Worker": st(0, 3), "PS": st(1, 0)},
			want: engine.Verdict{Succeeded: true, RunningMessage: running, SucceededMessage: succeeded},
		},
		"PS only never succeeds": {
			job: psOnly, statuses: statuses{"PS": st(0, 2)},
			want: engine.Verdict{RunningMessage: running, SucceededMessage: succeeded},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fw.Evaluate(tc.job, engine.ReplicaView{Specs: tc.job.Spec.TFReplicaSpecs, Statuses: tc.statuses, Pods: tc.pods})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	fw := New(Options{})
	info := fw.NewJob().KindInfo()
	got := []string{info.Kind, info.ControllerName, info.FrameworkName, info.DefaultContainerName, kubeflowv1.TFJobDefaultPortName}
	want := []string{"TFJob", "tfjob-controller", "tensorflow", "tensorflow", "tfjob-port"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
}

// v1's TF controller words a failure differently from the other five.
func TestFailedMessage(t *testing.T) {
	var fw engine.FailureWording[*kubeflowv1.TFJob] = New(Options{})
	got := fw.FailedMessage(testjobs.MakeTFJob("mnist", "team-a").Obj(), "2 Worker")
	if want := "TFJob team-a/mnist has failed because 2 Worker replica(s) failed"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// With enableDynamicWorker, v1 ignores failed Workers; every other type, or
// a job without it, fails as usual.
func TestToleratesFailure(t *testing.T) {
	var fw engine.FailureTolerance[*kubeflowv1.TFJob] = New(Options{})
	dynamic := testjobs.MakeTFJob("d", "ns").Chief(1).PS(1).Workers(2).EnableDynamicWorker(true).Obj()
	static := testjobs.MakeTFJob("s", "ns").Chief(1).PS(1).Workers(2).Obj()
	got := map[string]bool{}
	for _, j := range []*kubeflowv1.TFJob{dynamic, static} {
		for _, rt := range []kubeflowv1.ReplicaType{"Chief", "PS", "Worker", "Evaluator"} {
			got[j.Name+"/"+string(rt)] = fw.ToleratesFailure(j, rt)
		}
	}
	want := map[string]bool{
		"d/Chief": false, "d/PS": false, "d/Worker": true, "d/Evaluator": false,
		"s/Chief": false, "s/PS": false, "s/Worker": false, "s/Evaluator": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tolerated failures (-want +got):\n%s", diff)
	}
}
