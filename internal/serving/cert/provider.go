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

// Package cert provides the webhook server's serving certificate.
//
// With certManagement "self-signed" (the default, v1's behaviour) the
// operator keeps a self-signed CA and a serving certificate for
// <service>.<namespace>.svc in the webhook Secret, renews them before they
// expire, writes them to the webhook server's certificate directory (or, when
// the Secret is mounted there read-only, waits for the kubelet to update the
// files) and keeps the mutating and validating webhook configurations in
// line: CA bundle injected, client config pointing at the service (or at a
// URL, see Options.ClientURL) and only the webhooks of enabled kinds listed.
// Only the leader writes the Secret and the webhook configurations; every
// replica serves the certificates from the Secret (follow).
//
// A CA rotation never serves a certificate the API servers cannot verify:
// the new CA joins the caBundle beside the old one first, the serving
// certificate switches to one the new CA signs only once that bundle is
// written and BundlePropagation has passed, and the old CA leaves the bundle
// last, when it expires. If the bundle cannot be written, the old serving
// certificate stays.
//
// With "cert-manager" or "none" it only waits for tls.crt and tls.key to
// appear in the certificate directory.
//
// Until the certificate files are in place the webhook server is not
// started (see WaitingServer) and /readyz fails with "certificates are not
// ready"; controllers start right away.
//
// Why not github.com/open-policy-agent/cert-controller (v0.16.0) pkg/rotator:
// its serving certificate has DNS names only (no IP SANs), so a clientURL
// such as https://127.0.0.1:9443 (make dev, e2e, the integration tests)
// fails the API server's TLS check; it only updates an existing Secret and
// never writes the certificate files (it expects the Secret mounted, while
// the chart uses an emptyDir); and it neither creates nor trims webhook
// configurations.
package cert

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// RBAC for the built-in certificates: the one Secret and the operator's two
// webhook configurations, by name (the chart and kustomize ship all three,
// so no create: a rule with resourceNames cannot limit create). The chart
// substitutes webhook.secretName. List and watch are by a metadata.name
// field selector, which RBAC authorizes against resourceNames.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;update,resourceNames=training-operator-webhook-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch;update,resourceNames=defaulter.training-operator.kubeflow.org
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;update,resourceNames=validator.training-operator.kubeflow.org

const (
	// EnvPodNamespace is the environment variable holding the operator's
	// namespace, where the certificate Secret lives (v1's variable).
	EnvPodNamespace = "MY_POD_NAMESPACE"
	// DefaultNamespace is used when EnvPodNamespace is not set.
	DefaultNamespace = "kubeflow"

	// NotReadyMessage is the /readyz failure until the certificates exist.
	NotReadyMessage = "certificates are not ready"

	// Defaults of the timing options.
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultCARenewBefore   = 365 * 24 * time.Hour
	DefaultCertValidity    = 365 * 24 * time.Hour
	DefaultCertRenewBefore = 90 * 24 * time.Hour
	DefaultResyncPeriod    = 10 * time.Minute
	// DefaultBundlePropagation is how long a written caBundle is given to
	// reach every API server (their informers of the webhook
	// configurations; normally well under a second).
	DefaultBundlePropagation = 10 * time.Second

	// filePollPeriod is how often the certificate files are checked while
	// they are not in place yet.
	filePollPeriod = time.Second
	// maxRetryDelay caps the back-off after errors.
	maxRetryDelay = 30 * time.Second
)

// OperatorNamespace returns $MY_POD_NAMESPACE, or "kubeflow" if unset.
func OperatorNamespace() string {
	if ns := os.Getenv(EnvPodNamespace); ns != "" {
		return ns
	}
	return DefaultNamespace
}

// Options configures a Provider.
type Options struct {
	// Mode is the configured certManagement ("" means self-signed).
	Mode configv1alpha1.CertManagement
	// Namespace holds the Secret and the webhook Service.
	Namespace string
	// SecretName is the Secret holding ca.crt, ca.key, tls.crt and tls.key.
	SecretName string
	// ServiceName is the webhook Service; the certificate is issued for
	// <ServiceName>, <ServiceName>.<Namespace>, ...svc and ...svc.cluster.local.
	ServiceName string
	// CertDir is where the webhook server reads tls.crt and tls.key.
	CertDir string
	// ClientURL, when set (e.g. https://127.0.0.1:9443), makes the webhook
	// configurations call <ClientURL><path> instead of the Service and adds
	// the URL's host to the certificate. For development and test clusters
	// whose API server cannot reach Services.
	ClientURL string
	// Webhooks are the webhooks the configurations must list (those of the
	// enabled kinds). Nil leaves the configurations alone.
	Webhooks *WebhookConfigurations

	Lifetimes
	// ResyncPeriod is how often everything is checked again (the webhook
	// configurations are also watched). Zero means DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// BundlePropagation is how long after the caBundle holding a new CA is
	// written the serving certificate switches to one that CA signs. Zero
	// means DefaultBundlePropagation.
	BundlePropagation time.Duration
	// Now returns the current time (tests); nil means time.Now.
	Now func() time.Time
}

