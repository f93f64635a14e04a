package engine

import (
	"reflect"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// CacheOptions are the manager's informer cache options for the engine: our
// children only, trimmed to what the engine reads, no managedFields on
// anything, finished jobs of the enabled kinds without pod templates, and
// only namespace if set. all are the adapters of every kind, enabled or not,
// so that a disabled kind's extra child types are not cached unfiltered
// either.
func CacheOptions(namespace string, enabled, all []Adapter) cache.Options {
	opts := cache.Options{ByObject: cacheByObject(all), DefaultTransform: defaultTransform(enabled)}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return opts
}

// cacheByObject keeps only our children in the informer caches: pods,
// Services, HPAs and the adapters' extra children (Adapter.ExtraTypes, e.g.
// MPI's ConfigMaps and launcher RBAC) that carry the operator-name label;
// pods and Services are trimmed to what the engine reads (cachetrim.go),
// and Services are cached as metadata only.
func cacheByObject(all []Adapter) map[client.Object]cache.ByObject {
	req, err := labels.NewRequirement(kubeflowv1.OperatorNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // constant input
	}
	sel := labels.NewSelector().Add(*req)
	out := map[client.Object]cache.ByObject{
		&corev1.Pod{}:                            {Label: sel, Transform: trimPod},
		NewServiceMeta():                         {Label: sel, Transform: trimService},
		&autoscalingv2.HorizontalPodAutoscaler{}: {Label: sel},
	}
	seen := map[reflect.Type]bool{}
	for obj := range out {
		seen[reflect.TypeOf(obj)] = true
	}
	for _, fw := range all {
		for _, t := range fw.ExtraTypes() {
			if !seen[reflect.TypeOf(t.Object)] {
				seen[reflect.TypeOf(t.Object)] = true
				out[t.Object] = cache.ByObject{Label: sel}
			}
		}
	}
	return out
}

// defaultTransform strips managedFields from every cached object, and trims
// finished jobs of the enabled kinds (trimFinishedJob). Jobs are not listed
// in ByObject: that would make the manager resolve their REST mapping when
// it is built, so an operator started just before its CRDs are served would
// fail instead of waiting for them.
func defaultTransform(enabled []Adapter) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	jobs := map[reflect.Type]toolscache.TransformFunc{}
	for _, fw := range enabled {
		jobs[reflect.TypeOf(fw.NewJob())] = trimFinishedJob
	}
	return func(obj any) (any, error) {
		if trim, ok := jobs[reflect.TypeOf(obj)]; ok {
			return trim(obj)
		}
		return strip(obj)
	}
}
