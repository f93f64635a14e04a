package engine

import (
	"fmt"
	"hash/maphash"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod events tell `kubectl describe` users why a job's pods are stuck or
// failed: v1's ExitedWithCode and the warnings of its core.RecordAbnormalPods.
// v1 recorded them again on every reconcile; we record each once per change
// of a pod's state, by remembering what was recorded per pod.

const reasonExitedWithCode = "ExitedWithCode"

// podsSeen is what was last recorded about each pod of one job: a hash per
// event, so a 1000-pod job's memo stays small.
type podsSeen map[types.UID][]uint64

// podEvent is one event about one pod; okExit names ("<ns>.<pod>") a pod
// whose default container exited 0, batched with the others of its pass.
type podEvent struct {
	event
	okExit string
}

// podEvents returns the events one pass records about a job's pods, given
// what was recorded before (seen), and the memo to keep once they are
// recorded. Pods absent from pods are absent from the memo. container is the
// framework's default container, whose exit code v1 reports.
func podEvents(pods []*corev1.Pod, container string, seen podsSeen) ([]event, podsSeen) {
	var out []event
	var okExits []string
	var next podsSeen
	for _, pod := range pods {
		evs := podState(pod, container)
		if len(evs) == 0 {
			continue
		}
		sums := make([]uint64, len(evs))
		for i, e := range evs {
			sums[i] = e.sum()
			switch {
			case slices.Contains(seen[pod.UID], sums[i]):
			case e.okExit != "":
				okExits = append(okExits, e.okExit)
			default:
				out = append(out, e.event)
			}
		}
		if next == nil {
			next = podsSeen{}
		}
		next[pod.UID] = sums
	}
	switch len(okExits) {
	case 0:
	case 1:
		out = append(out, exitEvent(okExits[0], 0))
	default:
		// One event for a pass's successes: a 1000-worker job finishing at
		// once would otherwise spend a request per pod on events.
		sort.Strings(okExits)
		out = append(out, event{corev1.EventTypeNormal, reasonExitedWithCode,
			fmt.Sprintf("Pods: %s exited with code 0", joinNames(okExits))})
	}
	return out, next
}

// podState is every event v1 would record about a pod in its current state.
func podState(pod *corev1.Pod, container string) []podEvent {
	var evs []podEvent
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container && s.State.Terminated != nil {
			who, code := pod.Namespace+"."+pod.Name, s.State.Terminated.ExitCode
			e := podEvent{event: exitEvent(who, code)}
			if code == 0 {
				e.okExit = who
			}
			evs = append(evs, e)
		}
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		return evs // not active: v1 reports only active pods' trouble
	}
	for _, e := range abnormal(pod) {
		evs = append(evs, podEvent{event: e})
	}
	return evs
}

func exitEvent(who string, code int32) event {
	return event{corev1.EventTypeNormal, reasonExitedWithCode, fmt.Sprintf("Pod: %s exited with code %d", who, code)}
}

// abnormal is v1's core.RecordAbnormalPods for one active pod: container
// troubles if it has container statuses, else init container troubles, else
// its newest condition when that is not True.
func abnormal(pod *corev1.Pod) []event {
	switch {
	case len(pod.Status.ContainerStatuses) > 0:
		return containerTroubles(pod.Name, pod.Status.ContainerStatuses)
	case len(pod.Status.InitContainerStatuses) > 0:
		return containerTroubles(pod.Name, pod.Status.InitContainerStatuses)
	}
	c := newestCondition(pod.Status.Conditions)
	if c == nil || c.Status == corev1.ConditionTrue {
		return nil
	}
	return []event{{corev1.EventTypeWarning, c.Reason, fmt.Sprintf("Error pod %s condition message: %s", pod.Name, c.Message)}}
}

func containerTroubles(pod string, statuses []corev1.ContainerStatus) []event {
	var evs []event
	for _, s := range statuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			evs = append(evs, event{corev1.EventTypeWarning, t.Reason,
				fmt.Sprintf("Error pod %s container %s exitCode: %d terminated message: %s", pod, s.Name, t.ExitCode, t.Message)})
		}
		if w := s.State.Waiting; w != nil && w.Message != "" {
			evs = append(evs, event{corev1.EventTypeWarning, w.Reason,
				fmt.Sprintf("Error pod %s container %s waiting message: %s", pod, s.Name, w.Message)})
		}
	}
	return evs
}

// newestCondition is the condition with the latest lastTransitionTime, the
// first of them on a tie (v1 sorted the cached pod in place; we never
// mutate the cache).
func newestCondition(cs []corev1.PodCondition) *corev1.PodCondition {
	var newest *corev1.PodCondition
	for i := range cs {
		if newest == nil || cs[i].LastTransitionTime.After(newest.LastTransitionTime.Time) {
			newest = &cs[i]
		}
	}
	return newest
}

// memoSeed seeds the memo's hashes; the memo never leaves the process.
var memoSeed = maphash.MakeSeed()

// sum identifies an event in the memo.
func (e podEvent) sum() uint64 {
	return maphash.String(memoSeed, e.eventType+"\x00"+e.reason+"\x00"+e.message)
}
