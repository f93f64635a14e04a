package engine

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// pod returns the job's pod of that name as the cache holds it.
func (h *harness) pod(name string) *corev1.Pod {
	h.t.Helper()
	var pod corev1.Pod
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.key.Namespace, Name: name}, &pod); err != nil {
		h.t.Fatal(err)
	}
	return &pod
}

// removePod deletes a pod at once, as KWOK does, and delivers its delete
// event to the pod watch's predicates.
func (h *harness) removePod(pod *corev1.Pod, deliver bool) {
	h.t.Helper()
	if len(pod.Finalizers) > 0 {
		pod.Finalizers = nil
		if err := h.c.Update(context.Background(), pod); err != nil {
			h.t.Fatal(err)
		}
	} else if err := h.c.Delete(context.Background(), pod); err != nil {
		h.t.Fatal(err)
	}
	if deliver {
		h.deliverDelete(pod)
	}
}

func (h *harness) deliverDelete(pod *corev1.Pod) {
	e := ctrlevent.DeleteEvent{Object: pod}
	h.r.goneFromCache("pod/").Delete(e)
	h.r.podLeft().Delete(e)
}

func (h *harness) restartCount() int32 { return h.job().Status.RestartCount }

// expectOneRestartAndNoMemory checks that exactly one restart was counted
// and that nothing of it is left in the vanished-pod memory.
func (h *harness) expectOneRestartAndNoMemory(when string) {
	h.t.Helper()
	if n := h.restartCount(); n != 1 {
		h.t.Errorf("%s: restartCount = %d, want 1", when, n)
	}
	if n := h.r.memory.sizes().Vanished; n != 0 {
		h.t.Errorf("%s: vanished memory holds %d jobs, want 0", when, n)
	}
}

// uniqueUIDs gives every created object a UID, as the API server does (the
// fake client leaves it empty, which would make every pod the same one).
func uniqueUIDs() interceptor.Funcs {
	n := 0
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetUID() == "" {
			n++
			obj.SetUID(types.UID(fmt.Sprintf("%s-%d", obj.GetName(), n)))
		}
		return c.Create(ctx, obj, opts...)
	}}
}

// A pod someone else deletes that is gone before any pass saw it
// terminating (KWOK removes it within milliseconds) is a restart all the
// same: the controller integration spec "a pod deleted by someone else is
// recreated and counted" failed about once in fifty runs without this.
func TestVanishedPodIsCounted(t *testing.T) {
	for _, policy := range []kubeflowv1.RestartPolicy{kubeflowv1.RestartPolicyNever, kubeflowv1.RestartPolicyOnFailure, kubeflowv1.RestartPolicyExitCode} {
		t.Run(string(policy), func(t *testing.T) {
			job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).RestartPolicy(policy).Obj()
			h := newHarness(t, fakeFramework{}, job, Options{}, uniqueUIDs())
			h.reconcile()
			old := h.pod("j-worker-0")
			h.removePod(old, true)
			h.reconcile()
			st := h.job().Status
			if st.RestartCount != 1 || !hasCondition(&st, kubeflowv1.JobRestarting) {
				t.Fatalf("restartCount %d, conditions %v; want 1 and Restarting", st.RestartCount, conditionTypes(st))
			}
			if hasCondition(&st, kubeflowv1.JobFailed) {
				t.Fatalf("a deleted pod failed the job: %v", conditionTypes(st))
			}
			if p := h.pod("j-worker-0"); p.UID == old.UID {
				t.Fatalf("j-worker-0 was not recreated")
			}
			h.reconcile()
			h.expectOneRestartAndNoMemory("after another pass")
		})
	}
}

// terminatingWorker is an OnFailure 1+1 job whose worker someone deleted
// and a finalizer keeps terminating in the cache.
func terminatingWorker(t *testing.T) *harness {
	t.Helper()
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, uniqueUIDs())
	h.reconcile()
	pod := h.pod("j-worker-0")
	pod.Finalizers = []string{"test/hold"}
	if err := h.c.Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return h
}

