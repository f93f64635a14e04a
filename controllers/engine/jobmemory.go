package engine

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// JobMemory is what the engine remembers of each job between passes, one
// record per job. Each concern keeps its part of the record and the logic
// that reads it in its own file: in-flight child writes (inflight.go), the
// last status write (lastwrite.go), a held-back status change
// (statusbatch.go), pod events recorded (podevents_memo.go), pods that left
// the cache uncounted (vanished.go), and jobs counted as created for another
// controller (metrics.go). A job's record goes at once when the job does
// (Forget), and when nothing is left in it; the sweep expires in-flight
// writes of jobs whose children's events were missed.
//
// Records are keyed by kind, namespace and name, not by UID, so a job that
// is gone (a NotFound carries only the name) can be forgotten; the UID tells
// a new job of the same name from the old one, which never sees the old
// record. It is safe for concurrent use: one lock, held for a map access and
// a part's update only (copies and sorts happen outside it).
type JobMemory struct {
	clock clock.PassiveClock

	mu    sync.Mutex
	jobs  map[jobKey]*jobRecord
	swept time.Time
}

// JobRef names one job, and with its UID one incarnation of it.
type JobRef struct {
	Kind string
	types.NamespacedName
	UID types.UID
}

// JobRefOf names a job object of the given kind.
func JobRefOf(kind string, obj metav1.Object) JobRef {
	return JobRef{Kind: kind, NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, UID: obj.GetUID()}
}

type jobKey struct {
	kind string
	types.NamespacedName
}

func (j JobRef) key() jobKey { return jobKey{j.Kind, j.NamespacedName} }

// jobRecord is one job's record: its UID and each concern's part.
type jobRecord struct {
	uid      types.UID
	inflight inflightWrites // inflight.go
	written  *lastWrite     // lastwrite.go
	held     statusHold     // statusbatch.go
	pods     podMemo        // podevents_memo.go
	vanished vanishedJob    // vanished.go
	external bool           // metrics.go: counted as created, managed by another controller
}

func (r *jobRecord) empty() bool {
	return r.inflight.empty() && r.written == nil && !r.held.ok && r.pods.empty() && r.vanished.empty() && !r.external
}

// NewJobMemory returns an empty memory; nil clk means the real clock.
func NewJobMemory(clk clock.PassiveClock) *JobMemory {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &JobMemory{clock: clk, jobs: map[jobKey]*jobRecord{}, swept: clk.Now()}
}

// record returns the job's record, m.mu held. A record of another
// incarnation is replaced when creating (that one is gone) and ignored
// otherwise.
func (m *JobMemory) record(j JobRef, create bool) *jobRecord {
	rec := m.jobs[j.key()]
	if rec != nil && rec.uid == j.UID {
		return rec
	}
	if !create {
		return nil
	}
	rec = &jobRecord{uid: j.UID}
	m.jobs[j.key()] = rec
	return rec
}

// dropIfEmpty frees a record that holds nothing, m.mu held.
func (m *JobMemory) dropIfEmpty(j JobRef, rec *jobRecord) {
	if rec != nil && rec.empty() && m.jobs[j.key()] == rec {
		delete(m.jobs, j.key())
	}
}

// Forget drops everything about a job that is gone. An empty UID (a
// NotFound names no incarnation) forgets whichever the memory holds; a set
// one spares a newer job of the same name.
func (m *JobMemory) Forget(j JobRef) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rec := m.jobs[j.key()]; rec != nil && (j.UID == "" || rec.uid == j.UID) {
		delete(m.jobs, j.key())
	}
}

// sweep expires in-flight writes, at most once per inflightTTL, m.mu held:
// a job whose child or delete events were missed (a restart of the watch)
// is freed all the same once nothing else is left of it.
func (m *JobMemory) sweep(now time.Time) {
	if now.Sub(m.swept) <= inflightTTL {
		return
	}
	m.swept = now
	for k, rec := range m.jobs {
		rec.inflight.expire(now)
		if rec.empty() {
			delete(m.jobs, k)
		}
	}
}

// Len is the number of jobs with records, for tests and leak checks.
func (m *JobMemory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.jobs)
}

// kindMemory is one controller's view of the memory: its kind's records.
// The concerns' views (lastWrites, podMemos, ...) embed it.
type kindMemory struct {
	m    *JobMemory
	kind string
}

func (k kindMemory) ref(job metav1.Object) JobRef { return JobRefOf(k.kind, job) }

func (k kindMemory) refOf(key types.NamespacedName, uid types.UID) JobRef {
	return JobRef{Kind: k.kind, NamespacedName: key, UID: uid}
}