// Lifetimes are the validity and renewal windows of the CA and the serving
// certificate; zero means the Default* constant.
type Lifetimes struct {
	CAValidity, CARenewBefore, CertValidity, CertRenewBefore time.Duration
}

// WebhookConfigurations are the webhooks the operator's two admission
// configurations must list (the caller builds them from the enabled kinds,
// so that certificate code knows nothing of the webhooks themselves).
type WebhookConfigurations struct {
	// MutatingName and ValidatingName are the names of the two configurations.
	MutatingName, ValidatingName string
	// Mutating and Validating are the webhooks of the enabled kinds; their
	// clientConfig carries only the service path, which the provider
	// completes with the service (or URL) and CA bundle.
	Mutating   []admissionregistrationv1.MutatingWebhook
	Validating []admissionregistrationv1.ValidatingWebhook
	// Managed names the webhooks of every kind, enabled or not: entries
	// with these names missing from Mutating and Validating are removed.
	Managed []string
}

// Provider provides the serving certificate. Create it with New, wrap the
// webhook server with WaitingServer, add it to the manager with
// SetupWithManager and use ReadyzCheck as the readiness check.
type Provider struct {
	opts  Options
	names servingNames
	url   *url.URL

	// reader and writer talk to the API server directly (no cache, so no
	// cluster-wide watch on Secrets is needed).
	reader client.Reader
	writer client.Client
	cfg    *rest.Config
	log    logr.Logger

	ready     chan struct{}
	readyOnce sync.Once

	// elected is closed once this replica leads (at once without leader
	// election): only the leader writes the Secret and the webhook
	// configurations, so replicas with different settings (a rolling
	// upgrade) never undo each other's writes; the others read the Secret.
	elected <-chan struct{}

	// existed names the objects (the Secret, each webhook configuration)
	// this process has seen exist. Only one never seen is created: the
	// local sandbox starts without them, while an install ships them and
	// grants no create, so one deleted afterwards waits to be re-installed
	// instead of calling a create the installed RBAC refuses. Used by the
	// Start goroutine only.
	existed map[string]bool

	// publishedCA is the newest CA this process wrote (or found) in both
	// webhook configurations' caBundle, at publishedAt. Until
	// BundlePropagation has passed since, the serving certificate stays
	// one an older CA signed. Used by the Start goroutine only.
	publishedCA *x509.Certificate
	publishedAt time.Time
	// switchAt is when a serving certificate switch waits for (zero if
	// none): the next pass runs then.
	switchAt time.Time
}

// New validates the options and returns a Provider.
func New(opts Options) (*Provider, error) {
	if opts.Mode == "" {
		opts.Mode = configv1alpha1.CertManagementSelfSigned
	}
	switch opts.Mode {
	case configv1alpha1.CertManagementSelfSigned, configv1alpha1.CertManagementCertManager, configv1alpha1.CertManagementNone:
	default:
		return nil, fmt.Errorf("unsupported certManagement %q", opts.Mode)
	}
	if opts.CertDir == "" {
		return nil, errors.New("cert dir is required")
	}
	setDefault(&opts.CAValidity, DefaultCAValidity)
	setDefault(&opts.CARenewBefore, DefaultCARenewBefore)
	setDefault(&opts.CertValidity, DefaultCertValidity)
	setDefault(&opts.CertRenewBefore, DefaultCertRenewBefore)
	setDefault(&opts.ResyncPeriod, DefaultResyncPeriod)
	setDefault(&opts.BundlePropagation, DefaultBundlePropagation)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Provider{opts: opts, ready: make(chan struct{}), log: ctrl.Log.WithName("cert"), existed: map[string]bool{}}
	if opts.Mode != configv1alpha1.CertManagementSelfSigned {
		return p, nil
	}
	if opts.Namespace == "" || opts.SecretName == "" || opts.ServiceName == "" {
		return nil, errors.New("namespace, secret name and service name are required for self-signed certificates")
	}
	svc := opts.ServiceName
	p.names.dnsNames = []string{
		fmt.Sprintf("%s.%s.svc", svc, opts.Namespace),
		svc,
		fmt.Sprintf("%s.%s", svc, opts.Namespace),
		fmt.Sprintf("%s.%s.svc.cluster.local", svc, opts.Namespace),
	}
	if opts.ClientURL != "" {
		u, err := ParseClientURL(opts.ClientURL)
		if err != nil {
			return nil, err
		}
		p.url = u
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			p.names.ips = append(p.names.ips, ip)
		} else {
			p.names.dnsNames = append(p.names.dnsNames, u.Hostname())
		}
	}
	return p, nil
}

