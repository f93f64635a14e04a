package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// cond is a terse condition for tables: type, status, reason.
func cond(t kubeflowv1.JobConditionType, s corev1.ConditionStatus, reason string) kubeflowv1.JobCondition {
	return kubeflowv1.JobCondition{Type: t, Status: s, Reason: reason}
}

func TestSetConditionSequences(t *testing.T) {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	cases := map[string]struct {
		steps []kubeflowv1.JobCondition
		want  []kubeflowv1.JobCondition
	}{
		"success": {
			steps: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
				cond(kubeflowv1.JobSucceeded, T, "PyTorchJobSucceeded"),
			},
			want: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRunning, F, "PyTorchJobRunning"),
				cond(kubeflowv1.JobSucceeded, T, "PyTorchJobSucceeded"),
			},
		},
		"restarting replaces running and back": {
			steps: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
				cond(kubeflowv1.JobRestarting, T, "PyTorchJobRestarting"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
			},
			want: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
			},
		},
		"suspend while running then resume": {
			steps: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
				cond(kubeflowv1.JobRunning, F, "PyTorchJobSuspended"),
				cond(kubeflowv1.JobSuspended, T, "PyTorchJobSuspended"),
				cond(kubeflowv1.JobSuspended, F, "PyTorchJobResumed"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
			},
			want: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobSuspended, F, "PyTorchJobResumed"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
			},
		},
		"failing while restarting leaves Restarting False": {
			steps: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
				cond(kubeflowv1.JobRestarting, T, "PyTorchJobRestarting"),
				cond(kubeflowv1.JobFailed, T, "PyTorchJobFailed"),
			},
			want: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobRestarting, F, "PyTorchJobRestarting"),
				cond(kubeflowv1.JobFailed, T, "PyTorchJobFailed"),
			},
		},
		"failed is sticky": {
			steps: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobFailed, T, "PyTorchJobFailed"),
				cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning"),
				cond(kubeflowv1.JobSucceeded, T, "PyTorchJobSucceeded"),
			},
			want: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated"),
				cond(kubeflowv1.JobFailed, T, "PyTorchJobFailed"),
			},
		},
		"succeeded is sticky": {
			steps: []kubeflowv1.JobCondition{
				cond(kubeflowv1.JobSucceeded, T, "PyTorchJobSucceeded"),
				cond(kubeflowv1.JobFailed, T, "PyTorchJobFailed"),
			},
			want: []kubeflowv1.JobCondition{cond(kubeflowv1.JobSucceeded, T, "PyTorchJobSucceeded")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st kubeflowv1.JobStatus
			for _, c := range tc.steps {
				setCondition(&st, c)
			}
			if diff := cmp.Diff(tc.want, st.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetConditionKeepsTransitionTimeAndMessage(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	var st kubeflowv1.JobStatus
	setCondition(&st, newCondition(kubeflowv1.JobRunning, corev1.ConditionTrue, "A", "first", t0))
	if setCondition(&st, newCondition(kubeflowv1.JobRunning, corev1.ConditionTrue, "A", "second", t1)) {
		t.Fatal("same type, status and reason must be a no-op")
	}
	if st.Conditions[0].Message != "first" {
		t.Errorf("message changed to %q", st.Conditions[0].Message)
	}
	setCondition(&st, newCondition(kubeflowv1.JobRunning, corev1.ConditionTrue, "B", "third", t1))
	if got := st.Conditions[0].LastTransitionTime; !got.Equal(&t0) {
		t.Errorf("lastTransitionTime = %v, want %v (status unchanged)", got, t0)
	}
}
