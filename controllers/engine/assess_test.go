package engine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// A pod deleted by someone else ends in phase Failed while it terminates
// (the kubelet or PodGC writes the final phase before removing it). Found by
// the model test (test/integration/model): under Never and ExitCode the job
// failed on the killed container's code although the pod had been deleted,
// and a deletion is retryable whatever the policy and code.
func TestAssessFailedWhileDeletedIsARetry(t *testing.T) {
	for _, policy := range []kubeflowv1.RestartPolicy{kubeflowv1.RestartPolicyNever, kubeflowv1.RestartPolicyExitCode} {
		job := testjobs.MakePyTorchJob("j", "ns").UID("job").Workers(2).RestartPolicy(policy).Obj()
		specs := job.Spec.PyTorchReplicaSpecs
		worker := func(name string) *testjobs.PodWrapper {
			return testjobs.MakePod(name, "ns").Label(kubeflowv1.ReplicaTypeLabel, "worker").Phase(corev1.PodFailed).Terminated("pytorch", 1, "Error")
		}
		deleted := worker("j-worker-0").Label(kubeflowv1.ReplicaIndexLabel, "0").UID("deleted").Terminating().Obj()
		failed := worker("j-worker-1").Label(kubeflowv1.ReplicaIndexLabel, "1").UID("failed").Obj()
		r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
		a := r.assess(job, bucketChildren(specs, []*corev1.Pod{deleted, failed}, nil, nil), nil, specs, time.Now())
		if len(a.retries) != 1 || a.retries[0].Pod != "j-worker-0" || !a.retries[0].Disrupted {
			t.Errorf("%s: retries = %+v, want the deleted j-worker-0 as a disruption", policy, a.retries)
		}
		if a.newlyCounted != 1 {
			t.Errorf("%s: newlyCounted = %d, want 1", policy, a.newlyCounted)
		}
		if len(a.terminal) != 1 || a.terminal[0].Pod != "j-worker-1" {
			t.Errorf("%s: terminal = %+v, want only j-worker-1 (failed, not deleted)", policy, a.terminal)
		}
	}
}