// ParseClientURL checks a webhook client URL: https, a host, optionally a
// port, and no path (other than "/"), query, fragment or user info.
func ParseClientURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, err
	case u.Scheme != "https":
		return nil, errors.New(`scheme must be "https"`)
	case u.Hostname() == "":
		return nil, errors.New("host is required")
	case u.User != nil:
		return nil, errors.New("user info is not allowed")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return nil, errors.New("path, query and fragment are not allowed; the webhook paths are appended")
	}
	u.Path = ""
	return u, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Ready is closed once the certificate files are in place.
func (p *Provider) Ready() <-chan struct{} { return p.ready }

func (p *Provider) markReady() {
	p.readyOnce.Do(func() {
		p.log.Info("certificates are ready", "certDir", p.opts.CertDir)
		close(p.ready)
	})
}

func (p *Provider) isReady() bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}

// ReadyzCheck fails with "certificates are not ready" until the
// certificates are in place and then reports the webhook server's
// StartedChecker.
func (p *Provider) ReadyzCheck(server webhook.Server) healthz.Checker {
	started := server.StartedChecker()
	return func(req *http.Request) error {
		if !p.isReady() {
			return errors.New(NotReadyMessage)
		}
		return started(req)
	}
}

// WaitingServer wraps a webhook server so that it starts only once the
// certificates are in place (it would otherwise fail on missing files). Use
// it as the manager's WebhookServer.
func (p *Provider) WaitingServer(server webhook.Server) webhook.Server {
	return &waitingServer{Server: server, ready: p.ready}
}

type waitingServer struct {
	webhook.Server
	ready <-chan struct{}
}

// Start waits for the certificates, then runs the wrapped server.
func (s *waitingServer) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-s.ready:
	}
	return s.Server.Start(ctx)
}

// SetupWithManager adds the provider to the manager. It runs on every
// replica, without leader election.
func (p *Provider) SetupWithManager(mgr manager.Manager) error {
	p.cfg = mgr.GetConfig()
	p.reader = mgr.GetAPIReader()
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	p.writer = c
	p.elected = mgr.Elected()
	return mgr.Add(p)
}

// leads reports whether this replica writes (see elected).
func (p *Provider) leads() bool {
	if p.elected == nil {
		return true
	}
	select {
	case <-p.elected:
		return true
	default:
		return false
	}
}

// NeedLeaderElection is false: every replica serves webhooks.
func (p *Provider) NeedLeaderElection() bool { return false }

// Start runs until ctx ends.
func (p *Provider) Start(ctx context.Context) error {
	if p.opts.Mode != configv1alpha1.CertManagementSelfSigned {
		return p.waitForFiles(ctx)
	}
	trigger := make(chan struct{}, 1)
	if p.opts.Webhooks != nil {
		if err := p.watchWebhookConfigurations(ctx, trigger); err != nil {
			return err
		}
	}
	delay := time.Duration(0)
	elected := p.elected
	if p.leads() {
		elected = nil
	}
	for {
		next := p.opts.ResyncPeriod
		if err := p.reconcile(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			delay = min(max(2*delay, time.Second), maxRetryDelay)
			next = delay
			p.log.Error(err, "reconciling the webhook certificates", "retryIn", next)
		} else {
			delay = 0
			if !p.isReady() {
				next = filePollPeriod
			}
		}
		if !p.switchAt.IsZero() {
			next = min(next, max(p.switchAt.Sub(p.opts.Now()), 0))
		}
		timer := time.NewTimer(next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-trigger:
			timer.Stop()
		case <-elected:
			// Now the writer: bring everything in line at once.
			elected = nil
			timer.Stop()
		case <-timer.C:
		}
	}
}

