package paddlepaddle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/engine/frameworktest"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// podIP is the POD_IP_DUMMY downward-API variable.
var podIP = corev1.EnvVar{Name: "POD_IP_DUMMY", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}

func with(base []corev1.EnvVar, extra ...corev1.EnvVar) []corev1.EnvVar {
	return append(append([]corev1.EnvVar{}, base...), extra...)
}

func defaulted(w *testjobs.PaddleJobWrapper) *kubeflowv1.PaddleJob {
	j := w.Obj()
	kubeflowv1.SetDefaults_PaddleJob(j)
	return j
}

func TestEnvVars(t *testing.T) {
	collective := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(3))
	customPort := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2).Port("Worker", 37777))
	ps := defaulted(testjobs.MakePaddleJob("pd", "ns").Master(2).Workers(2).Port("Master", 37777))
	base := func(n string) []corev1.EnvVar {
		return testjobs.Env("PYTHONUNBUFFERED", "1", "PADDLE_JOB_ID", "pd", "PADDLE_NNODES", n)
	}
	cases := map[string]struct {
		job   *kubeflowv1.PaddleJob
		rtype kubeflowv1.ReplicaType
		index int
		want  []corev1.EnvVar
	}{
		"collective worker 0 advertises its pod IP": {
			job: collective, rtype: "Worker", index: 0,
			want: with(base("3"), podIP, corev1.EnvVar{Name: "PADDLE_MASTER", Value: "$(POD_IP_DUMMY):36543"}),
		},
		"collective worker 2 points at worker 0": {
			job: collective, rtype: "Worker", index: 2,
			want: with(base("3"), testjobs.Env("PADDLE_MASTER", "pd-worker-0:36543")...),
		},
		"collective with a custom master port": {
			job: customPort, rtype: "Worker", index: 1,
			want: with(base("2"), testjobs.Env("PADDLE_MASTER", "pd-worker-0:37777")...),
		},
		"ps mode master 0": {
			job: ps, rtype: "Master", index: 0,
			want: with(base("4"), podIP, corev1.EnvVar{Name: "PADDLE_MASTER", Value: "$(POD_IP_DUMMY):37777"},
				corev1.EnvVar{Name: "PADDLE_SERVER_NUM", Value: "1"}),
		},
		"ps mode master 1": {
			job: ps, rtype: "Master", index: 1,
			want: with(base("4"), testjobs.Env("PADDLE_MASTER", "pd-master-0:37777", "PADDLE_SERVER_NUM", "1")...),
		},
		"ps mode worker 0 is a trainer": {
			job: ps, rtype: "Worker", index: 0,
			want: with(base("4"), testjobs.Env("PADDLE_MASTER", "pd-master-0:37777", "PADDLE_TRAINER_NUM", "1")...),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, envVars(tc.job, tc.rtype, tc.index)); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPortFallsBackToDefault(t *testing.T) {
	j := testjobs.MakePaddleJob("pd", "ns").Workers(2).Obj()
	j.Spec.PaddleReplicaSpecs["Worker"].Template.Spec.Containers[0].Name = "main"
	kubeflowv1.SetDefaults_PaddleJob(j) // the port lands on "main", which v1 does not read
	got := envVars(j, "Worker", 1)
	if diff := cmp.Diff(corev1.EnvVar{Name: "PADDLE_MASTER", Value: "pd-worker-0:36543"}, got[len(got)-1]); diff != "" {
		t.Errorf("PADDLE_MASTER (-want +got):\n%s", diff)
	}
}

// Names, labels, owner, restartPolicy and Services are the conformance
// test's; here only the Paddle wiring of the pod.
func TestConformance(t *testing.T) {
	frameworktest.Conformance(t, New(Options{}), map[string]*kubeflowv1.PaddleJob{
		"collective": testjobs.MakePaddleJob("pd", "ns").Workers(3).Obj(),
		"ps":         testjobs.MakePaddleJob("pd", "ns").Master(2).Workers(2).Obj(),
	})
}

func TestBuildPod(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakePaddleJob("pd", "ns").UID("uid-1").Workers(2))
	pod, _, err := engine.BuildPod(fw, j, "Worker", 0, j.Spec.PaddleReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "paddle",
		Image:   testjobs.PaddleImage,
		Command: []string{"python", "/workspace/train.py"},
		Ports:   []corev1.ContainerPort{{Name: "master", ContainerPort: 36543}},
		Env: with(testjobs.Env("PYTHONUNBUFFERED", "1", "PADDLE_JOB_ID", "pd", "PADDLE_NNODES", "2"),
			podIP, corev1.EnvVar{Name: "PADDLE_MASTER", Value: "$(POD_IP_DUMMY):36543"}),
	}}}
	// restartPolicy is the conformance test's.
	if diff := cmp.Diff(want, pod.Spec, cmpopts.IgnoreFields(corev1.PodSpec{}, "RestartPolicy")); diff != "" {
		t.Errorf("pod spec (-want +got):\n%s", diff)
	}
}

