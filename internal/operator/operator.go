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

// Package operator wires the operator's manager: scheme, client settings,
// cache, health and ready checks, webhook certificates, webhooks and
// controllers. The binary and every in-process test harness build it here,
// so that tests exercise the wiring that ships.
package operator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/controllers/kueue"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/internal/observability"
	"github.com/seed-d8a409e9/training-operator/internal/serving/cert"
	"github.com/seed-d8a409e9/training-operator/internal/serving/metricsfilter"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

// NewScheme knows every type the operator reads or writes: the built-in
// types, kubeflow.org/v1, its own Configuration, the Volcano
// (scheduling.volcano.sh) and scheduler-plugins (scheduling.x-k8s.io)
// PodGroups, and Kueue's API (kueue.x-k8s.io: Workloads and the queues
// its integration reads).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kubeflowv1.AddToScheme(s))
	utilruntime.Must(configv1alpha1.AddToScheme(s))
	utilruntime.Must(gang.AddToScheme(s))
	utilruntime.Must(kueuev1beta2.AddToScheme(s))
	return s
}

// Overrides are what a test harness may change in the wiring; the zero
// value is the binary's. Everything a user can set belongs in the
// Configuration instead, so that harnesses set it the way users do.
type Overrides struct {
	// CertNamespace holds the certificate Secret; empty means the
	// operator's namespace ($MY_POD_NAMESPACE, default kubeflow). Tests
	// give each operator a namespace of its own.
	CertNamespace string
	// CertResyncPeriod is how often the certificates are checked; zero
	// means cert.DefaultResyncPeriod. Rotation tests shorten it.
	CertResyncPeriod time.Duration
	// CertLifetimes shorten the built-in CA's and serving certificate's
	// lifetimes, so that rotation tests see rotations in seconds.
	CertLifetimes cert.Lifetimes
	// NoWebhooks runs the controllers alone: no certificates, webhook
	// server or webhook ready check. For suites that exercise the
	// controllers on a cluster without the webhook configurations.
	NoWebhooks bool
	// NoControllers runs the webhooks (and certificates) alone, for suites
	// that exercise admission without the controllers acting on the jobs.
	NoControllers bool
	// SkipNameValidation lets several managers run in one process (each
	// registers controllers of the same names).
	SkipNameValidation bool
	// StrictCache fails a cached read of a type the operator does not
	// watch, instead of starting an informer for it, so that a suite
	// catches reads of types the controllers do not declare.
	StrictCache bool
}

// Operator is a wired manager, not started yet.
type Operator struct {
	Manager ctrl.Manager
	// Certs provides the webhook serving certificates (nil with
	// NoWebhooks).
	Certs *cert.Provider
	// WebhookReady is the "readyz" check: certificates in place and the
	// webhook server started (nil with NoWebhooks).
	WebhookReady healthz.Checker
}

