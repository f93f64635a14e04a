package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestEndedBySuspension(t *testing.T) {
	pod := func() *testjobs.PodWrapper { return testjobs.MakePod("j-worker-0", "ns").UID("w0") }
	cases := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{name: "no condition", pod: pod().Terminating().Obj()},
		{name: "marked by the suspension", pod: pod().DisruptionTarget(kubeflowv1.SuspendedDisruptionReason).Terminating().Obj(), want: true},
		{name: "evicted by someone else", pod: pod().DisruptionTarget("EvictionByEvictionAPI").Terminating().Obj()},
		{name: "preempted by the scheduler", pod: pod().DisruptionTarget("PreemptionByScheduler").Obj()},
		{name: "our reason, not True", pod: pod().Condition(corev1.DisruptionTarget, corev1.ConditionFalse, kubeflowv1.SuspendedDisruptionReason, "", fpT0).Obj()},
	}
	for _, tc := range cases {
		if got := endedBySuspension(tc.pod); got != tc.want {
			t.Errorf("%s: endedBySuspension = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// suspendedWorker is worker i terminating after the suspension deleted
// it: its container exits 143 on SIGTERM.
func suspendedWorker(i int, marked bool) *corev1.Pod {
	w := testjobs.MakePod("j-worker-"+string(rune('0'+i)), "ns").UID("w"+string(rune('0'+i))).
		Label(kubeflowv1.ReplicaTypeLabel, "worker").Label(kubeflowv1.ReplicaIndexLabel, string(rune('0'+i))).
		Phase(corev1.PodFailed).Terminated("pytorch", 143, "Error").Terminating()
	if marked {
		w = w.DisruptionTarget(kubeflowv1.SuspendedDisruptionReason)
	}
	return w.Obj()
}

// A pod the suspension deleted is no failure once the process that deleted
// it is gone (a new process has no memory of the deletion): neither for
// the failure policy nor for backoffLimit, terminating or vanished.
func TestSuspendedPodsAreNoFailure(t *testing.T) {
	cases := []struct {
		name          string
		pods          []*corev1.Pod
		wantJudged    []string
		wantRetries   []string
		wantNewlyCnt  int32
		vanishedToo   bool
		wantVanishCnt int32
	}{
		{name: "marked pods", pods: []*corev1.Pod{suspendedWorker(0, true), suspendedWorker(1, true)}},
		{
			name:       "an unmarked pod deleted by someone else still counts",
			pods:       []*corev1.Pod{suspendedWorker(0, true), suspendedWorker(1, false)},
			wantJudged: []string{"j-worker-1"}, wantRetries: []string{"j-worker-1"}, wantNewlyCnt: 1,
		},
	}
	for _, tc := range cases {
		withPolicy := testjobs.MakePyTorchJob("j", "ns").UID("job").Workers(2).FailurePolicy(testjobs.MakeFailurePolicy(0).Obj()).Obj()
		withBackoff := testjobs.MakePyTorchJob("j", "ns").UID("job").Workers(2).BackoffLimit(0).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
		r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}

		specs := withPolicy.Spec.PyTorchReplicaSpecs
		var judged []string
		for _, f := range r.currentFailures(withPolicy, bucketChildren(specs, tc.pods, nil, nil), specs) {
			judged = append(judged, f.Pod)
		}
		if diff := cmp.Diff(tc.wantJudged, judged); diff != "" {
			t.Errorf("%s: failures judged by the policy (-want +got):\n%s", tc.name, diff)
		}

		specs = withBackoff.Spec.PyTorchReplicaSpecs
		a := r.assess(withBackoff, bucketChildren(specs, tc.pods, nil, nil), nil, specs, fpT0)
		var retries []string
		for _, f := range a.retries {
			retries = append(retries, f.Pod)
		}
		if diff := cmp.Diff(tc.wantRetries, retries); diff != "" || a.newlyCounted != tc.wantNewlyCnt {
			t.Errorf("%s: retries (-want +got):\n%s newlyCounted %d, want %d", tc.name, diff, a.newlyCounted, tc.wantNewlyCnt)
		}
		// Gone from the cache before any pass saw them terminating.
		a = r.assess(withBackoff, bucketChildren(specs, nil, nil, nil), tc.pods, specs, fpT0)
		if a.newlyCounted != tc.wantNewlyCnt {
			t.Errorf("%s: vanished pods counted %d, want %d", tc.name, a.newlyCounted, tc.wantNewlyCnt)
		}
	}
}

// A suspension marks each running pod before it deletes it, and leaves a
// pod that already ended (or is being deleted) for another reason unmarked.
func TestSuspendMarksBeforeDelete(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).
		FailurePolicy(testjobs.MakeFailurePolicy(0).Obj()).Suspend(true).Obj()
	var writes []string
	funcs := interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				writes = append(writes, "mark "+obj.GetName())
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				writes = append(writes, "delete "+obj.GetName())
			}
			return c.Delete(ctx, obj, opts...)
		},
	}
	h := newHarness(t, fakeFramework{}, job, Options{Fanout: 1}, funcs)
	running := testjobs.MakePod("j-master-0", "ns").Label(kubeflowv1.ReplicaTypeLabel, "master").Label(kubeflowv1.ReplicaIndexLabel, "0").
		ControlledBy("PyTorchJob", "j", "job-uid").Phase(corev1.PodRunning).Obj()
	failed := testjobs.MakePod("j-worker-0", "ns").Label(kubeflowv1.ReplicaTypeLabel, "worker").Label(kubeflowv1.ReplicaIndexLabel, "0").
		ControlledBy("PyTorchJob", "j", "job-uid").Phase(corev1.PodFailed).Terminated("pytorch", 1, "Error").Obj()
	for _, p := range []*corev1.Pod{running, failed} {
		p.Spec.Containers = []corev1.Container{{Name: "pytorch", Image: "x"}}
		if err := h.c.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	h.reconcile()
	want := []string{"mark j-master-0", "delete j-master-0", "delete j-worker-0"}
	if diff := cmp.Diff(want, writes); diff != "" {
		t.Errorf("pod writes (-want +got):\n%s", diff)
	}
}

// What a failed mark does to the pod's deletion: a pod gone or replaced is
// not deleted, RBAC without pods/status suspends as before (unmarked), and
// any other error keeps the pod for the next pass.
func TestMarkSuspendedErrors(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	cases := []struct {
		name       string
		err        error
		wantDelete []string
		wantErr    bool
	}{
		{name: "marked", wantDelete: []string{"j-master-0"}},
		{name: "gone", err: apierrors.NewNotFound(gr, "j-master-0")},
		{name: "replaced (UID precondition)", err: apierrors.NewConflict(gr, "j-master-0", errors.New("uid"))},
		{name: "forbidden", err: apierrors.NewForbidden(gr, "j-master-0", errors.New("rbac")), wantDelete: []string{"j-master-0"}},
		{name: "server error", err: apierrors.NewInternalError(errors.New("boom")), wantErr: true},
	}
	for _, tc := range cases {
		job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Obj()
		h := newHarness(t, fakeFramework{}, job, Options{Fanout: 1}, interceptor.Funcs{
			SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
				return tc.err
			},
		})
		pod := testjobs.MakePod("j-master-0", "ns").UID("m0").Phase(corev1.PodRunning).Obj()
		got, err := h.r.markSuspended(context.Background(), job, []*corev1.Pod{pod}, metav1.NewTime(fpT0))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
		if diff := cmp.Diff(tc.wantDelete, podNamesOf(got)); diff != "" {
			t.Errorf("%s: pods to delete (-want +got):\n%s", tc.name, diff)
		}
	}
}
