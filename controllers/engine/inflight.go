package engine

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The in-flight part of a job's record remembers the child writes the
// informer cache has not shown yet, so a lagging cache never makes a
// controller create or delete a child twice. It is only an optimisation:
// child names are deterministic, so after an operator restart the
// apiserver's AlreadyExists still prevents duplicates. The gang scheduler
// keeps its PodGroup deletions here too, so they go with the job.

// inflightTTL bounds how long a controller trusts its own memory over the cache.
const inflightTTL = 2 * time.Minute

type inflightWrites struct {
	created map[string]time.Time    // child name
	deleted map[types.UID]time.Time // child UID
}

func (w *inflightWrites) empty() bool { return len(w.created) == 0 && len(w.deleted) == 0 }

// expire drops the writes older than inflightTTL.
func (w *inflightWrites) expire(now time.Time) {
	for c, t := range w.created {
		if now.Sub(t) > inflightTTL {
			delete(w.created, c)
		}
	}
	for c, t := range w.deleted {
		if now.Sub(t) > inflightTTL {
			delete(w.deleted, c)
		}
	}
}

// MarkCreated records a child the job created.
func (m *JobMemory) MarkCreated(j JobRef, child string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.sweep(now)
	w := &m.record(j, true).inflight
	if w.created == nil {
		w.created = map[string]time.Time{}
	}
	w.created[child] = now
}

// IsCreating reports a child created by the job that the cache does not show yet.
func (m *JobMemory) IsCreating(j JobRef, child string) bool {
	_, ok := m.Creating(j, child)
	return ok
}

// Creating is IsCreating with how long the record has left to live.
func (m *JobMemory) Creating(j JobRef, child string) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec := m.record(j, false)
	if rec == nil {
		return 0, false
	}
	t, ok := rec.inflight.created[child]
	age := m.clock.Since(t)
	if ok && age > inflightTTL {
		delete(rec.inflight.created, child)
		m.dropIfEmpty(j, rec)
		return 0, false
	}
	return inflightTTL - age, ok
}

// Observed forgets a creation once the cache shows (or no longer shows) the child.
func (m *JobMemory) Observed(j JobRef, child string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rec := m.record(j, false); rec != nil {
		delete(rec.inflight.created, child)
		m.dropIfEmpty(j, rec)
	}
}

// MarkDeleted records a child (by UID) the job deleted.
func (m *JobMemory) MarkDeleted(j JobRef, child types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.sweep(now)
	w := &m.record(j, true).inflight
	if w.deleted == nil {
		w.deleted = map[types.UID]time.Time{}
	}
	w.deleted[child] = now
}

// IsDeleting reports a child the job deleted that the cache may still show.
func (m *JobMemory) IsDeleting(j JobRef, child types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec := m.record(j, false)
	if rec == nil {
		return false
	}
	t, ok := rec.inflight.deleted[child]
	if ok && m.clock.Since(t) > inflightTTL {
		delete(rec.inflight.deleted, child)
		m.dropIfEmpty(j, rec)
		return false
	}
	return ok
}

// MarkReleased records a child (by UID) whose finalizer the job removed,
// and IsReleased reports one the cache may still show with it, so a
// lagging cache does not make the job remove it again.
func (m *JobMemory) MarkReleased(j JobRef, child types.UID) { m.MarkCreated(j, releasedKey(child)) }

// IsReleased: see MarkReleased.
func (m *JobMemory) IsReleased(j JobRef, child types.UID) bool {
	return m.IsCreating(j, releasedKey(child))
}

// releasedKey keeps releases apart from creations in the created map (a
// child name never contains a space).
func releasedKey(uid types.UID) string { return "released " + string(uid) }
