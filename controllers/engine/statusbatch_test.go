package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
)

func TestStatusDelay(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cond := func(ct kubeflowv1.JobConditionType) kubeflowv1.JobCondition {
		return kubeflowv1.JobCondition{Type: ct, Status: corev1.ConditionTrue}
	}
	counts := func(active int32) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus {
		return map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Worker": {Active: active}}
	}
	created := kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobCreated)}, ReplicaStatuses: counts(0)}
	running := kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobCreated), cond(kubeflowv1.JobRunning)}, ReplicaStatuses: counts(1)}
	moreActive := *running.DeepCopy()
	moreActive.ReplicaStatuses = counts(3)
	restarted := *running.DeepCopy()
	restarted.RestartCount = 1

	cases := map[string]struct {
		cur, next    kubeflowv1.JobStatus
		held         time.Time
		now          time.Time
		window, want time.Duration
	}{
		"a new job's Created: written at once": {
			next: created, held: t0.Add(500 * time.Millisecond), now: t0.Add(500 * time.Millisecond), window: 2 * time.Second,
		},
		"a new job already Running: written at once": {
			next: running, held: t0.Add(time.Second), now: t0.Add(time.Second), window: 2 * time.Second,
		},
		"counts just held back wait a whole window, however old the job": {
			cur: running, next: moreActive, held: t0.Add(time.Minute), now: t0.Add(time.Minute),
			window: 2 * time.Second, want: 2 * time.Second,
		},
		"counts held back a while ago wait out the rest": {
			cur: running, next: moreActive, held: t0.Add(10 * time.Second), now: t0.Add(11 * time.Second),
			window: 2 * time.Second, want: time.Second,
		},
		"counts held back a window ago: written": {
			cur: running, next: moreActive, held: t0.Add(10 * time.Second), now: t0.Add(12 * time.Second), window: 2 * time.Second,
		},
		"restart count never waits": {
			cur: running, next: restarted, held: t0, now: t0, window: 2 * time.Second,
		},
		"new condition never waits": {
			cur: created, next: running, held: t0, now: t0, window: 2 * time.Second,
		},
		"dropping counted pods that are gone waits": {
			cur: withCounted(running, "a", "b"), next: withCounted(running, "b"), held: t0, now: t0, window: 2 * time.Second,
			want: 2 * time.Second,
		},
		"a newly counted pod never waits": {
			cur: withCounted(running, "a"), next: withCounted(restarted, "a", "b"), held: t0, now: t0, window: 2 * time.Second,
		},
		"disabled": {
			cur: running, next: moreActive, held: t0, now: t0, window: -1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := statusDelay(&tc.cur, &tc.next, tc.held, tc.now, tc.window); got != tc.want {
				t.Errorf("statusDelay = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStatusHold(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := testjobs.MakePyTorchJob("j", "ns").UID("u").Obj()
	mem := testMemory()
	l, h := lastWrites{mem}, statusHolds{mem}
	if got := h.hold(job, t0); !got.Equal(t0) {
		t.Errorf("first hold = %v, want now %v", got, t0)
	}
	if got := h.hold(job, t0.Add(time.Second)); !got.Equal(t0) {
		t.Errorf("second hold = %v, want the first %v", got, t0)
	}
	if got := h.hold(testjobs.MakePyTorchJob("j", "ns").UID("new").Obj(), t0.Add(time.Second)); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("a new job with the same name must not inherit the old hold, got %v", got)
	}
	l.remember("1", job)
	if got := h.hold(job, t0.Add(2*time.Second)); !got.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("a write ends the hold: got %v", got)
	}
	h.unhold(job)
	if got := h.hold(job, t0.Add(3*time.Second)); !got.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("unhold ends the hold: got %v", got)
	}
}

func withCounted(st kubeflowv1.JobStatus, uids ...string) kubeflowv1.JobStatus {
	out := *st.DeepCopy()
	out.CountedPods = uids
	return out
}

func TestStillPresent(t *testing.T) {
	pods := []*corev1.Pod{testjobs.MakePod("a", "ns").UID("uid-a").Obj(), testjobs.MakePod("c", "ns").UID("uid-c").Obj()}
	if diff := cmp.Diff([]string{"uid-a"}, stillPresent([]string{"uid-a", "uid-b"}, pods)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := stillPresent([]string{"uid-b"}, pods); got != nil {
		t.Errorf("all gone: got %v, want nil (the field is omitted)", got)
	}
}

type recordedEvents []string

func (r *recordedEvents) Event(_ runtime.Object, eventType, reason, message string) {
	*r = append(*r, eventType+" "+reason+" "+message)
}

func TestCreatedChildrenEvents(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").Obj()
	pod := func(n string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}} }
	svc := func(n string) *corev1.Service { return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n}} }

	var one createdChildren
	one.add(pod("j-master-0"))
	var rec recordedEvents
	one.emit(&rec, job)
	if diff := cmp.Diff(recordedEvents{"Normal SuccessfulCreatePod Created pod: j-master-0"}, rec); diff != "" {
		t.Errorf("one pod: v1's message expected (-want +got):\n%s", diff)
	}

	var many createdChildren
	for _, n := range []string{"j-worker-1", "j-master-0", "j-worker-0"} {
		many.add(pod(n))
		many.add(svc(n))
	}
	rec = nil
	many.emit(&rec, job)
	want := recordedEvents{
		"Normal SuccessfulCreatePod Created 3 pods: j-master-0, j-worker-0, j-worker-1",
		"Normal SuccessfulCreateService Created 3 services: j-master-0, j-worker-0, j-worker-1",
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
}

func TestJoinNamesElidesLongLists(t *testing.T) {
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("w-%04d", i))
	}
	got := joinNames(names)
	if want := "w-0000, w-0001, w-0002, w-0003, w-0004, w-0005, w-0006, w-0007, w-0008, w-0009, ... (980 more), " +
		"w-0990, w-0991, w-0992, w-0993, w-0994, w-0995, w-0996, w-0997, w-0998, w-0999"; got != want {
		t.Errorf("joinNames =\n%s\nwant\n%s", got, want)
	}
}
