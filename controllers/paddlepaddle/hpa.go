package paddlepaddle

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

var _ engine.Autoscaled = (*Framework)(nil)

// Autoscaling implements engine.Autoscaled: v1 ignored Paddle's elastic
// policy; here it gets the same HPA over Worker replicas as PyTorch.
func (f *Framework) Autoscaling(obj client.Object) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	spec := &f.Job(obj).Spec
	// The effective bounds: unset ones follow Worker.replicas.
	minR, maxR, ok := spec.ElasticReplicas()
	if !ok || len(spec.ElasticPolicy.Metrics) == 0 {
		return nil, 0, nil, false
	}
	return &minR, maxR, spec.ElasticPolicy.Metrics, true
}
