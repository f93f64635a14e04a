package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func jobRef(name, uid string) JobRef {
	return JobRef{Kind: "PyTorchJob", NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}, UID: types.UID(uid)}
}

func TestInflight(t *testing.T) {
	type state struct {
		Creating, Deleting bool
		Len                int
	}
	a, a2 := jobRef("a", "1"), jobRef("a", "2")
	for _, tc := range []struct {
		name  string
		steps func(m *JobMemory, clk *clocktesting.FakeClock)
		ask   JobRef
		want  state
	}{
		{"recorded", func(m *JobMemory, _ *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
			m.MarkDeleted(a, "c")
		}, a, state{true, true, 1}},
		{"observed creation is dropped", func(m *JobMemory, _ *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
			m.Observed(a, "pod/p")
		}, a, state{false, false, 0}},
		{"expired on lookup", func(m *JobMemory, clk *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
			m.MarkDeleted(a, "c")
			clk.Step(inflightTTL + time.Second)
		}, a, state{false, false, 0}},
		{"expired by the sweep of another write", func(m *JobMemory, clk *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
			clk.Step(inflightTTL + time.Second)
			m.MarkCreated(jobRef("b", "3"), "pod/q")
		}, a, state{false, false, 1}},
		{"another incarnation sees nothing", func(m *JobMemory, _ *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
		}, a2, state{false, false, 1}},
		{"forget by name", func(m *JobMemory, _ *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
			m.Forget(JobRef{Kind: a.Kind, NamespacedName: a.NamespacedName})
		}, a, state{false, false, 0}},
		{"forget of an older incarnation spares the newer", func(m *JobMemory, _ *clocktesting.FakeClock) {
			m.MarkCreated(a2, "pod/p")
			m.Forget(a)
		}, a2, state{true, false, 1}},
		{"same name of another kind is another job", func(m *JobMemory, _ *clocktesting.FakeClock) {
			m.MarkCreated(a, "pod/p")
			tf := a
			tf.Kind = "TFJob"
			m.Forget(JobRef{Kind: tf.Kind, NamespacedName: tf.NamespacedName})
		}, a, state{true, false, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			m := NewJobMemory(clk)
			tc.steps(m, clk)
			got := state{m.IsCreating(tc.ask, "pod/p"), m.IsDeleting(tc.ask, "c"), m.Len()}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// 10,000 jobs that create and delete children and then go (forgotten by
// name, as on a NotFound, or by UID, as on a delete event) leave the memory
// empty.
func TestGoneJobsLeaveInflightEmpty(t *testing.T) {
	m := NewJobMemory(clocktesting.NewFakeClock(time.Unix(1000, 0)))
	peak := 0
	for i := range 10000 {
		j := JobRef{Kind: "PyTorchJob", NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("j-%d", i)}, UID: types.UID(fmt.Sprint(i))}
		m.MarkCreated(j, "pod/w-0")
		m.MarkCreated(j, "svc/w-0")
		m.MarkDeleted(j, types.UID(fmt.Sprintf("%d-old", i)))
		peak = max(peak, m.Len())
		if i%2 == 0 {
			m.Forget(JobRef{Kind: j.Kind, NamespacedName: j.NamespacedName})
		} else {
			m.Forget(j)
		}
	}
	if d := cmp.Diff(struct{ Peak, Len int }{1, 0}, struct{ Peak, Len int }{peak, m.Len()}); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
