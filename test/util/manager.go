package util

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers"
	"github.com/seed-d8a409e9/training-operator/kinds"
)

// Scheme knows the built-in types and kubeflow.org/v1.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := kubeflowv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// DefaultConfiguration is the operator Configuration with every default set.
func DefaultConfiguration() *configv1alpha1.Configuration {
	cfg := &configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults_Configuration(cfg)
	return cfg
}

// Operator is an in-process operator for integration tests.
type Operator struct {
	// Cache is the operator's informer cache. It fails a read of a type the
	// operator does not watch, rather than starting an informer for it, so
	// that every suite run on this operator also checks that the engine
	// reads only what it caches (and caches only what it declares).
	Cache  cache.Cache
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// StartOperator runs the job controllers against the cluster until Stop.
func StartOperator(restCfg *rest.Config, cfg *configv1alpha1.Configuration) (*Operator, error) {
	cacheOpts, err := controllers.CacheOptions(cfg, kinds.Controllers())
	if err != nil {
		return nil, err
	}
	cacheOpts.ReaderFailOnMissingInformer = true
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cacheOpts,
		Client:                 client.Options{},
		Controller:             config.Controller{SkipNameValidation: ptrTrue()},
	})
	if err != nil {
		return nil, err
	}
	if err := controllers.Setup(mgr, cfg, kinds.Controllers()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &Operator{Cache: mgr.GetCache(), cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, <-op.done
	}
	return op, nil
}

// Stop stops the operator and waits for it.
func (o *Operator) Stop() error {
	var err error
	o.once.Do(func() {
		o.cancel()
		err = <-o.done
	})
	return err
}

func ptrTrue() *bool { t := true; return &t }

// KindOf is the kind of a typed object, from the test scheme (typed objects
// usually have an empty TypeMeta).
func KindOf(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, Scheme())
	if err != nil {
		return ""
	}
	return gvk.Kind
}
