package pytorch

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

var _ engine.Autoscaled = (*Framework)(nil)

// Autoscaling implements engine.Autoscaled: elastic jobs with metrics get an
// HPA over their Worker replicas.
func (f *Framework) Autoscaling(obj client.Object) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	return f.Job(obj).Spec.Autoscaling()
}
