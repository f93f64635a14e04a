package paddlepaddle

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

var _ engine.Autoscaled[*kubeflowv1.PaddleJob] = (*Framework)(nil)

// Autoscaling implements engine.Autoscaled (see PaddleJobSpec.Autoscaling).
func (*Framework) Autoscaling(j *kubeflowv1.PaddleJob) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	return j.Spec.Autoscaling()
}
