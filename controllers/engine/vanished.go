package engine

import (
	"context"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// vanishedPods remembers pods someone else deleted that left the cache
// before any pass saw them terminating: a pod deleted with a short grace
// period (KWOK removes it within milliseconds) is otherwise recreated
// without being counted as a restart. A pod's delete event carries its last
// state, so it is recorded there and counted by the job's next pass, like a
// pod seen with a deletion timestamp.
//
// Per job it keeps the vanished pods not counted yet, and the pods this
// process counted that the cache still shows: status.countedPods forgets a
// pod once the cache no longer shows it, which a pass may see just before
// the pod's delete event is handled, so that memory keeps such a pod from
// being counted twice. Entries go once counted durably, when the pod leaves
// the cache, and with the job.
type vanishedPods struct{ kindMemory }

// vanishedJob is a job's part: jobRecord.vanished.
type vanishedJob struct {
	gone    map[types.UID]*corev1.Pod
	counted map[types.UID]bool
}

func (v *vanishedJob) empty() bool { return len(v.gone) == 0 && len(v.counted) == 0 }

// part returns the job's part, m.mu held; nil if it has none and create
// is not set.
func (v vanishedPods) part(j JobRef, create bool) *vanishedJob {
	rec := v.m.record(j, create)
	if rec == nil {
		return nil
	}
	p := &rec.vanished
	if create && p.gone == nil {
		p.gone, p.counted = map[types.UID]*corev1.Pod{}, map[types.UID]bool{}
	}
	return p
}

// dropIfEmpty frees the job's record once nothing is left in it, m.mu held.
func (v vanishedPods) dropIfEmpty(j JobRef) { v.m.dropIfEmpty(j, v.m.record(j, false)) }

// left records that pod left the cache; ours says the job deleted it.
func (v vanishedPods) left(key types.NamespacedName, jobUID types.UID, pod *corev1.Pod, ours bool) {
	j := v.refOf(key, jobUID)
	v.m.mu.Lock()
	defer v.m.mu.Unlock()
	if e := v.part(j, false); e != nil && e.counted[pod.UID] {
		delete(e.counted, pod.UID)
		v.dropIfEmpty(j)
		return
	}
	if ours || pod.Status.Phase == corev1.PodSucceeded {
		return
	}
	v.part(j, true).gone[pod.UID] = pod
}

// pending lists the job's vanished pods not counted yet, by name.
func (v vanishedPods) pending(key types.NamespacedName, jobUID types.UID) []*corev1.Pod {
	out := func() []*corev1.Pod {
		v.m.mu.Lock()
		defer v.m.mu.Unlock()
		e := v.part(v.refOf(key, jobUID), false)
		if e == nil || len(e.gone) == 0 {
			return nil
		}
		out := make([]*corev1.Pod, 0, len(e.gone))
		for _, p := range e.gone {
			out = append(out, p)
		}
		return out
	}()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// settle runs after a status write recorded a pass: the vanished pods it
// read (taken) are dealt with, and the pods it counted are remembered until
// they leave the cache, unless they already did.
func (v vanishedPods) settle(key types.NamespacedName, jobUID types.UID, taken, counted []types.UID) {
	if len(taken) == 0 && len(counted) == 0 {
		return
	}
	j := v.refOf(key, jobUID)
	v.m.mu.Lock()
	defer v.m.mu.Unlock()
	for _, uid := range taken {
		if e := v.part(j, false); e != nil {
			delete(e.gone, uid)
			v.dropIfEmpty(j)
		}
	}
	for _, uid := range counted {
		if e := v.part(j, false); e != nil && e.gone[uid] != nil {
			delete(e.gone, uid)
			v.dropIfEmpty(j)
			continue
		}
		if !slices.Contains(taken, uid) {
			v.part(j, true).counted[uid] = true
		}
	}
}

// forget drops the job's vanished pods: pods leaving a finished, deleted
// or suspended job are no restart.
func (v vanishedPods) forget(key types.NamespacedName, jobUID types.UID) {
	j := v.refOf(key, jobUID)
	v.m.mu.Lock()
	defer v.m.mu.Unlock()
	if e := v.part(j, false); e != nil {
		*e = vanishedJob{}
		v.dropIfEmpty(j)
	}
}

// podLeft records, from a pod's delete event, a pod of one of this
// controller's jobs that someone else deleted. The event then enqueues the
// job (at once), whose pass counts the pod. It never filters events.
func (r *Reconciler[J]) podLeft() predicate.Funcs {
	return predicate.Funcs{
		DeleteFunc: func(e ctrlevent.DeleteEvent) bool {
			pod, ok := e.Object.(*corev1.Pod)
			ref := metav1.GetControllerOf(e.Object)
			if !ok || ref == nil || ref.Kind != r.fw.Kind() {
				return true
			}
			key := types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}
			// Only pods of a job the cache still shows: the garbage collector's
			// deletions after the job went (or after a new job took its name)
			// are nobody's restart, and must not touch that new job's record.
			job := r.fw.NewJob()
			if err := r.client.Get(context.Background(), key, job, client.UnsafeDisableDeepCopy); err != nil || job.GetUID() != ref.UID {
				return true
			}
			// A tracked job's pods leave only once counted (tracking.go): a
			// pod counted by an earlier process must not count again here.
			if r.fw.tracked(r.fw.RunPolicy(job)) {
				return true
			}
			ours := r.memory.IsDeleting(JobRef{Kind: r.fw.Kind(), NamespacedName: key, UID: ref.UID}, pod.UID) || endedBySuspension(pod)
			r.vanished.left(key, ref.UID, pod, ours)
			return true
		},
	}
}
