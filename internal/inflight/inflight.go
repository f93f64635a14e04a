// Package inflight remembers the child writes the informer cache has not
// shown yet, so a lagging cache never makes a controller create or delete a
// child twice. It is only an optimisation: child names are deterministic, so
// after an operator restart the apiserver's AlreadyExists still prevents
// duplicates.
package inflight

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// DefaultTTL bounds how long a controller trusts its own memory over the cache.
const DefaultTTL = 2 * time.Minute

// Job names the job a record belongs to. Records are keyed by kind,
// namespace and name, not by UID, so a job that is gone (a NotFound carries
// only the name) can be forgotten; the UID tells a new job of the same name
// from the old one.
type Job struct {
	Kind string
	types.NamespacedName
	UID types.UID
}

// JobOf names a job object of the given kind.
func JobOf(kind string, obj metav1.Object) Job {
	return Job{Kind: kind, NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, UID: obj.GetUID()}
}

type key struct {
	kind string
	types.NamespacedName
}

type entry struct {
	uid     types.UID
	created map[string]time.Time    // child name
	deleted map[types.UID]time.Time // child UID
}

// Store is the in-flight record of every job of one process. It is safe for
// concurrent use.
type Store struct {
	clock clock.PassiveClock
	ttl   time.Duration

	mu    sync.Mutex
	jobs  map[key]*entry
	swept time.Time
}

// New returns an empty store; nil clk means the real clock, ttl <= 0 DefaultTTL.
func New(clk clock.PassiveClock, ttl time.Duration) *Store {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Store{clock: clk, ttl: ttl, jobs: map[key]*entry{}, swept: clk.Now()}
}

func keyOf(j Job) key { return key{j.Kind, j.NamespacedName} }

// entry returns the job's record; a record of another incarnation is
// replaced when creating (that one is gone) and ignored otherwise.
func (s *Store) entry(j Job, create bool) *entry {
	k := keyOf(j)
	e := s.jobs[k]
	if e != nil && e.uid == j.UID {
		return e
	}
	if !create {
		return nil
	}
	e = &entry{uid: j.UID, created: map[string]time.Time{}, deleted: map[types.UID]time.Time{}}
	s.jobs[k] = e
	return e
}

// dropIfEmpty frees a job whose record holds nothing.
func (s *Store) dropIfEmpty(j Job, e *entry) {
	if len(e.created) == 0 && len(e.deleted) == 0 {
		delete(s.jobs, keyOf(j))
	}
}

// sweep drops expired records, at most once per TTL: a job whose delete was
// never seen (a missed event, a restart of the watch) is freed all the same.
func (s *Store) sweep(now time.Time) {
	if now.Sub(s.swept) <= s.ttl {
		return
	}
	s.swept = now
	for k, e := range s.jobs {
		for c, t := range e.created {
			if now.Sub(t) > s.ttl {
				delete(e.created, c)
			}
		}
		for c, t := range e.deleted {
			if now.Sub(t) > s.ttl {
				delete(e.deleted, c)
			}
		}
		if len(e.created) == 0 && len(e.deleted) == 0 {
			delete(s.jobs, k)
		}
	}
}

// MarkCreated records a child the job created.
func (s *Store) MarkCreated(j Job, child string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.sweep(now)
	s.entry(j, true).created[child] = now
}

// IsCreating reports a child created by the job that the cache does not show yet.
func (s *Store) IsCreating(j Job, child string) bool {
	_, ok := s.Creating(j, child)
	return ok
}

// Creating is IsCreating with how long the record has left to live.
func (s *Store) Creating(j Job, child string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(j, false)
	if e == nil {
		return 0, false
	}
	t, ok := e.created[child]
	age := s.clock.Since(t)
	if ok && age > s.ttl {
		delete(e.created, child)
		s.dropIfEmpty(j, e)
		return 0, false
	}
	return s.ttl - age, ok
}

// Observed forgets a creation once the cache shows (or no longer shows) the child.
func (s *Store) Observed(j Job, child string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entry(j, false); e != nil {
		delete(e.created, child)
		s.dropIfEmpty(j, e)
	}
}

// MarkDeleted records a child (by UID) the job deleted.
func (s *Store) MarkDeleted(j Job, child types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.sweep(now)
	s.entry(j, true).deleted[child] = now
}

// IsDeleting reports a child the job deleted that the cache may still show.
func (s *Store) IsDeleting(j Job, child types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(j, false)
	if e == nil {
		return false
	}
	t, ok := e.deleted[child]
	if ok && s.clock.Since(t) > s.ttl {
		delete(e.deleted, child)
		s.dropIfEmpty(j, e)
		return false
	}
	return ok
}

// MarkReleased records a child (by UID) whose finalizer the job removed,
// and IsReleased reports one the cache may still show with it, so a
// lagging cache does not make the job remove it again.
func (s *Store) MarkReleased(j Job, child types.UID) { s.MarkCreated(j, releasedKey(child)) }

// IsReleased: see MarkReleased.
func (s *Store) IsReleased(j Job, child types.UID) bool { return s.IsCreating(j, releasedKey(child)) }

// releasedKey keeps releases apart from creations in the created map (a
// child name never contains a space).
func releasedKey(uid types.UID) string { return "released " + string(uid) }

// Forget drops everything about a job that is gone. An empty UID (a
// NotFound names no incarnation) forgets whichever the store holds; a set
// one spares a newer job of the same name.
func (s *Store) Forget(j Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := keyOf(j)
	if e := s.jobs[k]; e != nil && (j.UID == "" || e.uid == j.UID) {
		delete(s.jobs, k)
	}
}

// Len is the number of jobs with records, for tests and leak checks.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobs)
}
