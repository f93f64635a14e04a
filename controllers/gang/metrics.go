package gang

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// v1's PodGroup counters (which v1 never exported), in controller-runtime's registry.
var (
	podGroupsCreated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "created_pod_groups_total",
		Help: "The number of created PodGroups",
	})
	podGroupsDeleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "deleted_pod_groups_total",
		Help: "The number of deleted PodGroups",
	})
)

func init() {
	// A clash with another collector of the same name only loses these counters.
	_ = metrics.Registry.Register(podGroupsCreated)
	_ = metrics.Registry.Register(podGroupsDeleted)
}
