package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
)

func TestLastWritesFreshest(t *testing.T) {
	version := func(uid, rv string) client.Object {
		j := testjobs.MakePyTorchJob("j", "ns").UID(uid).Obj()
		j.ResourceVersion = rv
		return j
	}
	l := newLastWrites()
	if got := l.freshest(version("u", "1")); got.GetResourceVersion() != "1" {
		t.Errorf("nothing written: got rv %s, want the cached 1", got.GetResourceVersion())
	}
	l.remember("1", version("u", "2"), time.Time{})
	if got := l.freshest(version("u", "1")); got.GetResourceVersion() != "2" {
		t.Errorf("stale cache: got rv %s, want our write 2", got.GetResourceVersion())
	}
	if got := l.freshest(version("other", "1")); got.GetUID() != "other" {
		t.Error("a new job with the same name must not get the old job's write")
	}
	l.remember("1", version("u", "2"), time.Time{})
	if got := l.freshest(version("u", "3")); got.GetResourceVersion() != "3" {
		t.Errorf("cache moved on: got rv %s, want 3", got.GetResourceVersion())
	}
	if got := l.freshest(version("u", "1")); got.GetResourceVersion() != "1" {
		t.Error("entry must be dropped once the cache caught up")
	}
	withFields := version("u", "5")
	withFields.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "training-operator"}})
	l.remember("4", withFields, time.Time{})
	if got := l.freshest(version("u", "4")); got.GetResourceVersion() != "5" || got.GetManagedFields() != nil {
		t.Errorf("remembered write: rv %s, managedFields %v; want rv 5 without managedFields", got.GetResourceVersion(), got.GetManagedFields())
	}
}
