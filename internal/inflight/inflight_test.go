package inflight

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func job(name, uid string) Job {
	return Job{Kind: "PyTorchJob", NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}, UID: types.UID(uid)}
}

func TestStore(t *testing.T) {
	type state struct {
		Creating, Deleting bool
		Len                int
	}
	a, a2 := job("a", "1"), job("a", "2")
	for _, tc := range []struct {
		name  string
		steps func(s *Store, clk *clocktesting.FakeClock)
		ask   Job
		want  state
	}{
		{"recorded", func(s *Store, _ *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
			s.MarkDeleted(a, "c")
		}, a, state{true, true, 1}},
		{"observed creation is dropped", func(s *Store, _ *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
			s.Observed(a, "pod/p")
		}, a, state{false, false, 0}},
		{"expired on lookup", func(s *Store, clk *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
			s.MarkDeleted(a, "c")
			clk.Step(DefaultTTL + time.Second)
		}, a, state{false, false, 0}},
		{"expired by the sweep of another write", func(s *Store, clk *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
			clk.Step(DefaultTTL + time.Second)
			s.MarkCreated(job("b", "3"), "pod/q")
		}, a, state{false, false, 1}},
		{"another incarnation sees nothing", func(s *Store, _ *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
		}, a2, state{false, false, 1}},
		{"forget by name", func(s *Store, _ *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
			s.Forget(Job{Kind: a.Kind, NamespacedName: a.NamespacedName})
		}, a, state{false, false, 0}},
		{"forget of an older incarnation spares the newer", func(s *Store, _ *clocktesting.FakeClock) {
			s.MarkCreated(a2, "pod/p")
			s.Forget(a)
		}, a2, state{true, false, 1}},
		{"same name of another kind is another job", func(s *Store, _ *clocktesting.FakeClock) {
			s.MarkCreated(a, "pod/p")
			tf := a
			tf.Kind = "TFJob"
			s.Forget(Job{Kind: tf.Kind, NamespacedName: tf.NamespacedName})
		}, a, state{true, false, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			s := New(clk, 0)
			tc.steps(s, clk)
			got := state{s.IsCreating(tc.ask, "pod/p"), s.IsDeleting(tc.ask, "c"), s.Len()}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// 10,000 jobs that create and delete children and then go (forgotten by
// name, as on a NotFound, or by UID, as on a delete event) leave the store
// empty.
func TestGoneJobsLeaveStoreEmpty(t *testing.T) {
	s := New(clocktesting.NewFakeClock(time.Unix(1000, 0)), 0)
	peak := 0
	for i := range 10000 {
		j := Job{Kind: "PyTorchJob", NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("j-%d", i)}, UID: types.UID(fmt.Sprint(i))}
		s.MarkCreated(j, "pod/w-0")
		s.MarkCreated(j, "svc/w-0")
		s.MarkDeleted(j, types.UID(fmt.Sprintf("%d-old", i)))
		peak = max(peak, s.Len())
		if i%2 == 0 {
			s.Forget(Job{Kind: j.Kind, NamespacedName: j.NamespacedName})
		} else {
			s.Forget(j)
		}
	}
	if d := cmp.Diff(struct{ Peak, Len int }{1, 0}, struct{ Peak, Len int }{peak, s.Len()}); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
