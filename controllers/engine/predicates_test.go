package engine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestPodMatters(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := func() *testjobs.PodWrapper {
		return testjobs.MakePod("p", "ns").UID("u1").Label("a", "b").ControlledBy("PyTorchJob", "j", "j1").Phase(corev1.PodPending)
	}
	running := func() *testjobs.PodWrapper { return base().Phase(corev1.PodRunning).Running("pytorch") }
	cases := []struct {
		name          string
		before, after *corev1.Pod
		want          bool
	}{
		{"resourceVersion only", base().Obj(), withRV(base().Obj(), "2"), false},
		{"bound to a node", base().Obj(), bind(base().Condition(corev1.PodScheduled, corev1.ConditionTrue, "", "", t0).Obj()), false},
		{"readiness flips", running().Obj(), ready(running().Condition(corev1.PodReady, corev1.ConditionTrue, "", "", t0).Obj()), false},
		{"annotation", base().Obj(), annotate(base().Obj()), false},
		{"starts running", base().Obj(), running().Obj(), true},
		{"label", base().Obj(), base().Label("c", "d").Obj(), true},
		{"controller", base().Obj(), testjobs.MakePod("p", "ns").UID("u1").Label("a", "b").ControlledBy("PyTorchJob", "j", "j2").Phase(corev1.PodPending).Obj(), true},
		{"deleted", running().Obj(), running().Terminating().Obj(), true},
		{"terminated", running().Obj(), running().Terminated("pytorch", 1, "Error").Obj(), true},
		{"restarted", running().Obj(), running().Restarts("pytorch", 1).Obj(), true},
		{"waiting reason", base().Obj(), base().Waiting("pytorch", "ErrImagePull", "no such image").Obj(), true},
		{"init waiting", base().Obj(), base().InitWaiting("init", "ErrImagePull", "no such image").Obj(), true},
		{"unschedulable", base().Obj(), base().Condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "0/2 nodes", t0).Obj(), true},
		{"disruption target", running().Obj(), running().DisruptionTarget("PreemptionByScheduler").Obj(), true},
		{"pod reason", running().Obj(), running().Reason("Evicted").Obj(), true},
		{"deletion confirmed, tracked", trackedGrace(running().Terminating().Obj(), 30), trackedGrace(running().Terminating().Obj(), 0), true},
		{"deletion confirmed, untracked", grace(running().Terminating().Obj(), 30), grace(running().Terminating().Obj(), 0), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := podMatters(tc.before, tc.after); got != tc.want {
				t.Errorf("podMatters = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMetaMatters(t *testing.T) {
	svc := func() *corev1.Service {
		s := &corev1.Service{}
		s.Name, s.UID, s.Labels = "s", "u", map[string]string{"a": "b"}
		return s
	}
	changedSpec := svc()
	changedSpec.Spec.ClusterIP, changedSpec.ResourceVersion = "10.0.0.1", "9"
	relabelled := svc()
	relabelled.Labels = map[string]string{"a": "c"}
	if metaMatters(svc(), changedSpec) {
		t.Error("a Service spec or resourceVersion change must not cost a pass")
	}
	if !metaMatters(svc(), relabelled) {
		t.Error("a label change must pass")
	}
}

func withRV(p *corev1.Pod, rv string) *corev1.Pod { p.ResourceVersion = rv; return p }
func bind(p *corev1.Pod) *corev1.Pod              { p.Spec.NodeName = "node-1"; return p }
func annotate(p *corev1.Pod) *corev1.Pod {
	p.Annotations = map[string]string{"x": "y"}
	return p
}
func ready(p *corev1.Pod) *corev1.Pod {
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Ready = true
	}
	p.Status.PodIP = "10.1.2.3"
	return p
}

func TestOwnedBy(t *testing.T) {
	pytorch := schema.GroupKind{Group: "kubeflow.org", Kind: "PyTorchJob"}
	pod := func(kind string) *corev1.Pod {
		return testjobs.MakePod("p", "ns").UID("u1").ControlledBy(kind, "j", "j1").Obj()
	}
	orphan := testjobs.MakePod("p", "ns").UID("u1").Obj()
	p := ownedBy(pytorch)
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"create of its own kind's pod", p.Create(ctrlevent.CreateEvent{Object: pod("PyTorchJob")}), true},
		{"create of another kind's pod", p.Create(ctrlevent.CreateEvent{Object: pod("TFJob")}), false},
		{"create of a pod without controller", p.Create(ctrlevent.CreateEvent{Object: orphan}), false},
		{"update within another kind", p.Update(ctrlevent.UpdateEvent{ObjectOld: pod("TFJob"), ObjectNew: pod("TFJob")}), false},
		{"update to its own kind", p.Update(ctrlevent.UpdateEvent{ObjectOld: pod("TFJob"), ObjectNew: pod("PyTorchJob")}), true},
		{"update away from its own kind", p.Update(ctrlevent.UpdateEvent{ObjectOld: pod("PyTorchJob"), ObjectNew: orphan}), true},
		{"delete of its own kind's pod", p.Delete(ctrlevent.DeleteEvent{Object: pod("PyTorchJob")}), true},
		{"delete of another kind's pod", p.Delete(ctrlevent.DeleteEvent{Object: pod("MPIJob")}), false},
		{"generic of another kind's pod", p.Generic(ctrlevent.GenericEvent{Object: pod("JAXJob")}), false},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: ownedBy = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// BenchmarkPodUpdateSixControllers is what one pod update that changes
// nothing read (a readiness flip) costs in predicates across the six
// controllers that share the pod informer.
func BenchmarkPodUpdateSixControllers(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	running := func() *testjobs.PodWrapper {
		return testjobs.MakePod("p", "ns").UID("u1").Label("a", "b").ControlledBy("PyTorchJob", "j", "j1").
			Phase(corev1.PodRunning).Running("pytorch")
	}
	e := ctrlevent.UpdateEvent{ObjectOld: running().Obj(), ObjectNew: ready(running().Condition(corev1.PodReady, corev1.ConditionTrue, "", "", t0).Obj())}
	kinds := []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"}
	for _, filtered := range []bool{false, true} {
		var chains [][]predicate.Predicate
		for _, k := range kinds {
			chain := []predicate.Predicate{podChanged()}
			if filtered {
				chain = append([]predicate.Predicate{ownedBy(schema.GroupKind{Group: "kubeflow.org", Kind: k})}, chain...)
			}
			chains = append(chains, chain)
		}
		b.Run(map[bool]string{false: "each controller compares", true: "owner kind first"}[filtered], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, chain := range chains {
					for _, p := range chain {
						if !p.Update(e) {
							break
						}
					}
				}
			}
		})
	}
}

// grace sets the pod's deletion grace period.
func grace(p *corev1.Pod, seconds int64) *corev1.Pod {
	p.DeletionGracePeriodSeconds = &seconds
	return p
}

// trackedGrace is grace with the failure-accounting finalizer.
func trackedGrace(p *corev1.Pod, seconds int64) *corev1.Pod {
	p.Finalizers = []string{kubeflowv1.PodTrackingFinalizer}
	return grace(p, seconds)
}
