package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// A finished job's pods go by its cleanPodPolicy; unset, a job with a
// failure policy that failed loses its still-running pods (hung ranks hold
// their GPUs) and keeps the failed ones for their logs. Everything else
// keeps v1's None.
func TestFinishCleansUp(t *testing.T) {
	pod := func(name, rt, idx string, phase corev1.PodPhase) *corev1.Pod {
		return testjobs.MakePod(name, "ns").UID(name).Label(kubeflowv1.ReplicaTypeLabel, rt).
			Label(kubeflowv1.ReplicaIndexLabel, idx).Phase(phase).Obj()
	}
	pods := []*corev1.Pod{
		pod("j-master-0", "master", "0", corev1.PodRunning),
		pod("j-worker-0", "worker", "0", corev1.PodFailed),
		pod("j-worker-1", "worker", "1", corev1.PodPending),
		pod("j-worker-2", "worker", "2", corev1.PodSucceeded),
	}
	fp := testjobs.MakeFailurePolicy(1).Obj()
	failed := kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobFailed, corev1.ConditionTrue, "PyTorchJobFailed")}}
	succeeded := kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "PyTorchJobSucceeded")}}
	running := []string{"delete pod j-master-0", "delete pod j-worker-1", "teardown"}
	cases := []struct {
		name   string
		job    *testjobs.PyTorchJobWrapper
		status kubeflowv1.JobStatus
		want   []string
	}{
		{name: "failed, failure policy, cleanPodPolicy unset: the running and pending pods",
			job: testjobs.MakePyTorchJob("j", "ns").FailurePolicy(fp), status: failed, want: running},
		{name: "failed, failure policy, None set: kept",
			job: testjobs.MakePyTorchJob("j", "ns").FailurePolicy(fp).CleanPodPolicy(kubeflowv1.CleanPodPolicyNone), status: failed,
			want: []string{"teardown"}},
		{name: "failed, failure policy, All set: every pod",
			job: testjobs.MakePyTorchJob("j", "ns").FailurePolicy(fp).CleanPodPolicy(kubeflowv1.CleanPodPolicyAll), status: failed,
			want: []string{"delete pod j-master-0", "delete pod j-worker-0", "delete pod j-worker-1", "delete pod j-worker-2", "teardown"}},
		{name: "succeeded, failure policy, cleanPodPolicy unset: v1's None",
			job: testjobs.MakePyTorchJob("j", "ns").FailurePolicy(fp), status: succeeded, want: []string{"teardown"}},
		{name: "failed, no failure policy: v1's None",
			job: testjobs.MakePyTorchJob("j", "ns"), status: failed, want: []string{"teardown"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := tc.job.UID("job").Master(1).Workers(3).Obj()
			job.ApplyDefaults() // as the webhook and every pass do
			r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
			p := &plan{status: *tc.status.DeepCopy()}
			r.finish(job, bucketChildren(job.Spec.PyTorchReplicaSpecs, pods, nil, nil), p)
			if diff := cmp.Diff(tc.want, writesOf(p)); diff != "" {
				t.Errorf("child writes (-want +got):\n%s", diff)
			}
		})
	}
}
