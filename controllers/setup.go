// Package controllers wires the job engine to the frameworks enabled in the
// operator Configuration.
package controllers

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

// Setup registers with mgr the job controller of every kind of all that cfg
// enables and, with kueueSettings (--kueue-integration=operator; nil
// otherwise), the operator's Kueue integration of those kinds. It is called
// once by main before the manager starts.
func Setup(mgr ctrl.Manager, cfg *configv1alpha1.Configuration, all []kinds.Kind, kueueSettings *kueue.Settings) error {
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
	gangs, err := gang.NewForManager(mgr, cfg.GangScheduling, func(name string) engine.EventRecorder { return recorders[name] })
	if err != nil {
		return fmt.Errorf("gang scheduling: %w", err)
	}
	// One handler per child informer for every kind's controllers.
	childEvents := engine.NewChildEvents(mgr.GetCache())
	var queued []func() kubeflowv1.Job
	for _, name := range cfg.EnabledSchemes {
		k, err := lookup(all, name)
		if err != nil {
			return err
		}
		fw, err := k.NewFramework(cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		controllerName := k.Info.ControllerName
		rec := events.Recorder(controllerName)
		recorders[controllerName] = rec
		r := fw.NewReconciler(children, mgr.GetAPIReader(), rec,
			engine.Options{
				MaxConcurrentReconciles: config.Concurrency(cfg, name),
				NoPodTracking:           !ptr.Deref(cfg.Controller.PodTracking, true),
				Gang:                    gangs.Selector(),
				Memory:                  gangs.Memory(),
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

// CacheOptions are the manager's informer cache options for cfg and the
// kinds all (engine.CacheOptions): what the engine reads of the kinds cfg
// enables, and cfg's namespace if it restricts the operator to one.
func CacheOptions(cfg *configv1alpha1.Configuration, all []kinds.Kind) (cache.Options, error) {
	var enabled, every []engine.Adapter
	for _, name := range cfg.EnabledSchemes {
		k, err := lookup(all, name)
		if err != nil {
			return cache.Options{}, err
		}
		fw, err := k.NewFramework(cfg)
		if err != nil {
			return cache.Options{}, fmt.Errorf("%s: %w", name, err)
		}
		enabled = append(enabled, fw)
	}
	for _, k := range all {
		fw, err := k.NewFramework(cfg)
		if err != nil {
			continue // reported above if the kind is enabled
		}
		every = append(every, fw)
	}
	return engine.CacheOptions(cfg.Namespace, enabled, every), nil
}
