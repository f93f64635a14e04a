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

package util

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/internal/operator"
	"github.com/seed-d8a409e9/training-operator/internal/serving/cert"
)

// FullOperatorOptions configures StartFullOperator.
type FullOperatorOptions struct {
	// RESTConfig is the operator's identity (e.g. impersonating the installed
	// ServiceAccount, or wrapped with a recording transport).
	RESTConfig *rest.Config
	// Config is the operator Configuration; nil means every default. Its
	// webhook host, port, certDir, clientURL and certManagement are
	// overridden so that the local API server reaches the webhooks on
	// 127.0.0.1, and so are the metrics, health and leader-election
	// settings, from the fields below.
	Config *configv1alpha1.Configuration
	// Namespace holds the certificate Secret and the leader-election Lease.
	Namespace string
	// LeaderElection turns leader election on (Lease in Namespace).
	LeaderElection bool
	// MetricsSecure serves metrics over HTTPS behind metricsfilter.Filter, as
	// main.go does with metrics.secure; otherwise metrics are not served.
	MetricsSecure bool
	// ProvidedCertDir, when set, holds tls.crt and tls.key written by the
	// caller, as cert-manager's Secret would be mounted (certManagement
	// cert-manager): the operator only reads them, and the caller installs
	// the webhook configurations with their CA bundle.
	ProvidedCertDir string
	// CertResyncPeriod overrides how often the certificates are checked
	// (cert.DefaultResyncPeriod when zero).
	CertResyncPeriod time.Duration
	// CertLifetimes shorten the built-in certificates' lifetimes (rotation
	// tests).
	CertLifetimes cert.Lifetimes
	// ClientURL, when set, is where the webhook configurations send the API
	// server (e.g. a proxy in front of WebhookAddr) instead of WebhookAddr;
	// its host must be 127.0.0.1, which the certificate names.
	ClientURL string
}

// FullOperator is an in-process operator wired by operator.New, as main.go
// is: built-in self-signed certificates, webhooks, controllers, optional
// leader election and secure metrics.
type FullOperator struct {
	// WebhookAddr and MetricsAddr are host:port of the servers (MetricsAddr
	// is empty unless MetricsSecure).
	WebhookAddr, MetricsAddr string
	Config                   *configv1alpha1.Configuration
	Readyz                   healthz.Checker

	certDir string
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
	err     error
}

// StartFullOperator starts the operator and waits until it is ready
// (certificates issued, webhook server started).
func StartFullOperator(ctx context.Context, opts FullOperatorOptions) (*FullOperator, error) {
	op, mgr, err := newFullOperator(opts)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	op.cancel, op.done = cancel, make(chan error, 1)
	go func() { op.done <- mgr.Start(runCtx) }()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		select {
		case err := <-op.done:
			return false, fmt.Errorf("operator exited: %v", err)
		default:
		}
		return op.Readyz(nil) == nil, nil
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("operator not ready: %w (readyz: %v)", err, op.Readyz(nil))
	}
	return op, nil
}

// newFullOperator wires the operator as StartFullOperator runs it: main's
// wiring, with the servers on free ports of 127.0.0.1 (which the local API
// server reaches the webhooks on) and the Secret and Lease in
// opts.Namespace.
func newFullOperator(opts FullOperatorOptions) (*FullOperator, ctrl.Manager, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = DefaultConfiguration()
	}
	cfg = cfg.DeepCopy()
	ports, err := childproc.FreePorts(2) // webhook, metrics
	if err != nil {
		return nil, nil, err
	}
	port := ports[0]
	p32 := int32(port)
	// The manager writes the serving certificates here; removed by Stop.
	mode, certDir, ownDir := configv1alpha1.CertManagementSelfSigned, opts.ProvidedCertDir, false
	if certDir != "" {
		mode = configv1alpha1.CertManagementCertManager
	} else if certDir, err = os.MkdirTemp("", "training-operator-certs-"); err != nil {
		return nil, nil, err
	} else {
		ownDir = true
	}
	op := &FullOperator{WebhookAddr: fmt.Sprintf("127.0.0.1:%d", port), Config: cfg}
	if ownDir {
		op.certDir = certDir
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(op.certDir)
		}
	}()
	cfg.Webhook.CertManagement = mode
	cfg.Webhook.Host, cfg.Webhook.Port, cfg.Webhook.CertDir = "127.0.0.1", &p32, certDir
	cfg.Webhook.ClientURL = fmt.Sprintf("https://127.0.0.1:%d", port)
	if opts.ClientURL != "" {
		cfg.Webhook.ClientURL = opts.ClientURL
	}
	cfg.Health.ProbeBindAddress = "0"
	cfg.Metrics.BindAddress, cfg.Metrics.Secure = "0", opts.MetricsSecure
	if opts.MetricsSecure {
		op.MetricsAddr = fmt.Sprintf("127.0.0.1:%d", ports[1])
		cfg.Metrics.BindAddress = op.MetricsAddr
	}
	cfg.LeaderElection.LeaderElect = opts.LeaderElection
	cfg.LeaderElection.ResourceNamespace = opts.Namespace

	o, err := operator.New(opts.RESTConfig, cfg, operator.Overrides{
		CertNamespace:      opts.Namespace,
		CertResyncPeriod:   opts.CertResyncPeriod,
		CertLifetimes:      opts.CertLifetimes,
		SkipNameValidation: true,
	})
	if err != nil {
		return nil, nil, err
	}
	op.Readyz = o.WebhookReady
	ok = true
	return op, o.Manager, nil
}

// Stop stops the operator and waits for it (at most 30 s).
func (o *FullOperator) Stop() error {
	o.once.Do(func() {
		o.cancel()
		select {
		case o.err = <-o.done:
		case <-time.After(30 * time.Second):
			o.err = fmt.Errorf("operator did not stop within 30s")
		}
		_ = os.RemoveAll(o.certDir)
	})
	return o.err
}