// reconcile makes the Secret hold a valid CA and serving certificate,
// brings the files in line and updates the webhook configurations. After a
// CA rotation it takes two passes: the first writes the new CA into the
// Secret and the caBundle and keeps the old serving certificate, the one
// after BundlePropagation switches it (see desiredSecretData).
func (p *Provider) reconcile(ctx context.Context) error {
	if !p.leads() {
		return p.follow(ctx)
	}
	wasAt := p.switchAt
	p.switchAt = time.Time{}
	data, err := p.issue(ctx)
	if err != nil {
		return err
	}
	if p.opts.Webhooks != nil {
		if err := p.reconcileWebhookConfigurations(ctx, data[CACertKey]); err != nil {
			return err
		}
		p.published(data[CACertKey])
	}
	ca, pending := switchPending(data)
	if !pending {
		return nil
	}
	if !p.mayServeFrom(ca) {
		p.switchAt = p.publishedAt.Add(p.opts.BundlePropagation)
		if p.switchAt.Equal(wasAt) {
			return nil
		}
		p.log.Info("new CA in the caBundle; the serving certificate switches to it once every API server has read the bundle",
			"at", p.switchAt.UTC())
		return nil
	}
	// The bundle is unchanged by the switch: no configuration to write.
	_, err = p.issue(ctx)
	return err
}

// issue brings the Secret and the certificate files in line.
func (p *Provider) issue(ctx context.Context) (map[string][]byte, error) {
	data, err := p.ensureSecret(ctx)
	if err != nil {
		return nil, fmt.Errorf("certificate Secret %s/%s: %w", p.opts.Namespace, p.opts.SecretName, err)
	}
	inPlace, err := p.syncFiles(data)
	if err != nil {
		return nil, err
	}
	if inPlace {
		p.markReady()
	}
	return data, nil
}

// published records that both webhook configurations hold caBundle.
func (p *Provider) published(caBundle []byte) {
	certs, err := parseCerts(caBundle)
	if err != nil || (p.publishedCA != nil && p.publishedCA.Equal(certs[0])) {
		return
	}
	p.publishedCA, p.publishedAt = certs[0], p.opts.Now()
}

// mayServeFrom reports whether the serving certificate may be one ca
// signed: the API servers have had BundlePropagation to read a caBundle
// holding ca (always when the provider keeps no webhook configurations).
func (p *Provider) mayServeFrom(ca *x509.Certificate) bool {
	if p.opts.Webhooks == nil {
		return true
	}
	return p.publishedCA != nil && p.publishedCA.Equal(ca) &&
		!p.opts.Now().Before(p.publishedAt.Add(p.opts.BundlePropagation))
}

// switchPending reports whether the Secret's serving certificate is not
// signed by its current CA (the first of ca.crt), and returns that CA.
func switchPending(data map[string][]byte) (*x509.Certificate, bool) {
	cas, err1 := parseCerts(data[CACertKey])
	leaf, err2 := parseCerts(data[TLSCertKey])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	return cas[0], leaf[0].CheckSignatureFrom(cas[0]) != nil
}

// follow serves the certificates the leader keeps in the Secret, and
// writes nothing.
func (p *Provider) follow(ctx context.Context) error {
	var secret corev1.Secret
	if err := p.reader.Get(ctx, client.ObjectKey{Namespace: p.opts.Namespace, Name: p.opts.SecretName}, &secret); err != nil {
		return fmt.Errorf("certificate Secret %s/%s: %w", p.opts.Namespace, p.opts.SecretName, err)
	}
	kp, err := parseKeyPair(secret.Data[TLSCertKey], secret.Data[TLSKeyKey])
	if err != nil || !p.opts.Now().Before(kp.cert.NotAfter) {
		return fmt.Errorf("certificate Secret %s/%s: waiting for the leader to issue certificates", p.opts.Namespace, p.opts.SecretName)
	}
	inPlace, err := p.syncFiles(secret.Data)
	if err != nil {
		return err
	}
	if inPlace {
		p.markReady()
	}
	return nil
}

// waitForFiles waits until tls.crt and tls.key in the cert dir form a valid
// key pair (certificates managed by cert-manager or by hand).
func (p *Provider) waitForFiles(ctx context.Context) error {
	p.log.Info("waiting for the webhook certificate files", "certManagement", p.opts.Mode, "certDir", p.opts.CertDir)
	ticker := time.NewTicker(filePollPeriod)
	defer ticker.Stop()
	for {
		certPEM, err1 := os.ReadFile(p.certFile(TLSCertKey))
		keyPEM, err2 := os.ReadFile(p.certFile(TLSKeyKey))
		if err1 == nil && err2 == nil {
			if _, err := parseKeyPair(certPEM, keyPEM); err == nil {
				p.markReady()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// urlFor returns the webhook URL for a path when ClientURL is set.
func (p *Provider) urlFor(path string) string {
	return strings.TrimSuffix(p.url.String(), "/") + path
}
