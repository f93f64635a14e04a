package engine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
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
	l, h := lastWrites[*kubeflowv1.PyTorchJob]{mem}, statusHolds{mem}
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
