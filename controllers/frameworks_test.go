package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// v1 announced a job's TTL deletion with the pod reasons for PyTorch, Paddle
// and JAX and with the job reasons for the others (B4 §4.10).
func TestJobDeleteEventReasons(t *testing.T) {
	want := map[string][2]string{
		configv1alpha1.SchemePyTorchJob: {"SuccessfulDeletePod", "FailedDeletePod"},
		configv1alpha1.SchemePaddleJob:  {"SuccessfulDeletePod", "FailedDeletePod"},
		configv1alpha1.SchemeJAXJob:     {"SuccessfulDeletePod", "FailedDeletePod"},
		configv1alpha1.SchemeTFJob:      {"SuccessfulDeleteJob", "FailedDeleteJob"},
		configv1alpha1.SchemeXGBoostJob: {"SuccessfulDeleteJob", "FailedDeleteJob"},
		configv1alpha1.SchemeMPIJob:     {"SuccessfulDeleteJob", "FailedDeleteJob"},
	}
	got := map[string][2]string{}
	for scheme, factory := range frameworks {
		fw, err := factory(&configv1alpha1.Configuration{})
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		// The engine's default when a framework does not say otherwise.
		reasons := [2]string{"SuccessfulDeleteJob", "FailedDeleteJob"}
		if d, ok := fw.(engine.JobDeleteEvents); ok {
			reasons[0], reasons[1] = d.JobDeleteReasons()
		}
		got[scheme] = reasons
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TTL delete event reasons (-want +got):\n%s", diff)
	}
}
