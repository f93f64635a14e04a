package engine

import (
	"slices"
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
	// held is when each job's unwritten status change was first held back,
	// to batch count updates.
	held map[types.NamespacedName]heldChange
}

type heldChange struct {
	uid   types.UID
	since time.Time
}

type lastWrite struct {
	// baseRVs are the resourceVersions the write was made over: the one it
	// was locked to and, when that was our own earlier write the cache had
	// not shown yet, that write's bases too. A cache showing any of them has
	// not caught up. Knowing only the last one, a pass over a cache two
	// writes behind took it for someone else's newer write: make chaos saw
	// such a pass, during an apiserver restart, recreate a deleted pod in
	// the attempt a whole-job restart had just ended.
	baseRVs []string
	// job is what the write returned; nil once the cache has caught up.
	job client.Object
	// uid and rv identify the written version, whose watch event is our
	// own write coming back (see isEcho).
	uid types.UID
	rv  string
}

// maxWriteChain bounds the bases kept for consecutive writes the cache has
// not shown (a cache stays behind for seconds, a pass writes at most once).
const maxWriteChain = 32

func newLastWrites() *lastWrites {
	return &lastWrites{jobs: map[types.NamespacedName]lastWrite{}, held: map[types.NamespacedName]heldChange{}}
}

// remember records the object a status write returned, which it now owns;
// it ends any hold.
func (l *lastWrites) remember(baseRV string, job client.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The patch response carries managedFields, which the cache strips and
	// nothing reads: kept, they would double a busy job's footprint here.
	job.SetManagedFields(nil)
	key := client.ObjectKeyFromObject(job)
	bases := []string{baseRV}
	if prev, ok := l.jobs[key]; ok && prev.uid == job.GetUID() && prev.rv == baseRV {
		// Written over our own last write: the cache may still be older.
		bases = append(prev.baseRVs, baseRV)
		if len(bases) > maxWriteChain {
			bases = bases[len(bases)-maxWriteChain:]
		}
	}
	l.jobs[key] = lastWrite{baseRVs: bases, job: job, uid: job.GetUID(), rv: job.GetResourceVersion()}
	delete(l.held, key)
}

// isEcho reports whether job, from the job watch, is the version our last
// status write of it created: its watch event tells the reconciler nothing
// it does not know, since the pass that wrote it also ran what follows the
// write and asked for any requeue it needs. The cache holds that version
// once its event is handled, so the copy of the job is dropped here: no
// pass may come to drop it (a finished job is not reconciled again), and
// make bench's retained-5000 kept 5,000 whole jobs this way.
func (l *lastWrites) isEcho(job client.Object) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := client.ObjectKeyFromObject(job)
	w, ok := l.jobs[key]
	if !ok || w.rv == "" || w.rv != job.GetResourceVersion() || w.uid != job.GetUID() {
		return false
	}
	if w.job != nil {
		w.job, w.baseRVs = nil, nil
		l.jobs[key] = w
	}
	return true
}

// hold returns when the job's unwritten status change was first held back,
// recording now if none was.
func (l *lastWrites) hold(job client.Object, now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := client.ObjectKeyFromObject(job)
	if h, ok := l.held[key]; ok && h.uid == job.GetUID() {
		return h.since
	}
	l.held[key] = heldChange{uid: job.GetUID(), since: now}
	return now
}

// unhold forgets a held change that no longer needs writing (the status went
// back to what is stored).
func (l *lastWrites) unhold(job client.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held, client.ObjectKeyFromObject(job))
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
	if w.uid == cached.GetUID() {
		switch rv := cached.GetResourceVersion(); {
		case slices.Contains(w.baseRVs, rv):
			if w.job != nil {
				return w.job.DeepCopyObject().(client.Object)
			}
		case rv == w.rv:
			// Caught up: drop the copy (the cache holds the same), keep
			// the version so that its late watch event is known as an echo.
			w.job, w.baseRVs = nil, nil
			l.jobs[key] = w
			return cached
		}
	}
	// The cache moved on (someone else wrote): trust it.
	delete(l.jobs, key)
	return cached
}

// forget drops a job that is gone.
func (l *lastWrites) forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.jobs, key)
	delete(l.held, key)
}
