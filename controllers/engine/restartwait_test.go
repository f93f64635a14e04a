package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestRestartDelay(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	for _, tc := range []struct {
		name     string
		fp       *kubeflowv1.FailurePolicy
		restarts []int32
		want     []time.Duration
	}{
		{name: "no backoff", fp: fp(5).Obj(), restarts: []int32{0, 1, 4}, want: []time.Duration{0, 0, 0}},
		{name: "doubles from the first restart, capped", fp: fp(9).Backoff(10, 60).Obj(), restarts: []int32{0, 1, 2, 3, 4, 40},
			want: []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}},
		{name: "the default cap", fp: fp(9).Backoff(100, 0).Obj(), restarts: []int32{2, 3},
			want: []time.Duration{200 * time.Second, 300 * time.Second}},
		{name: "a cap equal to the first delay", fp: fp(9).Backoff(7, 7).Obj(), restarts: []int32{1, 2}, want: []time.Duration{7 * time.Second, 7 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []time.Duration
			for _, n := range tc.restarts {
				got = append(got, restartDelay(tc.fp, n))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("restartDelay (-want +got):\n%s", d)
			}
		})
	}
}

func TestRestartDelayLeft(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	fp := testjobs.MakeFailurePolicy(3).Backoff(10, 0).Obj()
	restarting := func(reason string) *kubeflowv1.JobStatus {
		return &kubeflowv1.JobStatus{Restarts: ptr.To(int32(2)), Conditions: []kubeflowv1.JobCondition{{
			Type: kubeflowv1.JobRestarting, Status: corev1.ConditionTrue, Reason: reason, LastUpdateTime: metav1.NewTime(t0),
		}}}
	}
	for _, tc := range []struct {
		name string
		st   *kubeflowv1.JobStatus
		now  time.Time
		want time.Duration
	}{
		{name: "a whole-job restart: the second delay, from the decision", st: restarting(kubeflowv1.FailurePolicyRestartJobReason), now: t0.Add(5 * time.Second), want: 15 * time.Second},
		{name: "over", st: restarting(kubeflowv1.FailurePolicyNoRuleMatchedReason), now: t0.Add(25 * time.Second), want: -5 * time.Second},
		{name: "a per-pod retry waits for nothing", st: restarting("PyTorchJobRestarting"), now: t0, want: 0},
		{name: "not restarting", st: &kubeflowv1.JobStatus{Restarts: ptr.To(int32(2))}, now: t0, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := restartDelayLeft(fp, tc.st, tc.now); got != tc.want {
				t.Errorf("restartDelayLeft = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStuckPods(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	// deleting is a pod whose grace period ends at t0+sec.
	deleting := func(name string, sec int) *corev1.Pod {
		p := testjobs.MakePod(name, "ns").Phase(corev1.PodRunning).Obj()
		p.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Duration(sec) * time.Second)}
		return p
	}
	live := testjobs.MakePod("j-worker-9", "ns").Phase(corev1.PodRunning).Obj()
	old := []*corev1.Pod{deleting("j-worker-2", 0), live, deleting("j-worker-1", -60), deleting("j-worker-3", 10)}
	stuck, next := stuckPods(old, t0.Add(stuckAfter))
	var names []string
	for _, p := range stuck {
		names = append(names, p.Name)
	}
	if d := cmp.Diff([]string{"j-worker-1", "j-worker-2"}, names); d != "" {
		t.Errorf("stuck pods (-want +got):\n%s", d)
	}
	if next != 10*time.Second {
		t.Errorf("next = %v, want 10s (j-worker-3's grace period ends 10s later)", next)
	}
	if stuck, next := stuckPods([]*corev1.Pod{live}, t0); len(stuck) != 0 || next != 0 {
		t.Errorf("a pod not deleted: stuck %d, next %v; want none", len(stuck), next)
	}
}
