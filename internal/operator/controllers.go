// Package controllers wires the job engine to the frameworks enabled in the
// operator Configuration.
package operator

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/controllers/kueue"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/internal/kube/eventrecorder"
	"github.com/seed-d8a409e9/training-operator/internal/kube/metacreate"
	"github.com/seed-d8a409e9/training-operator/kinds"
)

// enabledKind is a kind the configuration enables, with its adapter.
type enabledKind struct {
	kinds.Kind
	fw engine.Adapter
}

// adapters are the kinds' adapters, each built once at startup for the
// cache, the controllers and the job gauges.
type adapters struct {
	// enabled are the kinds cfg enables, in its order.
	enabled []enabledKind
	// every is the adapter of every kind of the table that could be built:
	// the cache trims their objects too (a disabled kind's are never read).
	every []engine.Adapter
}

// buildAdapters builds the adapter of every kind of all once; an enabled
// scheme that the table does not know, or whose adapter cannot be built, is
// an error, as in the webhooks.
func buildAdapters(cfg *configv1alpha1.Configuration, all []kinds.Kind) (adapters, error) {
	var out adapters
	built := map[string]engine.Adapter{}
	failed := map[string]error{}
	for _, k := range all {
		fw, err := k.NewFramework(cfg)
		if err != nil {
			failed[k.Info.Kind] = err
			continue
		}
		built[k.Info.Kind] = fw
		out.every = append(out.every, fw)
	}
	for _, name := range cfg.EnabledSchemes {
		k, err := lookup(all, name)
		if err != nil {
			return adapters{}, err
		}
		if err := failed[k.Info.Kind]; err != nil {
			return adapters{}, fmt.Errorf("%s: %w", name, err)
		}
		out.enabled = append(out.enabled, enabledKind{Kind: k, fw: built[k.Info.Kind]})
	}
	return out, nil
}

// lookup returns the kind of all named name (case-insensitively); a name
// this build does not know is an error, as in the webhooks.
func lookup(all []kinds.Kind, name string) (kinds.Kind, error) {
	for _, k := range all {
		if strings.EqualFold(k.Info.Kind, name) {
			return k, nil
		}
	}
	return kinds.Kind{}, fmt.Errorf("scheme %s is not supported yet", strings.ToLower(name))
}

// setupControllers registers with mgr the job controller of every enabled
// kind and, with kueueSettings (--kueue-integration=operator; nil
// otherwise), the operator's Kueue integration of those kinds. memory is
// the per-job memory the engines and the gang manager share.
func setupControllers(mgr ctrl.Manager, cfg *configv1alpha1.Configuration, ad adapters, memory *engine.JobMemory, kueueSettings *kueue.Settings) error {
	if err := engine.SetupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("setting up field indexes: %w", err)
	}
	log := ctrl.Log.WithName("setup")
	// core/v1 Events, as v1 recorded them (the events.k8s.io recorder would
	// merge every "Created pod: <name>" of a job into one series).
	events, err := eventrecorder.ForConfig(mgr.GetConfig(), mgr.GetHTTPClient(), mgr.GetScheme(),
		ctrl.Log.WithName("events"), eventrecorder.Options{})
	if err != nil {
		return fmt.Errorf("event recorder: %w", err)
	}
	if err := mgr.Add(events); err != nil {
		return fmt.Errorf("event recorder: %w", err)
	}
	// Gang scheduling is chosen per job, so the selector is always wired; a
	// job that selects no gang scheduler (and no default is set) gets none.
	recorders := map[string]engine.EventRecorder{}
	// Pods and Services are created with metadata-only replies: the engine
	// keeps only their names, and the API server encoded, and the operator
	// decoded, every whole pod for nothing.
	children, err := metacreate.New(mgr.GetClient(), mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("child client: %w", err)
	}
	gangs, err := gang.NewForManager(mgr, cfg.GangScheduling, func(name string) engine.EventRecorder { return recorders[name] }, memory)
	if err != nil {
		return fmt.Errorf("gang scheduling: %w", err)
	}
	// One handler per child informer for every kind's controllers.
	childEvents := engine.NewChildEvents(mgr.GetCache())
	var queued []func() kubeflowv1.Job
	for _, k := range ad.enabled {
		name, fw := k.Info.Kind, k.fw
		controllerName := k.Info.ControllerName
		rec := events.Recorder(controllerName)
		recorders[controllerName] = rec
		r := fw.NewReconciler(children, mgr.GetAPIReader(), rec,
			engine.Options{
				MaxConcurrentReconciles: config.Concurrency(cfg, name),
				NoPodTracking:           !ptr.Deref(cfg.Controller.PodTracking, true),
				Gang:                    gangs.Selector(),
				Memory:                  memory,
				Children:                childEvents,
				OnController: func(c controller.Controller) error {
					gangs.Register(controllerName, fw.NewJob(), c)
					return nil
				},
			})
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("%s controller: %w", name, err)
		}
		log.Info("controller registered", "scheme", name, "concurrency", config.Concurrency(cfg, name))
		queued = append(queued, fw.NewJob)
	}
	if kueueSettings != nil {
		if err := kueue.Setup(mgr, queued, kueueSettings, events.Recorder(kueueEventSource)); err != nil {
			return fmt.Errorf("the Kueue integration: %w", err)
		}
	}
	return nil
}

// kueueEventSource is the source of the Events the Kueue integration
// records on jobs (CreatedWorkload, Started, Stopped, ...).
const kueueEventSource = "training-operator-kueue"

// cacheOptions are the manager's informer cache options (engine.CacheOptions):
// what the engine reads of the enabled kinds, and cfg's namespace if it
// restricts the operator to one.
func cacheOptions(cfg *configv1alpha1.Configuration, ad adapters) cache.Options {
	enabled := make([]engine.Adapter, 0, len(ad.enabled))
	for _, k := range ad.enabled {
		enabled = append(enabled, k.fw)
	}
	return engine.CacheOptions(cfg.Namespace, enabled, ad.every)
}
