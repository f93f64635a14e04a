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

package chart_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

// newCA and newLeaf: a CA, and a serving certificate it signs for the
// Service's name and 127.0.0.1 (the operator is reached by URL here).
func newCA(t *testing.T, name string) *util.KeyPair {
	t.Helper()
	ca, err := util.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func newLeaf(t *testing.T, ca *util.KeyPair) *util.KeyPair {
	t.Helper()
	leaf, err := ca.ServingCert("training-operator.kubeflow.svc", "training-operator.kubeflow.svc")
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// writeLeaf replaces the files as the kubelet refreshes a mounted Secret.
func writeLeaf(t *testing.T, dir string, leaf *util.KeyPair) {
	t.Helper()
	if err := util.WriteTLSFiles(dir, leaf); err != nil {
		t.Fatal(err)
	}
}

// TestCertManagerRenewalKeepsAdmission: the chart's cert-manager chain
// (a long-lived CA Certificate, a CA Issuer signing the serving
// certificate) means a renewal changes the serving certificate and key
// but not the CA bundle cert-manager injects. On a real API server, with
// the operator serving admission from the files cert-manager's Secret
// provides, a renewed leaf under the same CA keeps every admission call
// working; a leaf from a new CA (what the former self-signed leaf with
// rotationPolicy Always did at every renewal) breaks admission until the
// bundle catches up, which shows the check can fail.
func TestCertManagerRenewalKeepsAdmission(t *testing.T) {
	c := startCluster(t)
	ctx := t.Context()
	if err := util.InstallCRDs(ctx, c.admin, filepath.Join(util.RepoRoot(), "config", "crd", "bases")); err != nil {
		t.Fatal(err)
	}
	ca := newCA(t, "training-operator-ca")
	dir := t.TempDir()
	writeLeaf(t, dir, newLeaf(t, ca))

	cfg := util.DefaultConfiguration()
	cfg.Webhook.CertManagement = configv1alpha1.CertManagementCertManager
	op, err := util.StartFullOperator(ctx, util.FullOperatorOptions{RESTConfig: c.admin, Config: cfg, Namespace: "default", ProvidedCertDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })

	// The webhook configurations as installed, with cert-manager's injected
	// bundle (the CA) and the operator reached by URL.
	whs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), cfg.EnabledSchemes)
	if err != nil {
		t.Fatal(err)
	}
	url := func(cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
		u := "https://" + op.WebhookAddr + *cc.Service.Path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: ca.CertPEM}
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	mwc.Name = whs.MutatingName
	for _, w := range whs.Mutating {
		w.ClientConfig = url(w.ClientConfig)
		mwc.Webhooks = append(mwc.Webhooks, w)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	vwc.Name = whs.ValidatingName
	for _, w := range whs.Validating {
		w.ClientConfig = url(w.ClientConfig)
		vwc.Webhooks = append(vwc.Webhooks, w)
	}
	if len(mwc.Webhooks) == 0 || len(vwc.Webhooks) == 0 {
		t.Fatalf("%d mutating and %d validating webhooks", len(mwc.Webhooks), len(vwc.Webhooks))
	}
	for _, o := range []client.Object{mwc, vwc} {
		if err := c.k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.k8s.Delete(context.Background(), o) })
	}

	// The webhooks are called: an invalid job is rejected by the validator.
	bad := testjobs.MakePyTorchJob("bad", "default").Obj()
	if err := wait.PollUntilContextTimeout(ctx, poll, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.k8s.Create(ctx, bad.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "admission webhook"), nil
	}); err != nil {
		t.Fatalf("the validating webhook is not called")
	}
	// Admission calls, one after another, counted by outcome.
	var ok, failed atomic.Int64
	var lastErr atomic.Value
	admit := func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("probe", "default").Master(1).Obj()
		if err := c.k8s.Create(ctx, job, client.DryRunAll); err != nil {
			if ctx.Err() == nil {
				failed.Add(1)
				lastErr.Store(err.Error())
			}
			return
		}
		ok.Add(1)
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		admit(ctx)
		return ok.Load() > 0, nil
	}); err != nil {
		t.Fatalf("admission never worked: %v", lastErr.Load())
	}
	serving := func() *big.Int {
		conn, err := tls.Dial("tcp", op.WebhookAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the served certificate only
		if err != nil {
			return nil
		}
		defer conn.Close() //nolint:errcheck
		return conn.ConnectionState().PeerCertificates[0].SerialNumber
	}
	// The API server keeps its connections to a webhook open, so admission
	// calls alone may never see a new certificate; a fresh connection (a
	// new API server, an idle timeout) verifies it against the bundle the
	// API server holds. Both are counted.
	var installed admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(vwc), &installed); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(installed.Webhooks[0].ClientConfig.CABundle) {
		t.Fatal("no CA bundle in the installed configuration")
	}
	var handshakes, refused atomic.Int64
	handshake := func() {
		conn, err := tls.Dial("tcp", op.WebhookAddr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		if err != nil {
			refused.Add(1)
			lastErr.Store(err.Error())
			return
		}
		handshakes.Add(1)
		_ = conn.Close()
	}
	// renew writes leaf and counts outcomes from just before the write
	// until the operator has served leaf for two seconds.
	renew := func(t *testing.T, leaf *util.KeyPair) (int64, int64) {
		ok.Store(0)
		failed.Store(0)
		handshakes.Store(0)
		refused.Store(0)
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			for runCtx.Err() == nil {
				admit(runCtx)
			}
		})
		wg.Go(func() {
			for runCtx.Err() == nil {
				handshake()
				time.Sleep(20 * time.Millisecond)
			}
		})
		time.Sleep(500 * time.Millisecond) // traffic before the renewal, not a wait for the operator
		writeLeaf(t, dir, leaf)
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			s := serving()
			return s != nil && s.Cmp(leaf.Cert.SerialNumber) == 0, nil
		}); err != nil {
			t.Fatalf("the operator never served the renewed certificate")
		}
		time.Sleep(2 * time.Second) // traffic after the renewal, not a wait for the operator
		stop()
		wg.Wait()
		t.Logf("%d admissions (%d failed), %d fresh handshakes against the installed bundle (%d refused)", ok.Load(), failed.Load(), handshakes.Load(), refused.Load())
		return ok.Load() + handshakes.Load(), failed.Load() + refused.Load()
	}

	okN, failedN := renew(t, newLeaf(t, ca))
	if failedN != 0 || okN == 0 {
		t.Errorf("renewal under the same CA: %d calls failed (%d passed): %v", failedN, okN, lastErr.Load())
	}
	okN, failedN = renew(t, newLeaf(t, newCA(t, "another-ca")))
	t.Logf("a leaf from a new CA (the former self-signed rotation): %d passed, %d failed: %v", okN, failedN, lastErr.Load())
	if failedN == 0 {
		t.Errorf("a leaf from a CA the bundle does not hold did not break admission: the check cannot fail")
	}
}