// New wires the operator from a validated, defaulted configuration. It
// applies cfg.ClientConnection to a copy of restCfg; restCfg is not changed.
func New(restCfg *rest.Config, cfg *configv1alpha1.Configuration, o Overrides) (*Operator, error) {
	if o.NoWebhooks && cfg.Metrics.Secure {
		// Secure metrics serve the webhook serving certificate.
		return nil, errors.New("secure metrics need the webhook certificates")
	}
	restCfg = rest.CopyConfig(restCfg)
	config.ApplyClientConnection(restCfg, cfg.ClientConnection)
	// Kueue's own configuration, read first: it also sets Kueue's feature
	// gates in this process.
	var kueueSettings *kueue.Settings
	if cfg.Kueue.Integration == configv1alpha1.KueueIntegrationOperator {
		s, err := kueue.LoadSettings(cfg.Kueue.ConfigFile)
		if err != nil {
			return nil, err
		}
		kueueSettings = s
	}

	op := &Operator{}
	if !o.NoWebhooks {
		certs, err := newCertProvider(cfg, o)
		if err != nil {
			return nil, fmt.Errorf("setting up webhook certificates: %w", err)
		}
		op.Certs = certs
	}

	// Each kind's adapter, built once for the cache, the controllers and
	// the job gauges.
	ad, err := buildAdapters(cfg, kinds.All())
	if err != nil {
		return nil, err
	}
	// Bounds the metrics certificate watcher; cancelled when the manager stops.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	mgr, err := newManager(watchCtx, restCfg, cfg, cacheOptions(cfg, ad), op.Certs, o)
	if err != nil {
		stopWatch()
		return nil, err
	}
	op.Manager = mgr
	if err := mgr.Add(untilStopped(stopWatch)); err != nil {
		stopWatch()
		return nil, err
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("setting up the health check: %w", err)
	}
	if op.Certs != nil {
		if err := op.Certs.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("setting up webhook certificates: %w", err)
		}
		// Ready only once the serving certificates exist and the webhook
		// server has started, so that no admission call reaches a replica
		// that cannot answer it. Controllers start right away.
		op.WebhookReady = op.Certs.ReadyzCheck(mgr.GetWebhookServer())
		if err := mgr.AddReadyzCheck("readyz", op.WebhookReady); err != nil {
			return nil, fmt.Errorf("setting up the ready check: %w", err)
		}
	}
	// And once the informers the controllers started have listed the
	// cluster: a job created right after readiness then gets its pods at
	// once instead of after the initial lists (seconds with thousands of
	// jobs). Replicas that are not the leader start no controllers.
	if err := mgr.AddReadyzCheck("informers", cacheSynced(mgr.GetCache())); err != nil {
		return nil, fmt.Errorf("setting up the ready check: %w", err)
	}

	// The operator's Kueue integration: its admission in the kinds'
	// webhooks and its reconcilers.
	var admissionExt []webhooks.Extension
	if kueueSettings != nil {
		admissionExt = append(admissionExt, kueue.NewAdmission(mgr.GetClient(), kueueSettings))
	}
	if op.Certs != nil {
		if err := webhooks.Setup(mgr, kinds.Webhooks(), cfg.EnabledSchemes, admissionExt...); err != nil {
			return nil, fmt.Errorf("setting up webhooks: %w", err)
		}
	}
	if !o.NoControllers {
		// The per-job memory every kind's engine and the gang manager
		// share: a gone job's records are freed in one place.
		memory := engine.NewJobMemory(clock.RealClock{})
		if err := setupControllers(mgr, cfg, ad, memory, kueueSettings); err != nil {
			return nil, fmt.Errorf("setting up controllers: %w", err)
		}
	}
	if err := setupObservability(mgr, ad, op.Certs); err != nil {
		return nil, fmt.Errorf("setting up metrics: %w", err)
	}
	return op, nil
}

// setupObservability serves the gauges computed at scrape time: the jobs
// by state from the leader's cache (its controllers' informers: no API
// request, and a standby starts no informer for them), and the serving
// certificate's expiry on every replica, each serving its own files.
func setupObservability(mgr ctrl.Manager, ad adapters, certs *cert.Provider) error {
	observability.Register()
	var ks []observability.Kind
	for _, k := range ad.enabled {
		ks = append(ks, observability.Kind{List: kubeflowv1.GroupVersion.WithKind(k.Info.Kind + "List"), Framework: k.Info.FrameworkName})
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		observability.Jobs.Serve(ctx, mgr.GetCache(), mgr.GetScheme(), ks)
		return nil
	})); err != nil {
		return err
	}
	if certs == nil {
		return nil
	}
	return mgr.Add(everyReplica(func(ctx context.Context) { observability.Cert.Serve(ctx, certs.NotAfter) }))
}

// everyReplica is a runnable that runs on standby replicas too.
type everyReplica func(context.Context)

func (f everyReplica) Start(ctx context.Context) error {
	f(ctx)
	return nil
}

func (everyReplica) NeedLeaderElection() bool { return false }

// newCertProvider sets up the webhook serving certificate as configured:
// built-in self-signed certificates whose CA bundle is injected into the
// webhook configurations, which are also trimmed to the enabled kinds; or
// files provided by cert-manager or by hand.
func newCertProvider(cfg *configv1alpha1.Configuration, o Overrides) (*cert.Provider, error) {
	wh := cfg.Webhook
	opts := cert.Options{
		Mode:         wh.CertManagement,
		Namespace:    o.CertNamespace,
		SecretName:   wh.SecretName,
		ServiceName:  wh.ServiceName,
		CertDir:      wh.CertDir,
		ClientURL:    wh.ClientURL,
		ResyncPeriod: o.CertResyncPeriod,
		Lifetimes:    o.CertLifetimes,
	}
	if opts.Namespace == "" {
		opts.Namespace = cert.OperatorNamespace()
	}
	if wh.CertManagement == configv1alpha1.CertManagementSelfSigned {
		cfgs, err := CertWebhooks(cfg.EnabledSchemes)
		if err != nil {
			return nil, err
		}
		opts.Webhooks = cfgs
	}
	return cert.New(opts)
}

