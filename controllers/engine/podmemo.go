package engine

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podMemos keeps, per job, what was last recorded about its pods (see
// podEvents). It is keyed by the job's name, not its UID, so a job that is
// gone (NotFound carries only the name) can be forgotten; the UID stored
// with it tells a new job of the same name from the old one. The zero value
// is ready to use.
type podMemos struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]jobPodMemo
}

type jobPodMemo struct {
	uid  types.UID
	seen podsSeen
}

func (m *podMemos) get(key types.NamespacedName, uid types.UID) podsSeen {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j, ok := m.jobs[key]; ok && j.uid == uid {
		return j.seen
	}
	return nil
}

// set replaces a job's memo; an empty one frees the job's entry.
func (m *podMemos) set(key types.NamespacedName, uid types.UID, seen podsSeen) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(seen) == 0 {
		delete(m.jobs, key)
		return
	}
	if m.jobs == nil {
		m.jobs = map[types.NamespacedName]jobPodMemo{}
	}
	m.jobs[key] = jobPodMemo{uid: uid, seen: seen}
}

func (m *podMemos) forget(key types.NamespacedName) { m.set(key, "", nil) }

// podReport is one pass's pod events and the memo to keep once they are
// recorded, which happens only after the status write succeeded: a pass that
// stops before leaves the memo as it was, so the next pass plans them again.
type podReport struct {
	planned bool
	events  []event
	seen    podsSeen
}

// planPodEvents reads a job's pods for events. A finished job's pods are not
// reported again, and its memo is freed.
func (r *Reconciler) planPodEvents(job client.Object, finished bool, pods []*corev1.Pod) podReport {
	if finished {
		return podReport{planned: true}
	}
	events, seen := podEvents(pods, r.fw.DefaultContainerName(), r.podMemos.get(client.ObjectKeyFromObject(job), job.GetUID()))
	return podReport{planned: true, events: events, seen: seen}
}

// recordPodEvents records a planned report and advances the memo.
func (r *Reconciler) recordPodEvents(job client.Object, rep podReport) {
	if !rep.planned {
		return
	}
	for _, e := range rep.events {
		r.recorder.Event(job, e.eventType, e.reason, e.message)
	}
	r.podMemos.set(client.ObjectKeyFromObject(job), job.GetUID(), rep.seen)
}
