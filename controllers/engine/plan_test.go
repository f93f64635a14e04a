package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// writesOf lists what a plan says the pass does, in the order apply runs
// it: the child writes, "then" and the conditions the status has once
// they succeeded, and the pod writes after the status write (releases and
// retry deletions; "then release" are those of the status after the child
// writes).
func writesOf(p *plan) []string {
	var out []string
	w := p.children
	for _, o := range w.adopt {
		out = append(out, "adopt "+o.GetName())
	}
	for i, b := range w.creates {
		for _, o := range b.objs {
			kind := "service"
			if _, ok := o.(*corev1.Pod); ok {
				kind = "pod"
			}
			out = append(out, fmt.Sprintf("create[%d] %s %s", i, kind, o.GetName()))
		}
	}
	for _, p := range w.deletePods {
		out = append(out, "delete pod "+p.Name)
	}
	for _, s := range w.deleteServices {
		out = append(out, "delete service "+s.Name)
	}
	if w.teardown {
		out = append(out, "teardown")
	}
	if w.deleteJob {
		out = append(out, "delete job")
	}
	podWrites := func(prefix string, r releases) {
		for _, pod := range r.release {
			out = append(out, prefix+"release "+pod.Name)
		}
		for _, pod := range r.track {
			out = append(out, prefix+"track "+pod.Name)
		}
		if r.releasedOld {
			out = append(out, prefix+"released old attempt")
		}
	}
	podWrites("", p.releases)
	if a := p.afterWrites; a != nil {
		out = append(out, "then "+strings.Join(conditionTypes(a.status), ","))
		podWrites("then ", a.releases)
	}
	for _, pod := range p.retryDeletes {
		out = append(out, "retry-delete pod "+pod.Name)
	}
	return out
}

// Planning a pass writes nothing to the job's children: every write is in
// the plan, releases and a whole-job restart's deletions included, and
// apply carries it out.
func TestPlanPassOnlyPlansChildWrites(t *testing.T) {
	finished := func(j *kubeflowv1.PyTorchJob) {
		j.Status.Conditions = []kubeflowv1.JobCondition{cond(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "PyTorchJobSucceeded")}
	}
	allPods := []string{"j-master-0", "j-worker-0", "j-worker-1"}
	each := func(prefix string) []string {
		var out []string
		for _, p := range allPods {
			out = append(out, prefix+p)
		}
		return out
	}
	cases := map[string]struct {
		// job is the job created (default: 1 master, 2 workers).
		job *kubeflowv1.PyTorchJob
		// change turns the job whose children exist into the one planned;
		// pods changes its pods.
		change func(*kubeflowv1.PyTorchJob)
		pods   func(*harness)
		fresh  bool
		want   []string
	}{
		"new job": {fresh: true, want: []string{
			"create[0] service j-master-0", "create[0] pod j-master-0",
			"create[0] service j-worker-0", "create[0] pod j-worker-0",
			"create[0] service j-worker-1", "create[0] pod j-worker-1", "then Created=True"}},
		"nothing missing": {change: func(*kubeflowv1.PyTorchJob) {}, want: []string{"then Created=True"}},
		"scaled down": {
			change: func(j *kubeflowv1.PyTorchJob) { j.Spec.PyTorchReplicaSpecs["Worker"].Replicas = new(int32(1)) },
			want:   []string{"delete pod j-worker-1", "delete service j-worker-1", "then Created=True"}},
		"finished, cleanPodPolicy All": {
			change: func(j *kubeflowv1.PyTorchJob) {
				finished(j)
				j.Spec.RunPolicy.CleanPodPolicy = new(kubeflowv1.CleanPodPolicyAll)
			},
			want: []string{"delete pod j-master-0", "delete pod j-worker-0", "delete pod j-worker-1",
				"delete service j-master-0", "delete service j-worker-0", "delete service j-worker-1", "teardown"}},
		"finished, TTL passed": {
			change: func(j *kubeflowv1.PyTorchJob) {
				finished(j)
				j.Spec.RunPolicy.CleanPodPolicy = new(kubeflowv1.CleanPodPolicyNone)
				j.Spec.RunPolicy.TTLSecondsAfterFinished = new(int32(0))
			},
			want: []string{"teardown", "delete job"}},
		"suspended": {
			change: func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = new(true) },
			want: []string{"delete pod j-master-0", "delete pod j-worker-0", "delete pod j-worker-1",
				"delete service j-master-0", "delete service j-worker-0", "delete service j-worker-1", "teardown",
				"then Created=True,Suspended=True"}},
		"tracked, finished: every finalizer released": {
			job:    testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).BackoffLimit(3).Obj(),
			change: finished,
			want:   append([]string{"teardown"}, each("release ")...)},
		"tracked, suspended: released once suspended": {
			job:    testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).BackoffLimit(3).Obj(),
			change: func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = new(true) },
			want: slices.Concat([]string{"delete pod j-master-0", "delete pod j-worker-0", "delete pod j-worker-1",
				"delete service j-master-0", "delete service j-worker-0", "delete service j-worker-1", "teardown"},
				each("release "), []string{"then Created=True,Suspended=True"}, each("then release "))},
		"failure policy: a failed worker restarts the whole job": {
			job: testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).
				RestartPolicy(kubeflowv1.RestartPolicyNever).FailurePolicy(testjobs.MakeFailurePolicy(2).Obj()).Obj(),
			change: func(*kubeflowv1.PyTorchJob) {},
			pods:   func(h *harness) { h.failPod("j-worker-1", 1) },
			want:   each("retry-delete pod ")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var planning atomic.Bool
			deny := func(what string, obj client.Object) error {
				if planning.Load() {
					t.Errorf("planning wrote: %s %T %s", what, obj, obj.GetName())
					return errors.New("no writes while planning")
				}
				return nil
			}
			job := tc.job
			if job == nil {
				job = testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).Obj()
			}
			h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					return errors.Join(deny("create", obj), c.Create(ctx, obj, opts...))
				},
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					return errors.Join(deny("delete", obj), c.Delete(ctx, obj, opts...))
				},
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					return errors.Join(deny("patch", obj), c.Patch(ctx, obj, patch, opts...))
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					return errors.Join(deny("update", obj), c.Update(ctx, obj, opts...))
				},
			})
			if !tc.fresh {
				h.reconcile()
				if tc.pods != nil {
					tc.pods(h)
				}
				job := h.job()
				tc.change(job)
				st := job.Status.DeepCopy() // the spec update returns the stored status
				if err := h.c.Update(context.Background(), job); err != nil {
					t.Fatal(err)
				}
				job.Status = *st
				if err := h.c.Status().Update(context.Background(), job); err != nil {
					t.Fatal(err)
				}
			}
			job = h.job()
			job.ApplyDefaults()
			p := &plan{status: *job.JobStatus().DeepCopy()}
			planning.Store(true)
			if err := h.r.planPass(context.Background(), job, p); err != nil {
				t.Fatalf("planPass: %v", err)
			}
			planning.Store(false)
			if diff := cmp.Diff(tc.want, writesOf(p)); diff != "" {
				t.Errorf("planned writes (-want +got):\n%s", diff)
			}
		})
	}
}

