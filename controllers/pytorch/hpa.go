package pytorch

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Autoscaling implements engine.Autoscaled: elastic jobs with metrics get an
// HPA over their Worker replicas.
func (*Framework) Autoscaling(obj client.Object) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	ep := job(obj).Spec.ElasticPolicy
	if ep == nil || len(ep.Metrics) == 0 || ep.MaxReplicas == nil {
		return nil, 0, nil, false
	}
	return ep.MinReplicas, *ep.MaxReplicas, ep.Metrics, true
}
