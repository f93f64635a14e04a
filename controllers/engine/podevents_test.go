package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pod(name string) *testjobs.PodWrapper { return testjobs.MakePod(name, "ns").UID(name) }

func normal(reason, msg string) event  { return event{corev1.EventTypeNormal, reason, msg} }
func warning(reason, msg string) event { return event{corev1.EventTypeWarning, reason, msg} }

// One pass over pods nobody reported yet: v1's events, word for word, except
// that the exit-0 pods of a pass share one event.
func TestPodEventsStates(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want []event
	}{
		{"running pod", []*corev1.Pod{pod("p").Phase(corev1.PodRunning).Running("pytorch").Obj()}, nil},
		{"pending pod without status", []*corev1.Pod{pod("p").Phase(corev1.PodPending).Obj()}, nil},
		{"default container exited 0",
			[]*corev1.Pod{pod("p").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj()},
			[]event{normal("ExitedWithCode", "Pod: ns.p exited with code 0")}},
		{"exit-0 pods of one pass share one event, sorted",
			[]*corev1.Pod{
				pod("j-worker-1").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
				pod("j-master-0").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
				pod("j-worker-0").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
			},
			[]event{normal("ExitedWithCode", "Pods: ns.j-master-0, ns.j-worker-0, ns.j-worker-1 exited with code 0")}},
		{"non-zero exits get an event each, besides the batch",
			[]*corev1.Pod{
				pod("a").Phase(corev1.PodFailed).Terminated("pytorch", 1, "Error").Obj(),
				pod("b").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
				pod("c").Phase(corev1.PodFailed).Terminated("pytorch", 137, "OOMKilled").Obj(),
			},
			[]event{
				normal("ExitedWithCode", "Pod: ns.a exited with code 1"),
				normal("ExitedWithCode", "Pod: ns.c exited with code 137"),
				normal("ExitedWithCode", "Pod: ns.b exited with code 0"),
			}},
		{"only the default container's exit is reported",
			[]*corev1.Pod{pod("p").Phase(corev1.PodSucceeded).Terminated("sidecar", 0, "Completed").Obj()}, nil},
		{"an active pod's non-zero termination is also a warning",
			[]*corev1.Pod{pod("p").Phase(corev1.PodRunning).Terminated("pytorch", 137, "OOMKilled").TerminationMessage("out of memory").Obj()},
			[]event{
				normal("ExitedWithCode", "Pod: ns.p exited with code 137"),
				warning("OOMKilled", "Error pod p container pytorch exitCode: 137 terminated message: out of memory"),
			}},
		{"an active pod's exit 0 is no warning",
			[]*corev1.Pod{pod("p").Phase(corev1.PodRunning).Terminated("sidecar", 0, "Completed").Running("pytorch").Obj()}, nil},
		{"a finished pod's trouble is not reported",
			[]*corev1.Pod{pod("p").Phase(corev1.PodFailed).Terminated("sidecar", 2, "Error").Obj()}, nil},
		{"a terminating pod's trouble is not reported",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).Waiting("pytorch", "ImagePullBackOff", "Back-off").Terminating().Obj()}, nil},
		{"waiting reasons with a message",
			[]*corev1.Pod{
				pod("a").Phase(corev1.PodPending).Waiting("pytorch", "ImagePullBackOff", `Back-off pulling image "nope"`).Obj(),
				pod("b").Phase(corev1.PodPending).Waiting("pytorch", "ErrImagePull", "pull access denied").Obj(),
				pod("c").Phase(corev1.PodRunning).Waiting("pytorch", "CrashLoopBackOff", "back-off 10s restarting failed container").Obj(),
				pod("d").Phase(corev1.PodPending).Waiting("pytorch", "CreateContainerConfigError", `secret "s" not found`).Obj(),
			},
			[]event{
				warning("ImagePullBackOff", `Error pod a container pytorch waiting message: Back-off pulling image "nope"`),
				warning("ErrImagePull", "Error pod b container pytorch waiting message: pull access denied"),
				warning("CrashLoopBackOff", "Error pod c container pytorch waiting message: back-off 10s restarting failed container"),
				warning("CreateContainerConfigError", `Error pod d container pytorch waiting message: secret "s" not found`),
			}},
		{"waiting without a message is normal (ContainerCreating)",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).Waiting("pytorch", "ContainerCreating", "").Obj()}, nil},
		{"every container is checked",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).Waiting("pytorch", "ErrImagePull", "x").Waiting("sidecar", "ErrImagePull", "y").Obj()},
			[]event{
				warning("ErrImagePull", "Error pod p container pytorch waiting message: x"),
				warning("ErrImagePull", "Error pod p container sidecar waiting message: y"),
			}},
		{"init containers when no container status exists",
			[]*corev1.Pod{
				pod("a").Phase(corev1.PodPending).InitWaiting("init-pytorch", "ImagePullBackOff", "Back-off").Obj(),
				pod("b").Phase(corev1.PodPending).InitTerminated("init-pytorch", 1, "Error", "master not found").Obj(),
			},
			[]event{
				warning("ImagePullBackOff", "Error pod a container init-pytorch waiting message: Back-off"),
				warning("Error", "Error pod b container init-pytorch exitCode: 1 terminated message: master not found"),
			}},
		{"container statuses win over init containers and conditions",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).Waiting("pytorch", "ContainerCreating", "").
				InitWaiting("init-pytorch", "ImagePullBackOff", "Back-off").
				Condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "no", t0).Obj()}, nil},
		{"init containers win over conditions",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).InitWaiting("init-pytorch", "PodInitializing", "").
				Condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "no", t0).Obj()}, nil},
		{"the newest condition when it is not True",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).
				Condition(corev1.PodReadyToStartContainers, corev1.ConditionFalse, "Old", "old", t0).
				Condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "0/4 nodes are available", t0.Add(time.Second)).Obj()},
			[]event{warning("Unschedulable", "Error pod p condition message: 0/4 nodes are available")}},
		{"the newest condition is True",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).
				Condition(corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", "x", t0).
				Condition(corev1.PodScheduled, corev1.ConditionTrue, "", "", t0.Add(time.Second)).Obj()}, nil},
		{"a tie goes to the first condition",
			[]*corev1.Pod{pod("p").Phase(corev1.PodPending).
				Condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "first", t0).
				Condition(corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", "second", t0).Obj()},
			[]event{warning("Unschedulable", "Error pod p condition message: first")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := podEvents(tc.pods, "pytorch", nil)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(event{})); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// Passes in sequence, each starting from the memo the previous one kept:
// an event is recorded once per state of its pod.
func TestPodEventsAcrossPasses(t *testing.T) {
	backoff := func(name, reason string) *corev1.Pod {
		return pod(name).Phase(corev1.PodPending).Waiting("pytorch", reason, "msg").Obj()
	}
	ok := func(name string) *corev1.Pod {
		return pod(name).Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj()
	}
	running := func(name string) *corev1.Pod { return pod(name).Phase(corev1.PodRunning).Running("pytorch").Obj() }
	for _, tc := range []struct {
		name     string
		passes   [][]*corev1.Pod
		want     [][]event
		wantPods []types.UID // in the last memo
	}{
		{"the same state is recorded once",
			[][]*corev1.Pod{{backoff("a", "ImagePullBackOff"), ok("b")}, {backoff("a", "ImagePullBackOff"), ok("b")}},
			[][]event{{
				warning("ImagePullBackOff", "Error pod a container pytorch waiting message: msg"),
				normal("ExitedWithCode", "Pod: ns.b exited with code 0"),
			}, nil},
			[]types.UID{"a", "b"}},
		{"a changed state is recorded again",
			[][]*corev1.Pod{{backoff("a", "ErrImagePull")}, {backoff("a", "ImagePullBackOff")}, {backoff("a", "ErrImagePull")}},
			[][]event{
				{warning("ErrImagePull", "Error pod a container pytorch waiting message: msg")},
				{warning("ImagePullBackOff", "Error pod a container pytorch waiting message: msg")},
				{warning("ErrImagePull", "Error pod a container pytorch waiting message: msg")},
			},
			[]types.UID{"a"}},
		{"trouble that clears and returns is recorded again",
			[][]*corev1.Pod{{backoff("a", "CrashLoopBackOff")}, {running("a")}, {backoff("a", "CrashLoopBackOff")}},
			[][]event{
				{warning("CrashLoopBackOff", "Error pod a container pytorch waiting message: msg")},
				nil,
				{warning("CrashLoopBackOff", "Error pod a container pytorch waiting message: msg")},
			},
			[]types.UID{"a"}},
		{"only pods newly exited 0 join the pass's batch",
			[][]*corev1.Pod{{ok("a"), ok("b"), running("c")}, {ok("a"), ok("b"), ok("c")}},
			[][]event{
				{normal("ExitedWithCode", "Pods: ns.a, ns.b exited with code 0")},
				{normal("ExitedWithCode", "Pod: ns.c exited with code 0")},
			},
			[]types.UID{"a", "b", "c"}},
		{"a pod gone frees its memo, and a replacement is reported afresh",
			[][]*corev1.Pod{{backoff("a", "ErrImagePull"), ok("b")}, {ok("b")}},
			[][]event{{
				warning("ErrImagePull", "Error pod a container pytorch waiting message: msg"),
				normal("ExitedWithCode", "Pod: ns.b exited with code 0"),
			}, nil},
			[]types.UID{"b"}},
		{"no pods, no memo",
			[][]*corev1.Pod{{backoff("a", "ErrImagePull")}, nil},
			[][]event{{warning("ErrImagePull", "Error pod a container pytorch waiting message: msg")}, nil},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen podsSeen
			for i, pods := range tc.passes {
				var got []event
				got, seen = podEvents(pods, "pytorch", seen)
				if diff := cmp.Diff(tc.want[i], got, cmp.AllowUnexported(event{})); diff != "" {
					t.Errorf("pass %d events (-want +got):\n%s", i+1, diff)
				}
			}
			var uids []types.UID
			for uid := range seen {
				uids = append(uids, uid)
			}
			if diff := cmp.Diff(tc.wantPods, uids, cmpSortUIDs); diff != "" {
				t.Errorf("pods in the memo (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpSortUIDs = cmp.Transformer("sort", func(in []types.UID) []string {
	out := make([]string, len(in))
	for i, u := range in {
		out[i] = string(u)
	}
	slices.Sort(out)
	return out
})

// The memo of a job belongs to its UID: a new job of the same name starts
// afresh; an empty memo or forget frees the entry.
func TestPodMemos(t *testing.T) {
	m := podMemos{testMemory()}
	key := types.NamespacedName{Namespace: "ns", Name: "j"}
	seen := podsSeen{"p": {1}}
	m.set(key, "uid-1", seen)
	if diff := cmp.Diff(seen, m.get(key, "uid-1")); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	if got := m.get(key, "uid-2"); got != nil {
		t.Errorf("a new job of the same name got the old memo: %v", got)
	}
	m.set(key, "uid-1", nil)
	if n := m.m.Len(); n != 0 {
		t.Errorf("an empty memo kept the entry: %d records", n)
	}
	m.set(key, "uid-1", seen)
	m.m.Forget(m.refOf(key, ""))
	if n := m.m.Len(); n != 0 {
		t.Errorf("forget kept the entry: %d records", n)
	}
}

// After an operator restart the memo is rebuilt from the Events the cluster
// holds: a pod's own event, or its name in a pass's batch of exit-0 pods.
// Events nobody recorded yet are said once more.
func TestAlreadyRecordedSeedsTheMemo(t *testing.T) {
	pods := []*corev1.Pod{
		pod("j-worker-0").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
		pod("j-worker-1").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
		pod("j-worker-2").Phase(corev1.PodSucceeded).Terminated("pytorch", 0, "Completed").Obj(),
		pod("j-worker-3").Phase(corev1.PodRunning).Waiting("pytorch", "ImagePullBackOff", "Back-off").Obj(),
		pod("j-worker-4").Phase(corev1.PodRunning).Waiting("pytorch", "CrashLoopBackOff", "back-off 10s").Obj(),
	}
	recorded := map[event]bool{
		normal("ExitedWithCode", "Pods: ns.j-worker-0, ns.j-worker-1 exited with code 0"):               true,
		warning("ImagePullBackOff", "Error pod j-worker-3 container pytorch waiting message: Back-off"): true,
		normal("Other", "Pod: ns.j-worker-2 exited with code 0"):                                        true, // not the same reason
	}
	got, _ := podEvents(pods, "pytorch", alreadyRecorded(pods, "pytorch", recorded))
	want := []event{
		warning("CrashLoopBackOff", "Error pod j-worker-4 container pytorch waiting message: back-off 10s"),
		normal("ExitedWithCode", "Pod: ns.j-worker-2 exited with code 0"),
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(event{})); diff != "" {
		t.Errorf("events after the restart (-want +got):\n%s", diff)
	}
}
