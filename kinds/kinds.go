// Package kinds is the one table of the job kinds the operator runs. Each
// kind is registered here once, with its API type, its engine adapter and
// its admission webhooks; main and the test harnesses hand the table to the
// controllers (All) and its webhooks to the webhooks package (Webhooks),
// which hold no list of kinds of their own. Kind is the one type of a job
// kind: the controllers take it whole, the webhooks take its Webhooks (the
// webhooks package must not depend on the adapters).
//
// The build reads the table too: hack/crdpatch takes each CRD's default
// container name from it, and hack/chart (make chart-sync) renders the
// chart's and the kustomize overlays' lists of kinds, and the Configuration
// API's scheme names, from it.
//
// Adding a kind: its API type in apis/kubeflow.org/v1 (with the Job
// methods), an adapter package under controllers/ (with the RBAC markers
// of its resources), its validation and webhook markers in webhooks/, and
// one register line in All.
package kinds

import (
	"fmt"
	"os"
	"reflect"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/jax"
	"github.com/seed-d8a409e9/training-operator/controllers/mpi"
	"github.com/seed-d8a409e9/training-operator/controllers/paddlepaddle"
	"github.com/seed-d8a409e9/training-operator/controllers/pytorch"
	"github.com/seed-d8a409e9/training-operator/controllers/tensorflow"
	"github.com/seed-d8a409e9/training-operator/controllers/xgboost"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

// All returns the registration of every job kind, in the order their
// controllers and webhooks are set up (make chart-sync writes the
// Configuration API's configv1alpha1.AllSchemes from it).
func All() []Kind {
	return []Kind{
		register[kubeflowv1.PyTorchJob](newPyTorch, webhooks.ValidatePyTorchJob),
		register[kubeflowv1.TFJob](newTensorFlow, webhooks.ValidateTFJob),
		register[kubeflowv1.MPIJob](newMPI, webhooks.ValidateMPIJob),
		register[kubeflowv1.XGBoostJob](plain(xgboost.New), webhooks.ValidateXGBoostJob),
		register[kubeflowv1.PaddleJob](plain(paddlepaddle.New), webhooks.ValidatePaddleJob),
		register[kubeflowv1.JAXJob](plain(jax.New), webhooks.ValidateJAXJob),
	}
}

// Kind is the registration of one job kind.
type Kind struct {
	// Info is the kind's constants, from its API type; Info.Kind is its
	// scheme name (enabledSchemes, controller.concurrency).
	Info kubeflowv1.KindInfo
	// NewFramework builds the kind's engine adapter from the configuration.
	NewFramework func(cfg *configv1alpha1.Configuration) (engine.Adapter, error)
	// Webhooks are the kind's defaulting and validating webhooks.
	Webhooks webhooks.Hooks

	newJob func() kubeflowv1.Job
	// framework builds the adapter as its package makes it, for the tests
	// to look at its optional capabilities.
	framework func(cfg *configv1alpha1.Configuration) (any, error)
}

// register is the entry of the job kind J: newFramework builds its adapter
// and validate judges its defaulted objects in the validating webhook.
func register[J any, P interface {
	*J
	engine.Job[P]
}](newFramework func(*configv1alpha1.Configuration) (engine.Framework[P], error), validate func(old, new P) (field.ErrorList, admission.Warnings)) Kind {
	return Kind{
		Info: P(new(J)).KindInfo(),
		NewFramework: func(cfg *configv1alpha1.Configuration) (engine.Adapter, error) {
			fw, err := newFramework(cfg)
			if err != nil {
				return nil, err
			}
			return engine.Adapt(fw), nil
		},
		Webhooks:  webhooks.For(validate),
		newJob:    func() kubeflowv1.Job { return P(new(J)) },
		framework: func(cfg *configv1alpha1.Configuration) (any, error) { return newFramework(cfg) },
	}
}

// Package returns the import path of the kind's adapter package: its RBAC
// markers are the rules only this kind needs, which the chart grants only
// when the kind is enabled (hack/chart).
func (k Kind) Package() (string, error) {
	fw, err := k.framework(&configv1alpha1.Configuration{})
	if err != nil {
		return "", err
	}
	t := reflect.TypeOf(fw)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath(), nil
}

// Names returns the scheme names of every kind, in the order of All.
func Names() []string {
	var out []string
	for _, k := range All() {
		out = append(out, k.Info.Kind)
	}
	return out
}

// Webhooks returns the webhooks of every kind, for webhooks.Setup and
// webhooks.WebhookConfigurations.
func Webhooks() []webhooks.Hooks {
	var out []webhooks.Hooks
	for _, k := range All() {
		out = append(out, k.Webhooks)
	}
	return out
}

// plain adapts an adapter constructor that reads nothing from the
// configuration.
func plain[O any, J engine.Job[J], F engine.Framework[J]](newFramework func(O) F) func(*configv1alpha1.Configuration) (engine.Framework[J], error) {
	return func(*configv1alpha1.Configuration) (engine.Framework[J], error) {
		var opts O
		return newFramework(opts), nil
	}
}

func newPyTorch(cfg *configv1alpha1.Configuration) (engine.Framework[*kubeflowv1.PyTorchJob], error) {
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

func newTensorFlow(*configv1alpha1.Configuration) (engine.Framework[*kubeflowv1.TFJob], error) {
	// v1 reads the cluster domain of TF_CONFIG addresses from the operator's environment.
	return tensorflow.New(tensorflow.Options{ClusterDomain: os.Getenv(tensorflow.EnvCustomClusterDomain)}), nil
}

func newMPI(cfg *configv1alpha1.Configuration) (engine.Framework[*kubeflowv1.MPIJob], error) {
	return mpi.New(mpi.Options{KubectlDeliveryImage: cfg.MPI.KubectlDeliveryImage}), nil
}