// CertWebhooks are the webhooks of the enabled kinds as the certificate
// provider keeps them in the two admission configurations.
func CertWebhooks(enabledSchemes []string) (*cert.WebhookConfigurations, error) {
	cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), enabledSchemes)
	if err != nil {
		return nil, err
	}
	return &cert.WebhookConfigurations{
		MutatingName: cfgs.MutatingName, ValidatingName: cfgs.ValidatingName,
		Mutating: cfgs.Mutating, Validating: cfgs.Validating, Managed: cfgs.Managed,
	}, nil
}

// newManager builds the controller-runtime manager. The webhook server
// starts once certs are ready; watchCtx bounds the metrics certificate
// watcher.
func newManager(watchCtx context.Context, restCfg *rest.Config, cfg *configv1alpha1.Configuration, cacheOpts cache.Options, certs *cert.Provider, o Overrides) (ctrl.Manager, error) {
	metricsOpts := metricsserver.Options{
		BindAddress:   cfg.Metrics.BindAddress,
		SecureServing: cfg.Metrics.Secure,
	}
	if cfg.Metrics.Secure {
		metricsOpts.FilterProvider = metricsfilter.Filter
		// The webhook serving certificate (for the Service's name, from the
		// operator's CA or cert-manager's), so a scraper can verify it.
		metricsOpts.TLSOpts = []func(*tls.Config){certs.MetricsTLS(watchCtx)}
	}

	cacheOpts.ReaderFailOnMissingInformer = o.StrictCache

	controllerOpts := ctrlconfig.Controller{CacheSyncTimeout: cfg.Controller.CacheSyncTimeout.Duration}
	if o.SkipNameValidation {
		controllerOpts.SkipNameValidation = &o.SkipNameValidation
	}

	le := cfg.LeaderElection
	opts := ctrl.Options{
		Scheme:                        NewScheme(),
		Cache:                         cacheOpts,
		Metrics:                       metricsOpts,
		Controller:                    controllerOpts,
		HealthProbeBindAddress:        cfg.Health.ProbeBindAddress,
		PprofBindAddress:              cfg.Health.PprofBindAddress,
		LeaderElection:                le.LeaderElect,
		LeaderElectionID:              le.ResourceName,
		LeaderElectionNamespace:       le.ResourceNamespace,
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &le.LeaseDuration.Duration,
		RenewDeadline:                 &le.RenewDeadline.Duration,
		RetryPeriod:                   &le.RetryPeriod.Duration,
	}
	if le.LeaderElect {
		opts.LeaderElectionConfig = leaseConfig(restCfg)
	}
	if certs != nil {
		// Started once the serving certificates are in place.
		opts.WebhookServer = certs.WaitingServer(webhook.NewServer(webhook.Options{
			Host:    cfg.Webhook.Host,
			Port:    int(*cfg.Webhook.Port),
			CertDir: cfg.Webhook.CertDir,
		}))
	}
	return ctrl.NewManager(restCfg, opts)
}

// leaseConfig is restCfg with a dialer of its own, which client-go's
// transport cache never shares: the Lease is renewed over its own
// connection, not the HTTP/2 connection (its write queue and flow control)
// that carries a burst's child writes, and does not wait or fail with it.
func leaseConfig(restCfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(restCfg)
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return c
}

// untilStopped runs stop when the manager stops. It runs on every replica.
type untilStopped func()

func (u untilStopped) Start(ctx context.Context) error {
	<-ctx.Done()
	u()
	return nil
}

func (untilStopped) NeedLeaderElection() bool { return false }

// cacheSynced is a readiness check that passes once the informer cache has
// synced every informer started so far.
func cacheSynced(c interface {
	WaitForCacheSync(context.Context) bool
}) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), 200*time.Millisecond)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("informer caches not synced yet")
		}
		return nil
	}
}
