package util

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/internal/operator"
)

// Scheme knows every type the operator does (built-in, kubeflow.org/v1,
// the Configuration and the gang-scheduling PodGroups).
func Scheme() *runtime.Scheme { return operator.NewScheme() }

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

// newOperator wires the operator as StartOperator runs it: main's wiring
// with the controllers alone, no servers and no leader election, since
// several operators may share a test process.
func newOperator(restCfg *rest.Config, cfg *configv1alpha1.Configuration) (*operator.Operator, error) {
	cfg = cfg.DeepCopy()
	cfg.Metrics.BindAddress, cfg.Metrics.Secure = "0", false
	cfg.Health.ProbeBindAddress = "0"
	cfg.LeaderElection.LeaderElect = false
	return operator.New(restCfg, cfg, operator.Overrides{NoWebhooks: true, SkipNameValidation: true, StrictCache: true})
}

// StartOperator runs the job controllers against the cluster until Stop.
func StartOperator(restCfg *rest.Config, cfg *configv1alpha1.Configuration) (*Operator, error) {
	o, err := newOperator(restCfg, cfg)
	if err != nil {
		return nil, err
	}
	mgr := o.Manager
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

// KindOf is the kind of a typed object, from the test scheme (typed objects
// usually have an empty TypeMeta).
func KindOf(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, Scheme())
	if err != nil {
		return ""
	}
	return gvk.Kind
}
