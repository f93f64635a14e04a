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

package security_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/internal/serving/cert"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// submitPeriod is how often the client submits a job during a rotation.
const submitPeriod = 100 * time.Millisecond

// TestCARotation rotates the built-in CA twice while a client submits a
// PyTorchJob (dry run, through both webhooks) every 100 ms: none may be
// rejected by TLS. The API server reaches the webhooks through a proxy
// that closes its connections before each submission, so that every
// submission opens a new TLS connection and checks the served certificate
// against the caBundle of that moment (as a second API server, or one
// after a restart, would); a reused connection would hide an outage.
// The second rotation happens while the operator's RBAC refuses it the
// webhook configurations' update (a failed bundle write).
func TestCARotation(t *testing.T) {
	s := start(t, configv1alpha1.CertManagementSelfSigned)
	proxy := newClosingProxy(t)
	// A CA lives 60 s and is replaced 30 s after its issue; each rotation
	// then waits cert.DefaultBundlePropagation (10 s) before the switch.
	op := s.startOperatorWith(t, nil, func(o *util.FullOperatorOptions) {
		o.ClientURL = "https://" + proxy.addr()
		o.CertLifetimes = cert.Lifetimes{
			CAValidity: 60 * time.Second, CARenewBefore: 30 * time.Second,
			CertValidity: 60 * time.Second, CertRenewBefore: 5 * time.Second,
		}
	})
	proxy.setTarget(op.WebhookAddr)
	job := testjobs.MakePyTorchJob("rotation", "default").Master(1).Obj()
	s.waitWebhooksReachable(t, job)

	tr := s.startTraffic(t, proxy, op.WebhookAddr, job)
	defer tr.finish()

	// waitNewCA waits until the Secret's current CA is not old.
	waitNewCA := func(old *x509.Certificate) *x509.Certificate {
		t.Helper()
		var ca *x509.Certificate
		if err := wait.PollUntilContextTimeout(t.Context(), poll, timeout, true, func(ctx context.Context) (bool, error) {
			var err error
			ca, err = s.secretCA(ctx)
			return err == nil && !ca.Equal(old), nil
		}); err != nil {
			t.Fatalf("no CA rotation: %v", err)
		}
		return ca
	}

	ca0, err := s.secretCA(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ca1 := waitNewCA(ca0)
	tr.waitServed(func(c *x509.Certificate) bool { return c.CheckSignatureFrom(ca1) == nil }, "first rotation: a certificate of the new CA")

	// The second one while the webhook configurations cannot be written:
	// held until the operator has tried twice.
	restore := s.denyWebhookConfigurationUpdates(t)
	ca2 := waitNewCA(ca1)
	bundleWrite := apiCall{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"}
	before := s.recorder.snapshot()[bundleWrite]
	if err := wait.PollUntilContextTimeout(t.Context(), poll, timeout, true, func(context.Context) (bool, error) {
		return s.recorder.snapshot()[bundleWrite] >= before+2, nil
	}); err != nil {
		t.Fatalf("the operator did not try to write the caBundle: %v", err)
	}
	restore()
	tr.waitServed(func(c *x509.Certificate) bool { return c.CheckSignatureFrom(ca2) == nil }, "rotation after failed bundle writes: a certificate of the new CA")
	tr.finish()
}

// TestCARotationCertManager renews the CA Certificate as cert-manager does
// with the chart's settings (its private key's rotationPolicy), then the
// serving Certificate it signs: the CA injector writes the new caBundle at
// once, while the operator serves the old certificate until the kubelet
// refreshes the mounted Secret. A PyTorchJob is submitted every 100 ms
// throughout, each over a new TLS connection: none may be rejected by TLS.
func TestCARotationCertManager(t *testing.T) {
	s := start(t, configv1alpha1.CertManagementCertManager)
	proxy := newClosingProxy(t)
	s.webhookURL = "https://" + proxy.addr()
	op := s.startOperator(t, nil)
	proxy.setTarget(op.WebhookAddr)
	job := testjobs.MakePyTorchJob("rotation", "default").Master(1).Obj()
	s.waitWebhooksReachable(t, job)
	tr := s.startTraffic(t, proxy, op.WebhookAddr, job)
	defer tr.finish()

	caCert := s.chartObject("Certificate", "training-operator-ca")
	if caCert == nil {
		t.Fatal("the chart has no training-operator-ca Certificate")
	}
	// Unset means Always since cert-manager v1.18: a new key on renewal.
	policy, _, _ := unstructured.NestedString(caCert.Object, "spec", "privateKey", "rotationPolicy")
	ca, err := s.ca.Renew(policy == "Never")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CA renewed with rotationPolicy %q", policy)
	svc := fmt.Sprintf("%s.%s.svc", s.config.Webhook.ServiceName, releaseNamespace)
	leaf, err := ca.ServingCert(svc, svc)
	if err != nil {
		t.Fatal(err)
	}
	// The serving Secret now holds the new leaf and ca.crt; the CA injector
	// copies ca.crt into the webhook configurations.
	s.ca = ca
	s.injectAsCAInjector(t, op)
	// The kubelet refreshes the mounted Secret up to a minute later: here
	// after 30 submissions against the new bundle.
	tr.waitSubmissions(30)
	if err := util.WriteTLSFiles(s.certDir, leaf); err != nil {
		t.Fatal(err)
	}
	tr.waitServed(func(c *x509.Certificate) bool { return c.Equal(leaf.Cert) }, "the renewed certificate")
	tr.waitSubmissions(30)
	tr.finish()
}

// traffic submits a job every submitPeriod through the API server, each
// over a new TLS connection to the webhook server, and checks a new
// connection's certificate against the published caBundle as often.
type traffic struct {
	t     *testing.T
	stop  context.CancelFunc
	wg    sync.WaitGroup
	once  sync.Once
	calls atomic.Int64 // submissions
	// tlsRejected, proxyClosed, otherFailed classify failed submissions.
	tlsRejected, proxyClosed, otherFailed atomic.Int64
	probed, probeFailed                   atomic.Int64
	mu                                    sync.Mutex
	served                                *x509.Certificate
}

func (s *suite) startTraffic(t *testing.T, proxy *closingProxy, webhookAddr string, job client.Object) *traffic {
	ctx, stop := context.WithCancel(t.Context())
	tr := &traffic{t: t, stop: stop}
	tr.wg.Go(func() {
		tick := time.NewTicker(submitPeriod)
		defer tick.Stop()
		for ctx.Err() == nil {
			// A new TLS connection for this submission: the proxy is idle
			// now (this loop is its only client), and the API server drops
			// a closed connection from its pool once it reads the EOF.
			proxy.closeAll()
			time.Sleep(20 * time.Millisecond)
			err := s.k8s.Create(ctx, job.DeepCopyObject().(client.Object), client.DryRunAll)
			switch {
			case ctx.Err() != nil:
				return
			case err == nil:
			case tlsError(err):
				tr.tlsRejected.Add(1)
				t.Errorf("submission rejected by TLS: %v", err)
			case closedConnError(err):
				// The API server reused a connection the proxy closed before
				// it read the EOF: the proxy's doing, not a handshake.
				tr.proxyClosed.Add(1)
				t.Logf("submission on a connection the proxy had closed: %v", err)
			default:
				tr.otherFailed.Add(1)
				t.Errorf("submission failed: %v", err)
			}
			tr.calls.Add(1)
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	})
	tr.wg.Go(func() {
		tick := time.NewTicker(submitPeriod)
		defer tick.Stop()
		for ctx.Err() == nil {
			leaf, err := s.verifyServed(ctx, webhookAddr)
			if ctx.Err() != nil {
				return
			}
			tr.probed.Add(1)
			if err != nil {
				tr.probeFailed.Add(1)
				t.Errorf("served certificate: %v", err)
			} else {
				tr.mu.Lock()
				tr.served = leaf
				tr.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	})
	return tr
}

// waitServed waits until the served certificate matches.
func (tr *traffic) waitServed(match func(*x509.Certificate) bool, what string) {
	tr.t.Helper()
	if err := wait.PollUntilContextTimeout(tr.t.Context(), poll, timeout, true, func(context.Context) (bool, error) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.served != nil && match(tr.served), nil
	}); err != nil {
		tr.t.Fatalf("not served: %s: %v", what, err)
	}
}

// waitSubmissions waits until n more jobs have been submitted.
func (tr *traffic) waitSubmissions(n int64) {
	tr.t.Helper()
	want := tr.calls.Load() + n
	if err := wait.PollUntilContextTimeout(tr.t.Context(), poll, timeout, true, func(context.Context) (bool, error) {
		return tr.calls.Load() >= want, nil
	}); err != nil {
		tr.t.Fatalf("%d submissions, want %d: %v", tr.calls.Load(), want, err)
	}
}

// finish stops the traffic and checks that enough of it was made.
func (tr *traffic) finish() {
	tr.once.Do(func() {
		tr.stop()
		tr.wg.Wait()
		n := tr.calls.Load()
		tr.t.Logf("%d submissions: %d rejected by TLS, %d on a connection the proxy had closed, %d failed otherwise; "+
			"%d new connections checked against the caBundle: %d failed",
			n, tr.tlsRejected.Load(), tr.proxyClosed.Load(), tr.otherFailed.Load(), tr.probed.Load(), tr.probeFailed.Load())
		if n < 50 || tr.proxyClosed.Load() > n/20 {
			tr.t.Errorf("%d submissions, %d of them on connections the proxy had closed", n, tr.proxyClosed.Load())
		}
	})
}

// tlsError reports whether an admission failure is the webhook's TLS
// handshake (an API server refusing the served certificate).
func tlsError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:") || strings.Contains(msg, "certificate")
}

// closedConnError reports whether a webhook call failed on a connection
// closed under it (after the handshake).
func closedConnError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset by peer") || strings.Contains(msg, "EOF")
}

// secretCA returns the certificate Secret's current CA (the first of
// ca.crt).
func (s *suite) secretCA(ctx context.Context) (*x509.Certificate, error) {
	var secret corev1.Secret
	if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: s.config.Webhook.SecretName}, &secret); err != nil {
		return nil, err
	}
	certs, err := parsePEMCerts(secret.Data[cert.CACertKey])
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// verifyServed opens a new TLS connection to addr and verifies the served
// certificate against the caBundle of each webhook configuration, read
// just before, and returns the certificate.
func (s *suite) verifyServed(ctx context.Context, addr string) (*x509.Certificate, error) {
	var m admissionregistrationv1.MutatingWebhookConfiguration
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	if err := s.k8s.Get(ctx, client.ObjectKey{Name: "defaulter.training-operator.kubeflow.org"}, &m); err != nil {
		return nil, err
	}
	if err := s.k8s.Get(ctx, client.ObjectKey{Name: "validator.training-operator.kubeflow.org"}, &v); err != nil {
		return nil, err
	}
	if len(m.Webhooks) == 0 || len(v.Webhooks) == 0 {
		return nil, errors.New("a webhook configuration lists no webhooks")
	}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // verified below against each bundle
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	leaf := conn.(*tls.Conn).ConnectionState().PeerCertificates[0]
	_ = conn.Close()
	for name, bundle := range map[string][]byte{m.Name: m.Webhooks[0].ClientConfig.CABundle, v.Name: v.Webhooks[0].ClientConfig.CABundle} {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(bundle) {
			return nil, fmt.Errorf("%s: no caBundle", name)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
			return nil, fmt.Errorf("%s's caBundle does not verify it: %w", name, err)
		}
	}
	return leaf, nil
}

// denyWebhookConfigurationUpdates takes update off the chart's rules on
// the webhook configurations and returns what puts it back.
func (s *suite) denyWebhookConfigurationUpdates(t *testing.T) (restore func()) {
	t.Helper()
	var roles rbacv1.ClusterRoleList
	if err := s.k8s.List(t.Context(), &roles); err != nil {
		t.Fatal(err)
	}
	var changed []rbacv1.ClusterRole
	for _, r := range roles.Items {
		orig := r.DeepCopy()
		touched := false
		for i, rule := range r.Rules {
			if slices.Contains(rule.APIGroups, "admissionregistration.k8s.io") && slices.Contains(rule.Verbs, "update") {
				r.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "update" })
				touched = true
			}
		}
		if !touched {
			continue
		}
		if err := s.k8s.Update(t.Context(), &r); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, *orig)
	}
	if len(changed) == 0 {
		t.Fatal("no ClusterRole grants update on the webhook configurations")
	}
	return func() {
		t.Helper()
		for _, orig := range changed {
			var live rbacv1.ClusterRole
			if err := s.k8s.Get(t.Context(), client.ObjectKeyFromObject(&orig), &live); err != nil {
				t.Fatal(err)
			}
			live.Rules = orig.Rules
			if err := s.k8s.Update(t.Context(), &live); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// closingProxy forwards TCP connections to a target and closes them all
// on request, so that its client's next request opens a new TLS
// connection.
type closingProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	conns  map[net.Conn]bool
}

func newClosingProxy(t *testing.T) *closingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &closingProxy{ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		_ = ln.Close()
		p.closeAll()
	})
	go p.serve()
	return p
}

func (p *closingProxy) addr() string { return p.ln.Addr().String() }

func (p *closingProxy) setTarget(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = addr
}

// closeAll closes every forwarded connection.
func (p *closingProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *closingProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *closingProxy) forward(in net.Conn) {
	p.mu.Lock()
	target := p.target
	p.conns[in] = true
	p.mu.Unlock()
	defer in.Close() //nolint:errcheck
	if target == "" {
		return
	}
	out, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	defer out.Close() //nolint:errcheck
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done // either side closed (closeAll closes in)
}

// parsePEMCerts parses every certificate of a PEM bundle.
func parsePEMCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		if block, data = pem.Decode(data); block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no certificate")
	}
	return out, nil
}
