package engine

import (
	"context"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/seed-d8a409e9/training-operator/internal/inflight"
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
type vanishedPods struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]*vanishedJob
}

type vanishedJob struct {
	uid     types.UID
	gone    map[types.UID]*corev1.Pod
	counted map[types.UID]bool
}

// entry returns the job's record, replacing one of an older incarnation
// when create is set.
func (v *vanishedPods) entry(key types.NamespacedName, uid types.UID, create bool) *vanishedJob {
	e := v.jobs[key]
	if e != nil && e.uid == uid {
		return e
	}
	if !create {
		return nil
	}
	if v.jobs == nil {
		v.jobs = map[types.NamespacedName]*vanishedJob{}
	}
	e = &vanishedJob{uid: uid, gone: map[types.UID]*corev1.Pod{}, counted: map[types.UID]bool{}}
	v.jobs[key] = e
	return e
}

func (v *vanishedPods) dropIfEmpty(key types.NamespacedName, e *vanishedJob) {
	if len(e.gone) == 0 && len(e.counted) == 0 {
		delete(v.jobs, key)
	}
}

// left records that pod left the cache; ours says the job deleted it.
func (v *vanishedPods) left(key types.NamespacedName, jobUID types.UID, pod *corev1.Pod, ours bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e := v.entry(key, jobUID, false); e != nil && e.counted[pod.UID] {
		delete(e.counted, pod.UID)
		v.dropIfEmpty(key, e)
		return
	}
	if ours || pod.Status.Phase == corev1.PodSucceeded {
		return
	}
	v.entry(key, jobUID, true).gone[pod.UID] = pod
}

// pending lists the job's vanished pods not counted yet, by name.
func (v *vanishedPods) pending(key types.NamespacedName, jobUID types.UID) []*corev1.Pod {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(key, jobUID, false)
	if e == nil || len(e.gone) == 0 {
		return nil
	}
	out := make([]*corev1.Pod, 0, len(e.gone))
	for _, p := range e.gone {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// settle runs after a status write recorded a pass: the vanished pods it
// read (taken) are dealt with, and the pods it counted are remembered until
// they leave the cache, unless they already did.
func (v *vanishedPods) settle(key types.NamespacedName, jobUID types.UID, taken, counted []types.UID) {
	if len(taken) == 0 && len(counted) == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, uid := range taken {
		if e := v.entry(key, jobUID, false); e != nil {
			delete(e.gone, uid)
			v.dropIfEmpty(key, e)
		}
	}
	for _, uid := range counted {
		if e := v.entry(key, jobUID, false); e != nil && e.gone[uid] != nil {
			delete(e.gone, uid)
			v.dropIfEmpty(key, e)
			continue
		}
		if !slices.Contains(taken, uid) {
			v.entry(key, jobUID, true).counted[uid] = true
		}
	}
}

func (v *vanishedPods) forget(key types.NamespacedName) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.jobs, key)
}

func (v *vanishedPods) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.jobs)
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
			if tracked(r.fw.RunPolicy(job)) {
				return true
			}
			ours := r.inflight.IsDeleting(inflight.Job{Kind: r.fw.Kind(), NamespacedName: key, UID: ref.UID}, pod.UID)
			r.vanished.left(key, ref.UID, pod, ours)
			return true
		},
	}
}
