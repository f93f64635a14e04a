package engine

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestLastWritesFreshest(t *testing.T) {
	version := func(uid, rv string) *kubeflowv1.PyTorchJob {
		j := testjobs.MakePyTorchJob("j", "ns").UID(uid).Obj()
		j.ResourceVersion = rv
		return j
	}
	l := lastWrites[*kubeflowv1.PyTorchJob]{testMemory()}
	if got := l.freshest(version("u", "1")); got.GetResourceVersion() != "1" {
		t.Errorf("nothing written: got rv %s, want the cached 1", got.GetResourceVersion())
	}
	l.remember("1", version("u", "2"))
	if got := l.freshest(version("u", "1")); got.GetResourceVersion() != "2" {
		t.Errorf("stale cache: got rv %s, want our write 2", got.GetResourceVersion())
	}
	if got := l.freshest(version("other", "1")); got.GetUID() != "other" {
		t.Error("a new job with the same name must not get the old job's write")
	}
	l.remember("1", version("u", "2"))
	if got := l.freshest(version("u", "3")); got.GetResourceVersion() != "3" {
		t.Errorf("cache moved on: got rv %s, want 3", got.GetResourceVersion())
	}
	if got := l.freshest(version("u", "1")); got.GetResourceVersion() != "1" {
		t.Error("entry must be dropped once the cache caught up")
	}
	// The cached job with the status, version and generation written.
	written := version("u", "5")
	written.Status.RestartCount, written.Generation = 7, 3
	l.remember("4", written)
	cached := version("u", "4")
	cached.Labels = map[string]string{"a": "b"}
	got := l.freshest(cached)
	if got.GetResourceVersion() != "5" || got.Status.RestartCount != 7 || got.Generation != 3 || got.Labels["a"] != "b" {
		t.Errorf("remembered write: rv %s, restartCount %d, generation %d, labels %v; want 5, 7, 3 and the cached labels",
			got.GetResourceVersion(), got.Status.RestartCount, got.Generation, got.Labels)
	}
	if got == cached || cached.Status.RestartCount != 0 || cached.ResourceVersion != "4" {
		t.Error("freshest changed the cached job")
	}
}

func TestLastWritesEcho(t *testing.T) {
	version := func(uid, rv string) *kubeflowv1.PyTorchJob {
		j := testjobs.MakePyTorchJob("j", "ns").UID(uid).Obj()
		j.ResourceVersion = rv
		return j
	}
	l := lastWrites[*kubeflowv1.PyTorchJob]{testMemory()}
	if l.isEcho(version("u", "2")) {
		t.Fatal("nothing written: no echo")
	}
	l.remember("1", version("u", "2"))
	if l.isEcho(version("u", "3")) || l.written(version("u", "2")).status == nil {
		t.Error("another version is news, and keeps the copy")
	}
	if !l.isEcho(version("u", "2")) {
		t.Error("the version our write made is its echo")
	}
	// Its event means the cache holds it: the copy goes without a pass.
	if l.written(version("u", "2")).status != nil {
		t.Error("echo handled: copy of the job still kept")
	}
	if !l.isEcho(version("u", "2")) {
		t.Error("the echo stays known")
	}
	l.remember("1", version("u", "2"))
	if l.isEcho(version("u", "3")) || l.isEcho(version("other", "2")) {
		t.Error("another version or another job with the name is news")
	}
	// The cache catching up before the event is handled keeps the echo known,
	// without keeping a copy of the job.
	if got := l.freshest(version("u", "2")); got.GetResourceVersion() != "2" {
		t.Fatalf("caught up: got rv %s", got.GetResourceVersion())
	}
	if !l.isEcho(version("u", "2")) || l.written(version("u", "2")).status != nil {
		t.Error("caught up: echo still known, copy dropped")
	}
	// Someone else's write is news, and ends the record.
	l.freshest(version("u", "7"))
	if l.isEcho(version("u", "2")) || l.m.Len() != 0 {
		t.Error("moved on: record dropped")
	}
}

// Two writes the cache has not shown yet: a cache still at the version
// before the first is as stale as one at the second's base.
func TestLastWritesChain(t *testing.T) {
	version := func(rv string) *kubeflowv1.PyTorchJob {
		j := testjobs.MakePyTorchJob("j", "ns").UID("u").Obj()
		j.ResourceVersion = rv
		return j
	}
	l := lastWrites[*kubeflowv1.PyTorchJob]{testMemory()}
	l.remember("1", version("2"))
	l.remember("2", version("3")) // a pass over our copy of write 2
	for _, cached := range []string{"1", "2"} {
		if got := l.freshest(version(cached)); got.GetResourceVersion() != "3" {
			t.Errorf("cache at %s, two writes behind: got rv %s, want our last write 3", cached, got.GetResourceVersion())
		}
	}
	// Caught up: the chain goes, and the next write starts a new one.
	if got := l.freshest(version("3")); got.GetResourceVersion() != "3" {
		t.Fatalf("caught up: got rv %s", got.GetResourceVersion())
	}
	l.remember("3", version("4"))
	if got := l.freshest(version("3")); got.GetResourceVersion() != "4" {
		t.Errorf("cache at 3: got rv %s, want 4", got.GetResourceVersion())
	}
	if w := l.written(version("4")); len(w.baseRVs) != 1 {
		t.Errorf("bases after catching up %v, want [3]", w.baseRVs)
	}
	// Someone else's write is trusted.
	if got := l.freshest(version("9")); got.GetResourceVersion() != "9" {
		t.Errorf("moved on: got rv %s, want 9", got.GetResourceVersion())
	}
}

// written is the job's last write as remembered.
func (l lastWrites[J]) written(job client.Object) lastWrite {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if rec := l.m.record(l.ref(job), false); rec != nil && rec.written != nil {
		return *rec.written
	}
	return lastWrite{}
}
