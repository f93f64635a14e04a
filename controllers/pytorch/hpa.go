package pytorch

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

var _ engine.Autoscaled[*kubeflowv1.PyTorchJob] = (*Framework)(nil)

// Autoscaling implements engine.Autoscaled: elastic jobs with metrics get an
// HPA over their Worker replicas.
func (*Framework) Autoscaling(j *kubeflowv1.PyTorchJob) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	return j.Spec.Autoscaling()
}
