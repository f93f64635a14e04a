/*
Copyright 2026 The training-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package kueue

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/metrics"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Setup runs jobframework's reconciler in mgr for each kind newJobs
// makes: it creates each queued job's Workload, suspends the job until
// Kueue admits it, starts it with the admission's pod-set information,
// stops it on eviction, reports PodsReady and reclaimable pods, and
// finishes the Workload with the job. A kind that Kueue's configuration
// also has Kueue's own integration manage is left to Kueue (one Workload
// per job, one starter), and its queued jobs are told so (conflict.go).
func Setup(mgr ctrl.Manager, newJobs []func() kubeflowv1.Job, settings *Settings, rec record.EventRecorder) error {
	log := ctrl.Log.WithName("kueue")
	c := finishedFromAPI{Client: mgr.GetClient(), api: mgr.GetAPIReader()}
	for _, newJob := range newJobs {
		kind := newJob().KindInfo().Kind
		if settings.BuiltinManages(kind) {
			log.Error(nil, "Kueue's configuration has Kueue's own integration manage this kind too (integrations.frameworks); "+
				"its queued jobs are left to it and marked with a KueueIntegrationConflict condition",
				"kind", kind, "framework", builtinFramework(kind))
			if err := setupConflicts(mgr, newJob, rec); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
			continue
		}
		if settings.configured() && !settings.ListedExternal(kind) {
			log.Info("Kueue's configuration does not list this kind in integrations.externalFrameworks; add it",
				"kind", kind, "externalFramework", ExternalFramework(kind))
		}
		gvk := kubeflowv1.GroupVersion.WithKind(kind)
		if err := jobframework.SetupWorkloadOwnerIndex(context.Background(), mgr.GetFieldIndexer(), gvk); err != nil {
			return fmt.Errorf("%s: Workload owner index: %w", kind, err)
		}
		factory := jobframework.NewGenericReconcilerFactory(func() jobframework.GenericJob { return NewJob(newJob()) })
		r, err := factory(context.Background(), c, mgr.GetFieldIndexer(), rec, append(settings.options(), jobframework.WithCache(noQueueCache(c)))...)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("%s: Kueue integration controller: %w", kind, err)
		}
		log.Info("Kueue integration registered", "kind", kind, "externalFramework", ExternalFramework(kind))
	}
	return nil
}

// noQueueCache stands in for Kueue's scheduler cache, which only Kueue's
// process fills: jobframework asks it only whether to report LocalQueue
// metrics, which are Kueue's to report.
func noQueueCache(c client.Client) *schdcache.Cache {
	return schdcache.New(c, schdcache.WithLocalQueueMetrics(&metrics.LocalQueueMetricsConfig{Enabled: false}))
}

// finishedFromAPI reads a finished job from the API server rather than
// the informer cache: the cache keeps finished jobs without their pod
// templates (engine.CacheOptions), and jobframework compares the job's
// pod sets with its Workload's, then deletes a Workload that does not
// match. Only passes over finished jobs pay it: a few reads per job.
type finishedFromAPI struct {
	client.Client
	api client.Reader
}

func (c finishedFromAPI) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if job, ok := obj.(kubeflowv1.Job); ok {
		if _, _, finished := NewJob(job).Finished(ctx); finished {
			return c.api.Get(ctx, key, obj)
		}
	}
	return nil
}