// A terminating pod already counted by a pass is not counted again when it
// leaves the cache, whether its delete event comes before or after the
// pass that sees it gone (which drops it from status.countedPods).
func TestCountedPodIsNotCountedAgainWhenItLeaves(t *testing.T) {
	for _, eventFirst := range []bool{true, false} {
		h := terminatingWorker(t)
		h.reconcile()
		if n := h.restartCount(); n != 1 {
			t.Fatalf("restartCount of a terminating pod = %d, want 1", n)
		}
		pod := h.pod("j-worker-0")
		h.removePod(pod, eventFirst)
		h.reconcile()
		if !eventFirst {
			h.deliverDelete(pod)
			h.reconcile()
		}
		h.expectOneRestartAndNoMemory(fmt.Sprintf("event first %v, after the counted pod left", eventFirst))
	}
}

// A pass lists the job's pods before it reads the vanished ones, so a
// terminating pod that leaves the cache in between is both listed and
// recorded as vanished: it is one restart, not two.
func TestPodListedAndVanishedInOnePassIsCountedOnce(t *testing.T) {
	h := terminatingWorker(t)
	// The delete event is handled while the pass still sees the pod listed.
	h.deliverDelete(h.pod("j-worker-0"))
	h.reconcile()
	if n := h.restartCount(); n != 1 {
		t.Fatalf("restartCount = %d, want 1", n)
	}
	h.removePod(h.pod("j-worker-0"), false)
	h.reconcile()
	h.reconcile()
	h.expectOneRestartAndNoMemory("after the pod left")
}

// A pod deleted at once (no update with a deletion timestamp comes first)
// may be listed live by the pass that reads it as vanished: it is counted.
func TestPodListedLiveAndVanishedInOnePassIsCounted(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyNever).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, uniqueUIDs())
	h.reconcile()
	// The delete event is handled while the pass still lists the live pod.
	h.deliverDelete(h.pod("j-worker-0"))
	h.reconcile()
	if n := h.restartCount(); n != 1 {
		t.Fatalf("restartCount = %d, want 1", n)
	}
}

// Pods the job deletes itself (a counted failure's retry, cleanup) and
// pods that succeeded are no restart when they leave.
func TestOwnAndSucceededPodsLeavingAreNoRestart(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, uniqueUIDs())
	h.reconcile()
	h.failPod("j-worker-0", 1)
	failed := h.pod("j-worker-0")
	h.reconcile() // counts it and deletes it
	if n := h.restartCount(); n != 1 {
		t.Fatalf("restartCount = %d, want 1", n)
	}
	h.deliverDelete(failed)
	succeeded := h.pod("j-worker-1")
	succeeded.Status.Phase = corev1.PodSucceeded
	if err := h.c.Status().Update(context.Background(), succeeded); err != nil {
		t.Fatal(err)
	}
	h.removePod(succeeded, true)
	h.reconcile()
	h.expectOneRestartAndNoMemory("after our own retry deletion and a succeeded pod left")
}

// Pods the garbage collector deletes after their job went, or after a new
// job took its name, are nobody's restart and leave no record.
func TestPodsOfAGoneJobLeaveNoRecord(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("old-uid").Master(1).Workers(1).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, uniqueUIDs())
	h.reconcile()
	pods := h.pods()
	if err := h.c.Delete(context.Background(), h.job()); err != nil {
		t.Fatal(err)
	}
	next := testjobs.MakePyTorchJob("j", "ns").UID("new-uid").Master(1).Workers(1).Obj()
	for _, after := range []string{"the job went", "a new job took its name"} {
		if after == "a new job took its name" {
			if err := h.c.Create(context.Background(), next); err != nil {
				t.Fatal(err)
			}
		}
		for i := range pods {
			h.deliverDelete(&pods[i])
		}
		if n := h.r.memory.sizes().Vanished; n != 0 {
			t.Errorf("after %s: vanished memory holds %d jobs, want 0", after, n)
		}
	}
}
