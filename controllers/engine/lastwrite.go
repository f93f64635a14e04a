package engine

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// lastWrites remembers each job as our last status write returned it
// (jobRecord.written), so a reconcile that runs before the informer cache
// has seen that write starts from what was written instead of a stale copy:
// no 409 on the optimistic-locked patch, no lost condition, no extra round
// trip.
type lastWrites struct{ kindMemory }

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
	// rv identifies the written version, whose watch event is our own
	// write coming back (see isEcho).
	rv string
}

// maxWriteChain bounds the bases kept for consecutive writes the cache has
// not shown (a cache stays behind for seconds, a pass writes at most once).
const maxWriteChain = 32

// remember records the object a status write returned, which it now owns;
// it ends any hold (statusbatch.go).
func (l lastWrites) remember(baseRV string, job client.Object) {
	// The patch response carries managedFields, which the cache strips and
	// nothing reads: kept, they would double a busy job's footprint here.
	job.SetManagedFields(nil)
	j := l.ref(job)
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	rec := l.m.record(j, true)
	bases := []string{baseRV}
	if prev := rec.written; prev != nil && prev.rv == baseRV {
		// Written over our own last write: the cache may still be older.
		bases = append(prev.baseRVs, baseRV)
		if len(bases) > maxWriteChain {
			bases = bases[len(bases)-maxWriteChain:]
		}
	}
	rec.written = &lastWrite{baseRVs: bases, job: job, rv: job.GetResourceVersion()}
	rec.held = statusHold{}
}

// isEcho reports whether job, from the job watch, is the version our last
// status write of it created: its watch event tells the reconciler nothing
// it does not know, since the pass that wrote it also ran what follows the
// write and asked for any requeue it needs. The cache holds that version
// once its event is handled, so the copy of the job is dropped here: no
// pass may come to drop it (a finished job is not reconciled again), and
// make bench's retained-5000 kept 5,000 whole jobs this way.
func (l lastWrites) isEcho(job client.Object) bool {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	rec := l.m.record(l.ref(job), false)
	if rec == nil || rec.written == nil {
		return false
	}
	w := rec.written
	if w.rv == "" || w.rv != job.GetResourceVersion() {
		return false
	}
	w.job, w.baseRVs = nil, nil
	return true
}

// freshest returns the newer of the cached job and our last write of it.
func (l lastWrites) freshest(cached client.Object) client.Object {
	j := l.ref(cached)
	written := func() client.Object {
		l.m.mu.Lock()
		defer l.m.mu.Unlock()
		rec := l.m.record(j, false)
		if rec == nil || rec.written == nil {
			return nil
		}
		w := rec.written
		switch rv := cached.GetResourceVersion(); {
		case slices.Contains(w.baseRVs, rv):
			return w.job
		case rv == w.rv:
			// Caught up: drop the copy (the cache holds the same), keep
			// the version so that its late watch event is known as an echo.
			w.job, w.baseRVs = nil, nil
			return nil
		}
		// The cache moved on (someone else wrote): trust it.
		rec.written = nil
		l.m.dropIfEmpty(j, rec)
		return nil
	}()
	if written == nil {
		return cached
	}
	// The remembered job is never changed once stored, so it is copied
	// outside the lock every job's pass shares.
	return written.DeepCopyObject().(client.Object)
}