func TestReplicaTypesAndMasterRole(t *testing.T) {
	fw := New(Options{})
	ps := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2).Master(2))
	collective := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2))
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Master", "Worker"}, fw.ReplicaTypes(ps)); diff != "" {
		t.Errorf("replica types (-want +got):\n%s", diff)
	}
	cases := []struct {
		name  string
		job   *kubeflowv1.PaddleJob
		rtype kubeflowv1.ReplicaType
		index int
		want  bool
	}{
		{"master 0", ps, "Master", 0, true},
		{"master 1", ps, "Master", 1, true},
		{"ps worker 0", ps, "Worker", 0, false},
		{"collective worker 0", collective, "Worker", 0, false},
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
	ps := defaulted(testjobs.MakePaddleJob("pd", "ns").Master(2).Workers(2))
	collective := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2))
	elastic := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2).Elastic(1, 3))
	psV := func(running, succeeded bool) engine.Verdict {
		return engine.Verdict{Running: running, Succeeded: succeeded,
			RunningMessage: "PaddleJob pd is running.", SucceededMessage: "PaddleJob pd is successfully completed."}
	}
	colV := func(running, succeeded bool) engine.Verdict {
		return engine.Verdict{Running: running, Succeeded: succeeded,
			RunningMessage: "PaddleJob ns/pd is running.", SucceededMessage: "PaddleJob ns/pd successfully completed."}
	}
	cases := map[string]struct {
		job      *kubeflowv1.PaddleJob
		statuses statuses
		want     engine.Verdict
	}{
		"ps: master running":                 {job: ps, statuses: statuses{"Master": st(2, 0), "Worker": st(2, 0)}, want: psV(true, false)},
		"ps: one of two masters done":        {job: ps, statuses: statuses{"Master": st(1, 1), "Worker": st(0, 2)}, want: psV(true, false)},
		"ps: all masters done":               {job: ps, statuses: statuses{"Master": st(0, 2), "Worker": st(2, 0)}, want: psV(false, true)},
		"collective: running":                {job: collective, statuses: statuses{"Worker": st(2, 0)}, want: colV(true, false)},
		"collective: needs all workers":      {job: collective, statuses: statuses{"Worker": st(1, 1)}, want: colV(true, false)},
		"collective: all workers":            {job: collective, statuses: statuses{"Worker": st(0, 2)}, want: colV(false, true)},
		"elastic: no any-worker shortcut":    {job: elastic, statuses: statuses{"Worker": st(1, 1)}, want: colV(true, false)},
		"collective: missing status is zero": {job: collective, statuses: statuses{}, want: colV(false, false)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fw.Evaluate(tc.job, engine.ReplicaView{Specs: tc.job.Spec.PaddleReplicaSpecs, Statuses: tc.statuses})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredHPA(t *testing.T) {
	if engine.DesiredHPA(New(Options{}), defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2).Elastic(1, 3))) != nil {
		t.Error("no metrics, no HPA")
	}
	if engine.DesiredHPA(New(Options{}), defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2))) != nil {
		t.Error("not elastic, no HPA")
	}
	h := engine.DesiredHPA(New(Options{}), defaulted(testjobs.MakePaddleJob("pd", "ns").UID("u").Workers(2).Elastic(1, 3, testjobs.CPUMetric(80))))
	want := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pd", Namespace: "ns",
			Labels: map[string]string{kubeflowv1.OperatorNameLabel: "paddlejob-controller", kubeflowv1.JobNameLabel: "pd"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PaddleJob", Name: "pd", UID: "u",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "PaddleJob", Name: "pd", APIVersion: "kubeflow.org/v1"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    3,
			Metrics:        []autoscalingv2.MetricSpec{testjobs.CPUMetric(80)},
		},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("HPA (-want +got):\n%s", diff)
	}
}

func TestIdentity(t *testing.T) {
	fw := New(Options{})
	info := fw.NewJob().KindInfo()
	got := []string{info.Kind, info.ControllerName, info.FrameworkName, info.DefaultContainerName, kubeflowv1.PaddleJobDefaultPortName}
	want := []string{"PaddleJob", "paddlejob-controller", "paddle", "paddle", "master"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}
}

// The elastic bounds that the user left unset follow Worker.replicas after
// a scale or an edit: defaulted as stored, scaled, defaulted again as the
// reconciler does.
func TestDesiredHPAFollowsWorkerReplicas(t *testing.T) {
	job := defaulted(testjobs.MakePaddleJob("pd", "ns").Workers(2))
	job.Spec.ElasticPolicy = &kubeflowv1.PaddleElasticPolicy{Metrics: []autoscalingv2.MetricSpec{testjobs.CPUMetric(80)}}
	kubeflowv1.SetDefaults_PaddleJob(job)
	job.Spec.PaddleReplicaSpecs["Worker"].Replicas = ptr.To[int32](5)
	kubeflowv1.SetDefaults_PaddleJob(job)

	h := engine.DesiredHPA(New(Options{}), job)
	if h == nil {
		t.Fatal("no HPA")
	}
	got := []int32{ptr.Deref(h.Spec.MinReplicas, -1), h.Spec.MaxReplicas}
	if diff := cmp.Diff([]int32{5, 5}, got); diff != "" {
		t.Errorf("HPA min/max (-want +got):\n%s", diff)
	}
}
