// Package controllers wires the job engine to the frameworks enabled in the
// operator Configuration.
package controllers

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/internal/eventrecorder"
	"github.com/seed-d8a409e9/training-operator/internal/metacreate"
)

// Kind is what the controllers need of one job kind: its scheme name and
// how to build its adapter. The operator's table of kinds (package kinds)
// holds one per kind and passes them to Setup and CacheOptions.
type Kind struct {
	// Name is the scheme name (the kind, e.g. PyTorchJob), as in enabledSchemes.
	Name string
	// NewFramework builds the kind's adapter from the configuration.
	NewFramework func(cfg *configv1alpha1.Configuration) (engine.Framework, error)
}

// lookup returns the kind of all named name (case-insensitively); a name
// this build does not know is an error, as in the webhooks.
func lookup(all []Kind, name string) (Kind, error) {
	for _, k := range all {
		if strings.EqualFold(k.Name, name) {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("scheme %s is not supported yet", strings.ToLower(name))
}

// Setup registers with mgr the job controller of every kind of all that cfg
// enables. It is called once by main before the manager starts.
func Setup(mgr ctrl.Manager, cfg *configv1alpha1.Configuration, all []Kind) error {
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
	for _, name := range cfg.EnabledSchemes {
		k, err := lookup(all, name)
		if err != nil {
			return err
		}
		fw, err := k.NewFramework(cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rec := events.Recorder(fw.ControllerName())
		recorders[fw.ControllerName()] = rec
		r := engine.NewReconciler(fw, children, mgr.GetAPIReader(), rec,
			engine.Options{
				MaxConcurrentReconciles: config.Concurrency(cfg, name),
				Gang:                    gangs.Selector(),
				Memory:                  gangs.Memory(),
				OnController: func(c controller.Controller) error {
					gangs.Register(fw.ControllerName(), fw.NewJob(), c)
					return nil
				},
			})
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("%s controller: %w", name, err)
		}
		log.Info("controller registered", "scheme", name, "concurrency", config.Concurrency(cfg, name))
	}
	return nil
}

// cacheByObject keeps only our children in the informer caches: pods,
// Services, HPAs and the adapters' extra children (engine.ExtraChildren,
// e.g. MPI's ConfigMaps and launcher RBAC) that carry the operator-name
// label; pods and Services are trimmed to what the engine reads
// (cachetrim.go), and Services are cached as metadata only. Every adapter's
// extra types are listed, enabled or not, so that a disabled kind's types
// are not cached unfiltered either.
func cacheByObject(cfg *configv1alpha1.Configuration, all []Kind) (map[client.Object]cache.ByObject, error) {
	req, err := labels.NewRequirement(kubeflowv1.OperatorNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // constant input
	}
	sel := labels.NewSelector().Add(*req)
	out := map[client.Object]cache.ByObject{
		&corev1.Pod{}:                            {Label: sel, Transform: trimPod},
		engine.NewServiceMeta():                  {Label: sel, Transform: trimService},
		&autoscalingv2.HorizontalPodAutoscaler{}: {Label: sel},
	}
	seen := map[reflect.Type]bool{}
	for obj := range out {
		seen[reflect.TypeOf(obj)] = true
	}
	for _, k := range all {
		fw, err := k.NewFramework(cfg)
		if err != nil {
			continue // reported by Setup and defaultTransform if the kind is enabled
		}
		ec, ok := fw.(engine.ExtraChildren)
		if !ok {
			continue
		}
		for _, t := range ec.ExtraTypes() {
			if !seen[reflect.TypeOf(t.Object)] {
				seen[reflect.TypeOf(t.Object)] = true
				out[t.Object] = cache.ByObject{Label: sel}
			}
		}
	}
	return out, nil
}

// defaultTransform strips managedFields from every cached object, and trims
// finished jobs of the kinds enabled in cfg (trimFinishedJob). Jobs are not
// listed in ByObject: that would make the manager resolve their REST
// mapping when it is built, so an operator started just before its CRDs are
// served would fail instead of waiting for them.
func defaultTransform(cfg *configv1alpha1.Configuration, all []Kind) (toolscache.TransformFunc, error) {
	strip := cache.TransformStripManagedFields()
	jobs := map[reflect.Type]toolscache.TransformFunc{}
	for _, name := range cfg.EnabledSchemes {
		k, err := lookup(all, name)
		if err != nil {
			return nil, err
		}
		fw, err := k.NewFramework(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		jobs[reflect.TypeOf(fw.NewJob())] = trimFinishedJob(fw)
	}
	return func(obj any) (any, error) {
		if trim, ok := jobs[reflect.TypeOf(obj)]; ok {
			return trim(obj)
		}
		return strip(obj)
	}, nil
}

// CacheOptions are the manager's informer cache options for cfg and the
// kinds all: our children only, trimmed, no managedFields on anything,
// finished jobs without pod templates, and cfg's namespace if it restricts
// the operator to one.
func CacheOptions(cfg *configv1alpha1.Configuration, all []Kind) (cache.Options, error) {
	transform, err := defaultTransform(cfg, all)
	if err != nil {
		return cache.Options{}, err
	}
	byObject, err := cacheByObject(cfg, all)
	if err != nil {
		return cache.Options{}, err
	}
	opts := cache.Options{ByObject: byObject, DefaultTransform: transform}
	if cfg.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{cfg.Namespace: {}}
	}
	return opts, nil
}
