package engine

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lastWrites remembers each job as our last status write returned it, so a
// reconcile that runs before the informer cache has seen that write starts
// from what was written instead of a stale copy: no 409 on the
// optimistic-locked patch, no lost condition, no extra round trip.
type lastWrites struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]lastWrite
	// at is when each job's status was last written, to batch count updates.
	at map[types.NamespacedName]writtenAt
}

type writtenAt struct {
	uid types.UID
	at  time.Time
}

type lastWrite struct {
	// baseRV is the resourceVersion the write was made over: a cache still
	// showing it has not caught up.
	baseRV string
	job    client.Object
}

func newLastWrites() *lastWrites {
	return &lastWrites{jobs: map[types.NamespacedName]lastWrite{}, at: map[types.NamespacedName]writtenAt{}}
}

// remember records the object a status write returned, written at now.
func (l *lastWrites) remember(baseRV string, written client.Object, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	job := written.DeepCopyObject().(client.Object)
	// The patch response carries managedFields, which the cache strips and
	// nothing reads: kept, they would double a busy job's footprint here.
	job.SetManagedFields(nil)
	l.jobs[client.ObjectKeyFromObject(written)] = lastWrite{baseRV: baseRV, job: job}
	l.at[client.ObjectKeyFromObject(written)] = writtenAt{uid: written.GetUID(), at: now}
}

// lastAt is when we last wrote the job's status (zero if never, or not since
// this process started).
func (l *lastWrites) lastAt(job client.Object) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.at[client.ObjectKeyFromObject(job)]; ok && w.uid == job.GetUID() {
		return w.at
	}
	return time.Time{}
}

// freshest returns the newer of the cached job and our last write of it.
func (l *lastWrites) freshest(cached client.Object) client.Object {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := client.ObjectKeyFromObject(cached)
	w, ok := l.jobs[key]
	if !ok {
		return cached
	}
	if w.job.GetUID() == cached.GetUID() && cached.GetResourceVersion() == w.baseRV {
		return w.job.DeepCopyObject().(client.Object)
	}
	// The cache caught up or moved on (someone else wrote): trust it.
	delete(l.jobs, key)
	return cached
}

// forget drops a job that is gone.
func (l *lastWrites) forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.jobs, key)
	delete(l.at, key)
}
