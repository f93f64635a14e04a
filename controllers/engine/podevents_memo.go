package engine

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// podMemos keeps, per job, what was last recorded about its pods (see
// podEvents), in jobRecord.pods.
type podMemos struct{ kindMemory }

type podMemo struct {
	seen podsSeen
	// looked says the Events recorded about a job older than this process
	// were read once (planPodEvents).
	looked bool
}

func (p *podMemo) empty() bool { return len(p.seen) == 0 && !p.looked }

func (m podMemos) get(key types.NamespacedName, uid types.UID) podsSeen {
	m.m.mu.Lock()
	defer m.m.mu.Unlock()
	if rec := m.m.record(m.refOf(key, uid), false); rec != nil {
		return rec.pods.seen
	}
	return nil
}

// set replaces a job's memo; an empty one frees it.
func (m podMemos) set(key types.NamespacedName, uid types.UID, seen podsSeen) {
	m.m.mu.Lock()
	defer m.m.mu.Unlock()
	j := m.refOf(key, uid)
	if len(seen) == 0 {
		if rec := m.m.record(j, false); rec != nil {
			rec.pods.seen = nil
			m.m.dropIfEmpty(j, rec)
		}
		return
	}
	m.m.record(j, true).pods.seen = seen
}

// firstLook reports whether the job's recorded Events are still to be
// read, and notes that they are being read.
func (m podMemos) firstLook(key types.NamespacedName, uid types.UID) bool {
	m.m.mu.Lock()
	defer m.m.mu.Unlock()
	rec := m.m.record(m.refOf(key, uid), true)
	if rec.pods.looked {
		return false
	}
	rec.pods.looked = true
	return true
}

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
func (r *Reconciler[J]) planPodEvents(ctx context.Context, job client.Object, finished bool, pods []*corev1.Pod) podReport {
	if finished {
		return podReport{planned: true}
	}
	key, container := client.ObjectKeyFromObject(job), r.fw.DefaultContainerName()
	seen := r.podMemos.get(key, job.GetUID())
	events, next := podEvents(pods, container, seen)
	if len(events) > 0 && job.GetCreationTimestamp().Time.Before(r.started) && r.podMemos.firstLook(key, job.GetUID()) {
		// The memo died with the previous operator process; what it recorded
		// is still in the cluster's Events. One read per such job, and only
		// when there is something to say.
		if recorded, err := r.recordedEvents(ctx, job); err != nil {
			log.FromContext(ctx).V(1).Info("reading the job's recorded events failed; pod events may repeat", "err", err.Error())
		} else if seeded := alreadyRecorded(pods, container, recorded); len(seeded) > 0 {
			for uid, sums := range seen {
				seeded[uid] = append(seeded[uid], sums...)
			}
			r.podMemos.set(key, job.GetUID(), seeded)
			events, next = podEvents(pods, container, seeded)
		}
	}
	return podReport{planned: true, events: events, seen: next}
}

// recordedEvents reads the Events recorded about the job, straight from the
// API server (Events are not cached).
func (r *Reconciler[J]) recordedEvents(ctx context.Context, job client.Object) (map[event]bool, error) {
	var list corev1.EventList
	if err := r.apiReader.List(ctx, &list, client.InNamespace(job.GetNamespace()),
		client.MatchingFields{"involvedObject.uid": string(job.GetUID())}); err != nil {
		return nil, err
	}
	out := make(map[event]bool, len(list.Items))
	for _, e := range list.Items {
		out[event{e.Type, e.Reason, e.Message}] = true
	}
	return out, nil
}

// alreadyRecorded is the memo of pod events that recorded already holds: a
// pod's own event, or its name in a pass's batch of successful exits.
func alreadyRecorded(pods []*corev1.Pod, container string, recorded map[event]bool) podsSeen {
	batched := map[string]bool{}
	for e := range recorded {
		if names, ok := strings.CutPrefix(e.message, "Pods: "); ok && e.reason == reasonExitedWithCode {
			for _, n := range strings.Split(strings.TrimSuffix(names, " exited with code 0"), ", ") {
				batched[n] = true
			}
		}
	}
	seen := podsSeen{}
	for _, pod := range pods {
		for _, e := range podState(pod, container) {
			if recorded[e.event] || (e.okExit != "" && batched[e.okExit]) {
				seen[pod.UID] = append(seen[pod.UID], e.sum())
			}
		}
	}
	return seen
}

// recordPodEvents records a planned report and advances the memo.
func (r *Reconciler[J]) recordPodEvents(job client.Object, rep podReport) {
	if !rep.planned {
		return
	}
	for _, e := range rep.events {
		r.recorder.Event(job, e.eventType, e.reason, e.message)
	}
	r.podMemos.set(client.ObjectKeyFromObject(job), job.GetUID(), rep.seen)
}
