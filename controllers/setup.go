// Package controllers wires the job engine to the frameworks enabled in the
// operator Configuration.
package controllers

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/controllers/jax"
	"github.com/seed-d8a409e9/training-operator/controllers/mpi"
	"github.com/seed-d8a409e9/training-operator/controllers/paddlepaddle"
	"github.com/seed-d8a409e9/training-operator/controllers/pytorch"
	"github.com/seed-d8a409e9/training-operator/controllers/tensorflow"
	"github.com/seed-d8a409e9/training-operator/controllers/xgboost"
	"github.com/seed-d8a409e9/training-operator/internal/config"
)

// frameworkFactory builds one framework adapter from the configuration.
type frameworkFactory func(cfg *configv1alpha1.Configuration) (engine.Framework, error)

// frameworks maps --enable-scheme names to their adapters.
var frameworks = map[string]frameworkFactory{
	configv1alpha1.SchemePyTorchJob: newPyTorch,
	configv1alpha1.SchemeTFJob: func(*configv1alpha1.Configuration) (engine.Framework, error) {
		// v1 reads the cluster domain of TF_CONFIG addresses from the operator's environment.
		return tensorflow.New(tensorflow.Options{ClusterDomain: os.Getenv(tensorflow.EnvCustomClusterDomain)}), nil
	},
	configv1alpha1.SchemeXGBoostJob: func(*configv1alpha1.Configuration) (engine.Framework, error) {
		return xgboost.New(xgboost.Options{}), nil
	},
	configv1alpha1.SchemePaddleJob: func(*configv1alpha1.Configuration) (engine.Framework, error) {
		return paddlepaddle.New(paddlepaddle.Options{}), nil
	},
	configv1alpha1.SchemeJAXJob: func(*configv1alpha1.Configuration) (engine.Framework, error) {
		return jax.New(jax.Options{}), nil
	},
	configv1alpha1.SchemeMPIJob: func(cfg *configv1alpha1.Configuration) (engine.Framework, error) {
		return mpi.New(mpi.Options{KubectlDeliveryImage: cfg.MPI.KubectlDeliveryImage}), nil
	},
}

func newPyTorch(cfg *configv1alpha1.Configuration) (engine.Framework, error) {
	pic := cfg.PyTorchInitContainer
	opts := pytorch.Options{InitContainerImage: pic.Image}
	if pic.MaxTries != nil {
		opts.InitContainerMaxTries = int(*pic.MaxTries)
	}
	if pic.TemplateFile != "" {
		// v1 semantics: the template file is optional; use it only if present.
		if b, err := os.ReadFile(pic.TemplateFile); err == nil {
			opts.InitContainerTemplate = string(b)
		}
	}
	fw, err := pytorch.New(opts)
	if err != nil {
		// v1 fell back to its built-in template; a broken file stops the
		// operator here instead, naming the file.
		return nil, fmt.Errorf("init container template %s: %w", pic.TemplateFile, err)
	}
	return fw, nil
}

// Setup registers the job controller of every scheme enabled in cfg with mgr.
// It is called once by main before the manager starts.
func Setup(mgr ctrl.Manager, cfg *configv1alpha1.Configuration) error {
	if err := engine.SetupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("setting up field indexes: %w", err)
	}
	log := ctrl.Log.WithName("setup")
	// Gang scheduling is chosen per job, so the selector is always wired; a
	// job that selects no gang scheduler (and no default is set) gets none.
	recorders := map[string]engine.EventRecorder{}
	gangs, err := gang.NewForManager(mgr, cfg.GangScheduling, func(name string) engine.EventRecorder { return recorders[name] })
	if err != nil {
		return fmt.Errorf("gang scheduling: %w", err)
	}
	for _, name := range cfg.EnabledSchemes {
		factory, ok := frameworks[name]
		if !ok {
			// As in the webhooks: a kind this build does not know is an error.
			return fmt.Errorf("scheme %s is not supported yet", strings.ToLower(name))
		}
		fw, err := factory(cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rec := eventRecorder{mgr.GetEventRecorderFor(fw.ControllerName())} //nolint:staticcheck // see eventRecorder
		recorders[fw.ControllerName()] = rec
		r := engine.NewReconciler(fw, mgr.GetClient(), mgr.GetAPIReader(), rec,
			engine.Options{
				MaxConcurrentReconciles: config.Concurrency(cfg, name),
				Gang:                    gangs.Selector(),
				Inflight:                gangs.Inflight(),
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
// (cachetrim.go). Every adapter's extra types are listed, enabled or not,
// so that a disabled kind's types are not cached unfiltered either.
func cacheByObject(cfg *configv1alpha1.Configuration) (map[client.Object]cache.ByObject, error) {
	req, err := labels.NewRequirement(kubeflowv1.OperatorNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // constant input
	}
	sel := labels.NewSelector().Add(*req)
	out := map[client.Object]cache.ByObject{
		&corev1.Pod{}:                            {Label: sel, Transform: trimPod},
		&corev1.Service{}:                        {Label: sel, Transform: trimService},
		&autoscalingv2.HorizontalPodAutoscaler{}: {Label: sel},
	}
	seen := map[reflect.Type]bool{}
	for obj := range out {
		seen[reflect.TypeOf(obj)] = true
	}
	for _, name := range configv1alpha1.AllSchemes() {
		fw, err := frameworks[name](cfg)
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
func defaultTransform(cfg *configv1alpha1.Configuration) (toolscache.TransformFunc, error) {
	strip := cache.TransformStripManagedFields()
	jobs := map[reflect.Type]toolscache.TransformFunc{}
	for _, name := range cfg.EnabledSchemes {
		factory, ok := frameworks[name]
		if !ok {
			continue
		}
		fw, err := factory(cfg)
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

// CacheOptions are the manager's informer cache options for cfg: our
// children only, trimmed, no managedFields on anything, finished jobs
// without pod templates, and cfg's namespace if it restricts the operator
// to one.
func CacheOptions(cfg *configv1alpha1.Configuration) (cache.Options, error) {
	transform, err := defaultTransform(cfg)
	if err != nil {
		return cache.Options{}, err
	}
	byObject, err := cacheByObject(cfg)
	if err != nil {
		return cache.Options{}, err
	}
	opts := cache.Options{ByObject: byObject, DefaultTransform: transform}
	if cfg.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{cfg.Namespace: {}}
	}
	return opts, nil
}

// eventRecorder records core/v1 events, as v1 did. The events.k8s.io recorder
// merges events of one reason on one job into a single series, which would
// hide every "Created pod: <name>" but the first from kubectl describe.
type eventRecorder struct{ rec record.EventRecorder }

func (e eventRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	e.rec.Event(obj, eventType, reason, message)
}
