package engine

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// inflightTTL bounds how long the engine trusts its own memory over the cache.
const inflightTTL = 2 * time.Minute

// inflight remembers the child writes the informer cache has not shown yet,
// so a lagging cache never makes the engine create or delete a child twice
// (retries are counted durably, in status.countedPods). It is only an optimisation: child names
// are deterministic, so after an operator restart the apiserver's
// AlreadyExists still prevents duplicates.
type inflight struct {
	mu      sync.Mutex
	created map[types.UID]map[string]time.Time    // job UID -> child name
	deleted map[types.UID]map[types.UID]time.Time // job UID -> child UID
}

func newInflight() *inflight {
	return &inflight{
		created: map[types.UID]map[string]time.Time{},
		deleted: map[types.UID]map[types.UID]time.Time{},
	}
}

func mark[K comparable](m map[types.UID]map[K]time.Time, job types.UID, k K, now time.Time) {
	if m[job] == nil {
		m[job] = map[K]time.Time{}
	}
	m[job][k] = now
}

func live[K comparable](m map[types.UID]map[K]time.Time, job types.UID, k K, now time.Time) bool {
	t, ok := m[job][k]
	if !ok {
		return false
	}
	if now.Sub(t) > inflightTTL {
		drop(m, job, k)
		return false
	}
	return true
}

// drop removes one entry and the job's map once it is empty.
func drop[K comparable](m map[types.UID]map[K]time.Time, job types.UID, k K) {
	delete(m[job], k)
	if len(m[job]) == 0 {
		delete(m, job)
	}
}

func (f *inflight) markCreated(job types.UID, name string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mark(f.created, job, name, now)
}

// isCreating reports a child created by us that the cache does not show yet.
func (f *inflight) isCreating(job types.UID, name string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return live(f.created, job, name, now)
}

// observed forgets a creation once the cache shows the child.
func (f *inflight) observed(job types.UID, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	drop(f.created, job, name)
}

func (f *inflight) markDeleted(job, child types.UID, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mark(f.deleted, job, child, now)
}

// isDeleting reports a child we deleted that the cache still shows.
func (f *inflight) isDeleting(job, child types.UID, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return live(f.deleted, job, child, now)
}

// forget drops everything about a job (it is gone).
func (f *inflight) forget(job types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.created, job)
	delete(f.deleted, job)
}
