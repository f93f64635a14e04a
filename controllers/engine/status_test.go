package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestDescribeFailure(t *testing.T) {
	cases := map[string]struct {
		pod  *corev1.Pod
		want podFailure
	}{
		"default container exit code": {
			pod:  testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Terminated("pytorch", 1, "Error").Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", Container: "pytorch", ExitCode: 1, Reason: "Error"},
		},
		"oom kill": {
			pod:  testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Terminated("pytorch", 137, "OOMKilled").Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", Container: "pytorch", ExitCode: 137, Reason: "OOMKilled"},
		},
		"sidecar failed, default container absent": {
			pod:  testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Terminated("sidecar", 2, "Error").Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", Container: "sidecar", ExitCode: 2, Reason: "Error"},
		},
		"no container status uses v1 sentinel": {
			pod:  testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", ExitCode: exitCodeUnknown},
		},
		"evicted": {
			pod:  testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Reason("Evicted").Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", ExitCode: exitCodeUnknown, Reason: "Evicted", Disrupted: true},
		},
		"evicted with a killed container names the eviction": {
			pod: testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Reason("Evicted").Terminated("pytorch", 137, "Error").
				DisruptionTarget("TerminationByKubelet").Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", Container: "pytorch", ExitCode: 137, Reason: "Evicted", Disrupted: true},
		},
		"disruption target": {
			pod: testjobs.MakePod("j-worker-0", "ns").Phase(corev1.PodFailed).Terminated("pytorch", 1, "Error").
				DisruptionTarget("PreemptionByScheduler").Obj(),
			want: podFailure{Pod: "j-worker-0", RType: "Worker", Container: "pytorch", ExitCode: 1, Reason: "Error", Disrupted: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := describeFailure(tc.pod, "Worker", "pytorch")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("describeFailure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShouldRetry(t *testing.T) {
	cases := []struct {
		policy kubeflowv1.RestartPolicy
		f      podFailure
		want   bool
	}{
		{kubeflowv1.RestartPolicyAlways, podFailure{ExitCode: 1}, true},
		{kubeflowv1.RestartPolicyOnFailure, podFailure{ExitCode: 1}, true},
		{kubeflowv1.RestartPolicyOnFailure, podFailure{ExitCode: 137}, true},
		{kubeflowv1.RestartPolicyExitCode, podFailure{ExitCode: 1}, false},
		{kubeflowv1.RestartPolicyExitCode, podFailure{ExitCode: 127}, false},
		{kubeflowv1.RestartPolicyExitCode, podFailure{ExitCode: 128}, true},
		{kubeflowv1.RestartPolicyExitCode, podFailure{ExitCode: 137}, true},
		{kubeflowv1.RestartPolicyExitCode, podFailure{ExitCode: exitCodeUnknown}, true},
		{kubeflowv1.RestartPolicyExitCode, podFailure{ExitCode: 1, Disrupted: true}, true},
		{kubeflowv1.RestartPolicyNever, podFailure{ExitCode: 1}, false},
		{kubeflowv1.RestartPolicyNever, podFailure{ExitCode: 137}, false},
	}
	for _, tc := range cases {
		if got := shouldRetry(tc.policy, tc.f); got != tc.want {
			t.Errorf("shouldRetry(%s, %+v) = %v, want %v", tc.policy, tc.f, got, tc.want)
		}
	}
}

func TestBackoffExceeded(t *testing.T) {
	cases := []struct {
		limit              *int32
		recorded, new, ctr int32
		want               bool
	}{
		{nil, 100, 1, 0, false},
		{ptr.To[int32](0), 0, 1, 0, true},
		{ptr.To[int32](0), 0, 0, 0, false},
		{ptr.To[int32](2), 1, 1, 0, false},
		{ptr.To[int32](2), 2, 1, 0, true},
		{ptr.To[int32](2), 0, 0, 3, true},
		{ptr.To[int32](2), 1, 0, 1, false},
	}
	for _, tc := range cases {
		a := assessment{newlyCounted: tc.new, containerRestarts: tc.ctr}
		if got := a.backoffExceeded(tc.limit, tc.recorded); got != tc.want {
			t.Errorf("limit=%v recorded=%d new=%d containers=%d: got %v, want %v",
				ptr.Deref(tc.limit, -1), tc.recorded, tc.new, tc.ctr, got, tc.want)
		}
	}
}

func TestFailureMessageNamesPodContainerCodeReason(t *testing.T) {
	a := assessment{terminal: []podFailure{{Pod: "j-worker-1", RType: "Worker", Container: "pytorch", ExitCode: 137, Reason: "OOMKilled"}}}
	want := "PyTorchJob j is failed because 1 Worker replica(s) failed. Pod j-worker-1: container pytorch exited with code 137 (OOMKilled)."
	if got := resolve(fakeFramework{}).failureMessage(testjobs.MakePyTorchJob("j", "ns").Obj(), a); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestReplicaStatuses(t *testing.T) {
	specs := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj().Spec.PyTorchReplicaSpecs
	pods := []*corev1.Pod{
		testjobs.MakePod("j-master-0", "ns").Label(kubeflowv1.ReplicaTypeLabel, "master").Phase(corev1.PodRunning).Obj(),
		testjobs.MakePod("j-worker-0", "ns").Label(kubeflowv1.ReplicaTypeLabel, "worker").Phase(corev1.PodSucceeded).Obj(),
		testjobs.MakePod("j-worker-1", "ns").Label(kubeflowv1.ReplicaTypeLabel, "worker").Phase(corev1.PodFailed).Obj(),
		testjobs.MakePod("j-worker-2", "ns").Label(kubeflowv1.ReplicaTypeLabel, "worker").Phase(corev1.PodRunning).Terminating().Obj(),
		testjobs.MakePod("j-worker-3", "ns").Label(kubeflowv1.ReplicaTypeLabel, "worker").Phase(corev1.PodPending).Obj(),
	}
	got := replicaStatuses("fake-controller", "j", specs, pods)
	want := map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{
		"Master": {Active: 1, Selector: "training.kubeflow.org/job-name=j,training.kubeflow.org/operator-name=fake-controller,training.kubeflow.org/replica-type=master"},
		"Worker": {Succeeded: 1, Failed: 2, Selector: "training.kubeflow.org/job-name=j,training.kubeflow.org/operator-name=fake-controller,training.kubeflow.org/replica-type=worker"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replicaStatuses (-want +got):\n%s", diff)
	}
}

func TestStillPresent(t *testing.T) {
	pods := []*corev1.Pod{testjobs.MakePod("a", "ns").UID("uid-a").Obj(), testjobs.MakePod("c", "ns").UID("uid-c").Obj()}
	if diff := cmp.Diff([]string{"uid-a"}, stillPresent([]string{"uid-a", "uid-b"}, pods)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := stillPresent([]string{"uid-b"}, pods); got != nil {
		t.Errorf("all gone: got %v, want nil (the field is omitted)", got)
	}
}