// What the success rule says is recorded only once the pass's children are
// written: a pass whose creates fail records no Running, as before the
// child writes moved out of planning.
func TestOutcomeWaitsForTheChildWrites(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	h := newHarness(t, runningFramework{}, job, Options{}, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok && fail.Load() {
				return errors.New("quota exceeded")
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key}); err == nil {
		t.Fatal("Reconcile with failing pod creates: want an error")
	}
	if diff := cmp.Diff([]string{"Created=True"}, conditionTypes(h.job().Status)); diff != "" {
		t.Errorf("conditions after failed creates (-want +got):\n%s", diff)
	}
	fail.Store(false)
	h.reconcile()
	if diff := cmp.Diff([]string{"Created=True", "Running=True"}, conditionTypes(h.job().Status)); diff != "" {
		t.Errorf("conditions after the creates (-want +got):\n%s", diff)
	}
}

// runningFramework's rule always says the job runs.
type runningFramework struct{ fakeFramework }

func (runningFramework) Evaluate(*kubeflowv1.PyTorchJob, ReplicaView) Verdict {
	return Verdict{Running: true, RunningMessage: "running"}
}

// brokenWorkerFramework creates in order (Master, then Worker) and cannot
// build a Worker pod.
type brokenWorkerFramework struct{ fakeFramework }

func (brokenWorkerFramework) CreateInOrder() bool { return true }
func (f brokenWorkerFramework) DecoratePod(job *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType, i int, pod *corev1.Pod) error {
	if rt == "Worker" {
		return errors.New("no worker today")
	}
	return f.fakeFramework.DecoratePod(job, rt, i, pod)
}

// A pod that cannot be built plans no creates at all, not the replica
// types before it: the pass fails and is retried.
func TestUnbuildablePodPlansNoCreates(t *testing.T) {
	h := newHarness(t, brokenWorkerFramework{}, testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj(), Options{}, interceptor.Funcs{})
	job := h.job()
	job.ApplyDefaults()
	p := &plan{status: *job.JobStatus().DeepCopy()}
	if err := h.r.planPass(context.Background(), job, p); err == nil {
		t.Fatal("planPass: want the Worker's build error")
	}
	if p.children.sync || len(p.children.creates) > 0 {
		t.Errorf("planned creates %v (sync %v), want none", writesOf(p), p.children.sync)
	}
}

// succeedingFramework's rule says the job succeeded once succeed is set.
type succeedingFramework struct {
	fakeFramework
	succeed *atomic.Bool
}

func (f succeedingFramework) Evaluate(*kubeflowv1.PyTorchJob, ReplicaView) Verdict {
	if f.succeed.Load() {
		return Verdict{Succeeded: true, SucceededMessage: "done"}
	}
	return Verdict{}
}

// The pass that records success releases the pods' tracking finalizers:
// apply takes the releases of the status the child writes lead to, not
// those of the status before them.
func TestReleasesFollowTheRecordedOutcome(t *testing.T) {
	succeed := &atomic.Bool{}
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).BackoffLimit(3).Obj()
	h := newHarness(t, succeedingFramework{succeed: succeed}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	pods := h.pods()
	if len(pods) != 2 || !hasTrackingFinalizer(&pods[0]) {
		t.Fatalf("want 2 tracked pods, got %d (finalizers %v)", len(pods), pods[0].Finalizers)
	}
	succeed.Store(true)
	h.reconcile()
	if !hasCondition(&h.job().Status, kubeflowv1.JobSucceeded) {
		t.Fatalf("job not Succeeded: %v", conditionTypes(h.job().Status))
	}
	for _, p := range h.pods() {
		if hasTrackingFinalizer(&p) {
			t.Errorf("pod %s keeps its tracking finalizer after the pass that recorded success", p.Name)
		}
	}
}
