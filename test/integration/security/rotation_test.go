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

	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var submitted, tlsRejected, proxyClosed, otherFailed, probed, probeFailed atomic.Int64
	wg.Go(func() {
		// The client: a dry-run create through the API server.
		tick := time.NewTicker(submitPeriod)
		defer tick.Stop()
		for ctx.Err() == nil {
			// A new TLS connection for this submission: the proxy is idle
			// now (the only client is this loop), and the API server drops
			// a closed connection from its pool as soon as it reads EOF.
			proxy.closeAll()
			time.Sleep(20 * time.Millisecond)
			err := s.k8s.Create(ctx, job.DeepCopy(), client.DryRunAll)
			submitted.Add(1)
			switch {
			case err == nil:
			case ctx.Err() != nil:
				submitted.Add(-1)
			case tlsError(err):
				tlsRejected.Add(1)
				t.Errorf("submission rejected by TLS: %v", err)
			case closedConnError(err):
				// The API server reused a connection the proxy closed before
				// it read the EOF: the proxy's doing, not a handshake.
				proxyClosed.Add(1)
				t.Logf("submission on a connection the proxy had closed: %v", err)
			default:
				otherFailed.Add(1)
				t.Errorf("submission failed: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	})
	var servedMu sync.Mutex
	var served *x509.Certificate
	wg.Go(func() {
		// A new connection checked against the published caBundle, every
		// 100 ms as well.
		tick := time.NewTicker(submitPeriod)
		defer tick.Stop()
		for ctx.Err() == nil {
			leaf, err := s.verifyServed(ctx, op.WebhookAddr)
			if ctx.Err() != nil {
				return
			}
			probed.Add(1)
			if err != nil {
				probeFailed.Add(1)
				t.Errorf("served certificate: %v", err)
			} else {
				servedMu.Lock()
				served = leaf
				servedMu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	})
	var once sync.Once
	finish := func() {
		once.Do(func() {
			stop()
			wg.Wait()
			t.Logf("%d submissions: %d rejected by TLS, %d on a connection the proxy had closed, %d failed otherwise; "+
				"%d new connections checked against the caBundle: %d failed",
				submitted.Load(), tlsRejected.Load(), proxyClosed.Load(), otherFailed.Load(), probed.Load(), probeFailed.Load())
		})
	}
	defer finish()

	// waitServedFrom waits until the served certificate is signed by ca.
	waitServedFrom := func(ca *x509.Certificate, what string) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(t.Context(), poll, timeout, true, func(context.Context) (bool, error) {
			servedMu.Lock()
			defer servedMu.Unlock()
			return served != nil && served.CheckSignatureFrom(ca) == nil, nil
		}); err != nil {
			t.Fatalf("%s: the served certificate is not signed by the new CA: %v", what, err)
		}
	}
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
	waitServedFrom(ca1, "first rotation")

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
	waitServedFrom(ca2, "rotation after failed bundle writes")

	finish()
	if n := submitted.Load(); n < 100 || proxyClosed.Load() > n/20 {
		t.Errorf("%d submissions during the rotations, %d of them on closed connections", n, proxyClosed.Load())
	}
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
