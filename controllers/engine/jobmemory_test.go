package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// memorySizes counts the memory's records, and those holding each part.
type memorySizes struct {
	Records, Inflight, Written, Held, External, PodMemos, Looked, Vanished int
}

func (m *JobMemory) sizes() memorySizes {
	m.mu.Lock()
	defer m.mu.Unlock()
	var s memorySizes
	count := func(n *int, has bool) {
		if has {
			*n++
		}
	}
	for _, rec := range m.jobs {
		s.Records++
		count(&s.Inflight, !rec.inflight.empty())
		count(&s.Written, rec.written != nil)
		count(&s.Held, rec.held.ok)
		count(&s.External, rec.external)
		count(&s.PodMemos, len(rec.pods.seen) > 0)
		count(&s.Looked, rec.pods.looked)
		count(&s.Vanished, !rec.vanished.empty())
	}
	return s
}

// testMemory is a fresh memory as one controller sees it.
func testMemory() kindMemory { return kindMemory{NewJobMemory(nil), "PyTorchJob"} }

// A job deleted and created again under its name (a new UID) starts from
// nothing: no part of the old job's record is seen, and the new job's
// first write replaces the record. Forgetting the old job spares the new.
func TestRecreatedJobStartsAfresh(t *testing.T) {
	mem := testMemory()
	written, holds, external, memos, vanished := lastWrites[*kubeflowv1.PyTorchJob]{mem}, statusHolds{mem}, externalJobs{mem}, podMemos{mem}, vanishedPods{mem}
	version := func(uid types.UID, rv string) *kubeflowv1.PyTorchJob {
		j := testjobs.MakePyTorchJob("j", "ns").UID(string(uid)).Obj()
		j.ResourceVersion = rv
		return j
	}
	oldJob, newJob := version("old", "1"), version("new", "1")
	key := client.ObjectKeyFromObject(oldJob)
	oldRef, newRef := mem.ref(oldJob), mem.ref(newJob)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	// The old job uses every part.
	mem.m.MarkCreated(oldRef, "pod/j-worker-0")
	mem.m.MarkDeleted(oldRef, "pod-a")
	written.remember("1", version("old", "2"))
	holds.hold(oldJob, t0)
	external.first(key, "old")
	memos.set(key, "old", podsSeen{"pod-b": {1}})
	memos.firstLook(key, "old")
	vanished.left(key, "old", testjobs.MakePod("j-worker-1", "ns").UID("pod-c").Phase(corev1.PodFailed).Obj(), false)
	vanished.settle(key, "old", nil, []types.UID{"pod-d"})
	all := memorySizes{Records: 1, Inflight: 1, Written: 1, Held: 1, External: 1, PodMemos: 1, Looked: 1, Vanished: 1}
	if d := cmp.Diff(all, mem.m.sizes()); d != "" {
		t.Fatalf("the old job's record (-want +got):\n%s", d)
	}

	type seen struct {
		Creating, Deleting, Echo, Fresher, External, FirstLook bool
		Held                                                   time.Time
		Memo                                                   podsSeen
		Pending                                                int
	}
	got := seen{
		Creating: mem.m.IsCreating(newRef, "pod/j-worker-0"),
		Deleting: mem.m.IsDeleting(newRef, "pod-a"),
		Echo:     written.isEcho(version("new", "2")),
		Fresher:  written.freshest(newJob).GetResourceVersion() != "1",
		Memo:     memos.get(key, "new"),
		Pending:  len(vanished.pending(key, "new")),
	}
	if d := cmp.Diff(seen{}, got); d != "" {
		t.Errorf("the new job sees the old job's record (-want +got):\n%s", d)
	}
	// The new job's first write replaces the record.
	got = seen{
		External:  external.first(key, "new"),
		FirstLook: memos.firstLook(key, "new"),
		Held:      holds.hold(newJob, t0.Add(time.Minute)),
	}
	if d := cmp.Diff(seen{External: true, FirstLook: true, Held: t0.Add(time.Minute)}, got); d != "" {
		t.Errorf("the new job's first writes (-want +got):\n%s", d)
	}
	if d := cmp.Diff(memorySizes{Records: 1, Held: 1, External: 1, Looked: 1}, mem.m.sizes()); d != "" {
		t.Errorf("after the new job's writes (-want +got):\n%s", d)
	}
	// The old job's delete event comes late: the new job's record stays.
	mem.m.Forget(oldRef)
	if n := mem.m.Len(); n != 1 {
		t.Errorf("forgetting the old job left %d records, want the new job's", n)
	}
	mem.m.Forget(JobRef{Kind: mem.kind, NamespacedName: key})
	if n := mem.m.Len(); n != 0 {
		t.Errorf("forget by name (NotFound) left %d records", n)
	}
}
