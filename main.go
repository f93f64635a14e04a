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

// Command training-operator runs the controllers of the Kubeflow Training
// Operator v1 kinds (kubeflow.org/v1 PyTorchJob, TFJob, MPIJob, XGBoostJob,
// PaddleJob, JAXJob).
//
// Settings come from an optional config.training-operator.io/v1alpha1
// Configuration file (--config) and from the v1 command-line flags, which
// override the file when given explicitly.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/internal/cert"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/internal/lazylog"
	"github.com/seed-d8a409e9/training-operator/internal/metricsfilter"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(scheme))
	// Volcano (scheduling.volcano.sh) and scheduler-plugins (scheduling.x-k8s.io) PodGroups.
	utilruntime.Must(gang.AddToScheme(scheme))
}

func main() {
	// Production logging (JSON, info level) by default; v1's stack-trace
	// threshold (DPanic) keeps ordinary error logs on one line.
	logOpts := zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}
	logOpts.BindFlags(flag.CommandLine)
	var flags config.Flags
	flags.Bind(flag.CommandLine)
	releaseOnly := flag.Bool("release-pod-finalizers", false,
		"Remove the pod-tracking finalizer from every pod of the operator's jobs (in --namespace, or all namespaces) and exit. "+
			"The chart runs it when it is uninstalled.")
	// --kubeconfig is registered on flag.CommandLine by controller-runtime.
	flag.Parse()

	logger := lazylog.New(zap.New(zap.UseFlagOptions(&logOpts)))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	if *releaseOnly {
		os.Exit(releasePodFinalizers(flags.Namespace))
	}

	cfg, err := config.Build(flags.ConfigFile, &flags, config.ExplicitFlags(flag.CommandLine))
	if err != nil {
		setupLog.Error(err, "unable to load configuration", "file", flags.ConfigFile)
		os.Exit(1)
	}
	// Logged as a plain map: the logger renders runtime.Objects as object references.
	effective, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cfg)
	if err != nil {
		setupLog.Error(err, "unable to encode configuration")
		os.Exit(1)
	}
	setupLog.Info("effective configuration", "configuration", effective)

	certs, err := newCertProvider(cfg)
	if err != nil {
		setupLog.Error(err, "unable to set up webhook certificates")
		os.Exit(1)
	}

	mgr, err := newManager(cfg, certs)
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}
	if err := certs.SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "unable to set up webhook certificates")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	// Ready only once the serving certificates exist and the webhook server
	// has started, so that no admission call reaches a replica that cannot
	// answer it. Controllers start right away.
	if err := mgr.AddReadyzCheck("readyz", certs.ReadyzCheck(mgr.GetWebhookServer())); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}
	// And once the informers the controllers started have listed the
	// cluster: a job created right after readiness then gets its pods at
	// once instead of after the initial lists (seconds with thousands of
	// jobs). Replicas that are not the leader start no controllers.
	if err := mgr.AddReadyzCheck("informers", cacheSynced(mgr.GetCache())); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	if err := webhooks.Setup(mgr, kinds.Webhooks(), cfg.EnabledSchemes); err != nil {
		setupLog.Error(err, "unable to set up webhooks")
		os.Exit(1)
	}

	if err := controllers.Setup(mgr, cfg, kinds.Controllers()); err != nil {
		setupLog.Error(err, "unable to set up controllers")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
	setupLog.Info("stopping")
}

// newCertProvider sets up the webhook serving certificate as configured:
// built-in self-signed certificates (the Secret lives in $MY_POD_NAMESPACE,
// default kubeflow) whose CA bundle is injected into the webhook
// configurations, which are also trimmed to the enabled kinds; or files
// provided by cert-manager or by hand.
func newCertProvider(cfg *configv1alpha1.Configuration) (*cert.Provider, error) {
	wh := cfg.Webhook
	opts := cert.Options{
		Mode:        wh.CertManagement,
		Namespace:   cert.OperatorNamespace(),
		SecretName:  wh.SecretName,
		ServiceName: wh.ServiceName,
		CertDir:     wh.CertDir,
		ClientURL:   wh.ClientURL,
	}
	if wh.CertManagement == configv1alpha1.CertManagementSelfSigned {
		cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), cfg.EnabledSchemes)
		if err != nil {
			return nil, err
		}
		opts.Webhooks = cfgs
	}
	return cert.New(opts)
}

// newManager builds the controller-runtime manager from a validated,
// defaulted configuration. The webhook server starts once certs are ready.
func newManager(cfg *configv1alpha1.Configuration, certs *cert.Provider) (ctrl.Manager, error) {
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	config.ApplyClientConnection(restCfg, cfg.ClientConnection)

	metricsOpts := metricsserver.Options{
		BindAddress:   cfg.Metrics.BindAddress,
		SecureServing: cfg.Metrics.Secure,
	}
	if cfg.Metrics.Secure {
		metricsOpts.FilterProvider = metricsfilter.Filter
		// The webhook serving certificate (for the Service's name, from the
		// operator's CA or cert-manager's), so a scraper can verify it.
		// Its watcher lives as long as the process.
		metricsOpts.TLSOpts = []func(*tls.Config){certs.MetricsTLS(context.Background())}
	}

	cacheOpts, err := controllers.CacheOptions(cfg, kinds.Controllers())
	if err != nil {
		return nil, err
	}

	le := cfg.LeaderElection
	return ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Metrics:                       metricsOpts,
		Controller:                    ctrlconfig.Controller{CacheSyncTimeout: cfg.Controller.CacheSyncTimeout.Duration},
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
		// Started once the serving certificates are in place.
		WebhookServer: certs.WaitingServer(webhook.NewServer(webhook.Options{
			Host:    cfg.Webhook.Host,
			Port:    int(*cfg.Webhook.Port),
			CertDir: cfg.Webhook.CertDir,
		})),
	})
}

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

// releasePodFinalizers is the uninstall mode: nothing is left to count the
// pods, so nothing may keep them from being deleted.
func releasePodFinalizers(namespace string) int {
	ctx := ctrl.SetupSignalHandler()
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{})
	if err != nil {
		setupLog.Error(err, "unable to create a client")
		return 1
	}
	n, err := engine.ReleaseAllPods(ctx, c, namespace)
	if err != nil {
		setupLog.Error(err, "unable to release pods", "namespace", namespace)
		return 1
	}
	setupLog.Info("released the pod-tracking finalizer", "pods", n, "namespace", namespace)
	return 0
}
