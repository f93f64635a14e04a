package paddlepaddle

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Autoscaling implements engine.Autoscaled: v1 ignored Paddle's elastic
// policy; here it gets the same HPA over Worker replicas as PyTorch.
func (*Framework) Autoscaling(obj client.Object) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	ep := job(obj).Spec.ElasticPolicy
	if ep == nil || len(ep.Metrics) == 0 || ep.MaxReplicas == nil {
		return nil, 0, nil, false
	}
	return ep.MinReplicas, *ep.MaxReplicas, ep.Metrics, true
}
