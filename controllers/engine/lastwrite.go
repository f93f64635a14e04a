package engine

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// lastWrites remembers each job's last status write (jobRecord.written),
// so a reconcile that runs before the informer cache has seen that write
// starts from what was written instead of a stale copy: no 409 on the
// optimistic-locked patch, no lost condition, no extra round trip. It keeps
// the status, the resourceVersion and the generation the write returned:
// the write changed nothing else, and a cache that has not caught up shows
// the rest as it was (its version is one of the write's bases).
type lastWrites[J Job[J]] struct{ kindMemory }

type lastWrite struct {
	// baseRVs are the resourceVersions the write was made over: the one it
	// was locked to and, when that was our own earlier write the cache had
	// not shown yet, that write's bases too. A cache showing any of them has
	// not caught up. Knowing only the last one, a pass over a cache two
	// writes behind took it for someone else's newer write: make chaos saw
	// such a pass, during an apiserver restart, recreate a deleted pod in
	// the attempt a whole-job restart had just ended.
	baseRVs []string
	// status is what the write stored, with the generation it returned;
	// nil once the cache has caught up. Never changed once remembered.
	status     *kubeflowv1.JobStatus
	generation int64
	// rv identifies the written version, whose watch event is our own
	// write coming back (see isEcho).
	rv string
}

// maxWriteChain bounds the bases kept for consecutive writes the cache has
// not shown (a cache stays behind for seconds, a pass writes at most once).
const maxWriteChain = 32

// remember records the job a status write returned, which it now owns;
// it ends any hold (statusbatch.go).
func (l lastWrites[J]) remember(baseRV string, job J) {
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
	// A copy of the status alone: a pointer into the job would keep all of it.
	st := *job.JobStatus()
	rec.written = &lastWrite{baseRVs: bases, status: &st, generation: job.GetGeneration(), rv: job.GetResourceVersion()}
	rec.held = statusHold{}
}

// isEcho reports whether job, from the job watch, is the version our last
// status write of it created: its watch event tells the reconciler nothing
// it does not know, since the pass that wrote it also ran what follows the
// write and asked for any requeue it needs. The cache holds that version
// once its event is handled, so the written status is dropped here: no
// pass may come to drop it (a finished job is not reconciled again), and
// every retained finished job would be kept whole this way.
func (l lastWrites[J]) isEcho(job client.Object) bool {
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
	w.status, w.baseRVs = nil, nil
	return true
}

// freshest returns the newer of the cached job and our last write of it.
func (l lastWrites[J]) freshest(cached J) J {
	j := l.ref(cached)
	written := func() *lastWrite {
		l.m.mu.Lock()
		defer l.m.mu.Unlock()
		rec := l.m.record(j, false)
		if rec == nil || rec.written == nil {
			return nil
		}
		w := rec.written
		switch rv := cached.GetResourceVersion(); {
		case slices.Contains(w.baseRVs, rv):
			return &lastWrite{status: w.status, generation: w.generation, rv: w.rv}
		case rv == w.rv:
			// Caught up: drop the status (the cache holds the same), keep
			// the version so that its late watch event is known as an echo.
			w.status, w.baseRVs = nil, nil
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
	// The remembered status is never changed once stored, so it is copied
	// outside the lock every job's pass shares.
	fresh := cached.DeepCopy()
	written.status.DeepCopyInto(fresh.JobStatus())
	fresh.SetResourceVersion(written.rv)
	fresh.SetGeneration(written.generation)
	return fresh
}
