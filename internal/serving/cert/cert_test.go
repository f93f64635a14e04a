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

package cert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// clock is a settable time source.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newTestProvider(t *testing.T, c *clock, mutate func(*Options), objs ...client.Object) (*Provider, client.Client) {
	t.Helper()
	opts := Options{
		Namespace:   "kubeflow",
		SecretName:  "training-operator-webhook-cert",
		ServiceName: "training-operator",
		CertDir:     filepath.Join(t.TempDir(), "certs"),
		Now:         c.Now,
	}
	if mutate != nil {
		mutate(&opts)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cl := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	p.reader, p.writer = cl, cl
	return p, cl
}

func getSecret(t *testing.T, cl client.Client) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: "kubeflow", Name: "training-operator-webhook-cert"}, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	certs, err := parseCerts(data)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

func TestNewOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "self-signed needs names", opts: Options{CertDir: "/x"}, wantErr: "namespace, secret name and service name are required"},
		{name: "cert dir", opts: Options{Mode: configv1alpha1.CertManagementNone}, wantErr: "cert dir is required"},
		{name: "unknown mode", opts: Options{Mode: "manual", CertDir: "/x"}, wantErr: `unsupported certManagement "manual"`},
		{name: "cert-manager needs only the dir", opts: Options{Mode: configv1alpha1.CertManagementCertManager, CertDir: "/x"}},
		{
			name:    "client URL must be https",
			opts:    Options{CertDir: "/x", Namespace: "n", SecretName: "s", ServiceName: "svc", ClientURL: "http://127.0.0.1:9443"},
			wantErr: `scheme must be "https"`,
		},
		{
			name:    "client URL without path",
			opts:    Options{CertDir: "/x", Namespace: "n", SecretName: "s", ServiceName: "svc", ClientURL: "https://127.0.0.1:9443/x"},
			wantErr: "path, query and fragment are not allowed",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("New error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestSecretIssueAndKeep(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	p, cl := newTestProvider(t, c, func(o *Options) { o.ClientURL = "https://127.0.0.1:9443" })

	data, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret := getSecret(t, cl)
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret type %q", secret.Type)
	}
	if diff := cmp.Diff(data, secret.Data); diff != "" {
		t.Errorf("returned data differs from the Secret (-returned +secret):\n%s", diff)
	}
	ca := parseCert(t, data[CACertKey])
	if !ca.IsCA || ca.Subject.CommonName != "training-operator-ca" || !slices.Equal(ca.Subject.Organization, []string{"training-operator"}) {
		t.Errorf("CA subject %v, IsCA %v", ca.Subject, ca.IsCA)
	}
	serving := parseCert(t, data[TLSCertKey])
	wantDNS := []string{
		"training-operator.kubeflow.svc", "training-operator", "training-operator.kubeflow", "training-operator.kubeflow.svc.cluster.local",
	}
	if diff := cmp.Diff(wantDNS, serving.DNSNames); diff != "" {
		t.Errorf("DNS names (-want +got):\n%s", diff)
	}
	if len(serving.IPAddresses) != 1 || !serving.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("IP addresses %v, want [127.0.0.1]", serving.IPAddresses)
	}
	if _, err := tls.X509KeyPair(data[TLSCertKey], data[TLSKeyKey]); err != nil {
		t.Errorf("tls.crt and tls.key do not form a key pair: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, name := range append(wantDNS, "127.0.0.1") {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: t0}); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}

	// Nothing to do on the next runs, also a little later.
	rv := secret.ResourceVersion
	c.now = t0.Add(30 * 24 * time.Hour)
	again, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again[TLSCertKey], data[TLSCertKey]) || getSecret(t, cl).ResourceVersion != rv {
		t.Errorf("certificates were reissued without need")
	}
}

func TestSecretRenewal(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	p, cl := newTestProvider(t, c, nil)
	first, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Within CertRenewBefore of the serving certificate's expiry: a new
	// serving certificate from the same CA.
	c.now = t0.Add(DefaultCertValidity - DefaultCertRenewBefore + time.Hour)
	second, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(second[TLSCertKey], first[TLSCertKey]) || bytes.Equal(second[TLSKeyKey], first[TLSKeyKey]) {
		t.Errorf("serving certificate not renewed")
	}
	if !bytes.Equal(second[CACertKey], first[CACertKey]) || !bytes.Equal(second[CAKeyKey], first[CAKeyKey]) {
		t.Errorf("CA changed on a serving certificate renewal")
	}
	if got := parseCert(t, second[TLSCertKey]).NotAfter; !got.Equal(c.now.Add(DefaultCertValidity).Truncate(time.Second)) {
		t.Errorf("renewed certificate expires %s", got)
	}

	// Within CARenewBefore of the CA's expiry: a new CA; the old one stays
	// in ca.crt (after the new one) until it expires.
	c.now = t0.Add(DefaultCAValidity - DefaultCARenewBefore + time.Hour)
	third, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := parseCerts(third[CACertKey])
	if err != nil {
		t.Fatal(err)
	}
	oldCA := parseCert(t, first[CACertKey])
	if len(bundle) != 2 || bundle[0].Equal(oldCA) || !bundle[1].Equal(oldCA) {
		t.Fatalf("CA bundle after rotation has %d certificates, want [new, old]", len(bundle))
	}
	if err := parseCert(t, third[TLSCertKey]).CheckSignatureFrom(bundle[0]); err != nil {
		t.Errorf("serving certificate not signed by the new CA: %v", err)
	}
	if diff := cmp.Diff(third, getSecret(t, cl).Data); diff != "" {
		t.Errorf("Secret not updated (-want +got):\n%s", diff)
	}

	// Once the old CA has expired it is dropped from the bundle.
	c.now = oldCA.NotAfter.Add(time.Hour)
	fourth, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bundle, _ := parseCerts(fourth[CACertKey]); len(bundle) != 1 || !bundle[0].Equal(parseCert(t, third[CACertKey])) {
		t.Errorf("expired CA not dropped from the bundle")
	}
	if !bytes.Equal(fourth[CAKeyKey], third[CAKeyKey]) {
		t.Errorf("CA reissued when only the bundle changed")
	}
}

func TestSecretReissuedForNewNames(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	p, cl := newTestProvider(t, c, nil)
	first, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The same Secret, now with a client URL whose host the certificate lacks.
	p2, _ := newTestProvider(t, c, func(o *Options) { o.ClientURL = "https://webhook.example.com:8443" })
	p2.reader, p2.writer = cl, cl
	second, err := p2.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first[TLSCertKey], second[TLSCertKey]) || !bytes.Equal(first[CACertKey], second[CACertKey]) {
		t.Fatalf("serving certificate not reissued, or CA changed")
	}
	if got := parseCert(t, second[TLSCertKey]).DNSNames; !slices.Contains(got, "webhook.example.com") {
		t.Errorf("DNS names %v lack the URL host", got)
	}
}

func TestSecretExistingEmptyOrGarbage(t *testing.T) {
	ctx := context.Background()
	// v1's kustomize overlays create an empty Secret; extra keys are kept.
	existing := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kubeflow", Name: "training-operator-webhook-cert"},
		Data:       map[string][]byte{CACertKey: []byte("garbage"), "other": []byte("kept")},
	}
	p, cl := newTestProvider(t, &clock{now: t0}, nil, existing)
	data, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := getSecret(t, cl).Data
	if string(got["other"]) != "kept" || !bytes.Equal(got[TLSCertKey], data[TLSCertKey]) {
		t.Errorf("Secret data %v", got)
	}
}

func TestSecretConflictUsesOtherReplicasCertificates(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	// Another replica creates the Secret between our Get and Create.
	other, _ := newTestProvider(t, c, nil)
	otherData, _, err := other.desiredSecretData(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, cl := newTestProvider(t, c, nil)
	raced := false
	wrapped := interceptor.NewClient(cl.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if !raced {
				raced = true
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kubeflow", Name: "training-operator-webhook-cert"}, Data: otherData}
				if err := c.Create(ctx, s); err != nil {
					return err
				}
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, s.Name)
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	p.reader, p.writer = wrapped, wrapped
	data, err := p.ensureSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data[TLSCertKey], otherData[TLSCertKey]) {
		t.Errorf("did not adopt the other replica's certificates")
	}
}

func TestSyncFiles(t *testing.T) {
	c := &clock{now: t0}
	p, _ := newTestProvider(t, c, nil)
	data, _, err := p.desiredSecretData(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.filesMatch(data) {
		t.Fatal("files match before they are written")
	}
	inPlace, err := p.syncFiles(data)
	if err != nil || !inPlace {
		t.Fatalf("syncFiles = %v, %v", inPlace, err)
	}
	for _, name := range []string{TLSCertKey, TLSKeyKey, CACertKey} {
		got, err := os.ReadFile(filepath.Join(p.opts.CertDir, name))
		if err != nil || !bytes.Equal(got, data[name]) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(p.opts.CertDir, CAKeyKey)); !os.IsNotExist(err) {
		t.Errorf("the CA key was written to the cert dir: %v", err)
	}
	if st, err := os.Stat(filepath.Join(p.opts.CertDir, TLSKeyKey)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("tls.key mode %v, %v", st.Mode(), err)
	}
	entries, _ := os.ReadDir(p.opts.CertDir)
	if len(entries) != 3 {
		t.Errorf("cert dir holds %d entries, want 3 (no temporary files)", len(entries))
	}
	if !readOnly(&os.PathError{Op: "open", Path: "x", Err: os.ErrPermission}) {
		t.Errorf("permission errors are not treated as a read-only mount")
	}
}

func TestReadyzAndWaitingServer(t *testing.T) {
	p, _ := newTestProvider(t, &clock{now: t0}, nil)
	inner := newFakeServer()
	check := p.ReadyzCheck(inner)
	if err := check(nil); err == nil || err.Error() != "certificates are not ready" {
		t.Errorf("readyz before certificates = %v", err)
	}
	ws := p.WaitingServer(inner)

	// Stopped before the certificates are ready: Start returns without
	// ever starting the wrapped server (which would record it first).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ws.Start(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("start stopped before the certificates: %v", err)
	}
	if inner.started.Load() {
		t.Fatal("webhook server started before the certificates were ready")
	}

	// Once they are ready the wrapped server starts; a hang is caught by
	// go test's -timeout rather than a deadline of our own.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- ws.Start(ctx) }()
	p.markReady()
	p.markReady() // idempotent
	<-inner.startedC
	if err := check(nil); err == nil || err.Error() != "not started" {
		t.Errorf("readyz after certificates = %v, want the server's checker", err)
	}
	inner.ok.Store(true)
	if err := check(nil); err != nil {
		t.Errorf("readyz = %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestWaitForFiles(t *testing.T) {
	c := &clock{now: t0}
	self, _ := newTestProvider(t, c, nil)
	data, _, err := self.desiredSecretData(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := New(Options{Mode: configv1alpha1.CertManagementCertManager, CertDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, content []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Start reads the files once before it looks at its context, so with a
	// cancelled context each step below proves one look found them unusable.
	stopped, stop := context.WithCancel(context.Background())
	stop()
	for _, step := range []struct {
		name string
		file string
		data []byte
	}{
		{name: "no files"},
		{name: "a certificate without a key", file: TLSCertKey, data: data[TLSCertKey]},
		{name: "a key that is not one", file: TLSKeyKey, data: []byte("garbage")},
	} {
		if step.file != "" {
			write(step.file, step.data)
		}
		if err := p.Start(stopped); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if p.isReady() {
			t.Fatalf("ready with %s", step.name)
		}
	}

	// With the key pair in place a running Start gets ready and returns.
	done := make(chan error)
	go func() { done <- p.Start(context.Background()) }()
	write(TLSKeyKey, data[TLSKeyKey])
	if err := <-done; err != nil {
		t.Error(err)
	}
	if !p.isReady() {
		t.Fatal("Start returned without being ready after the files appeared")
	}
}

func TestReconcileEntries(t *testing.T) {
	cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), []string{"PyTorchJob", "TFJob"})
	if err != nil {
		t.Fatal(err)
	}
	ca := []byte("CA")
	access := func(w *admissionregistrationv1.ValidatingWebhook) entry {
		return entry{w.Name, &w.ClientConfig, &w.NamespaceSelector, &w.TimeoutSeconds}
	}
	installed := func(names ...string) []admissionregistrationv1.ValidatingWebhook {
		var out []admissionregistrationv1.ValidatingWebhook
		for _, n := range names {
			out = append(out, admissionregistrationv1.ValidatingWebhook{
				Name: n,
				ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
					Namespace: "kubeflow", Name: "training-operator", Path: ptr.To("/old"), Port: ptr.To[int32](443),
				}},
				TimeoutSeconds:    ptr.To[int32](5), // kept as installed
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "team-a"}},
			})
		}
		return out
	}
	summary := func(ws []admissionregistrationv1.ValidatingWebhook) []string {
		var out []string
		for _, w := range ws {
			cc := w.ClientConfig
			s := w.Name + " ca=" + string(cc.CABundle)
			if cc.URL != nil {
				s += " url=" + *cc.URL
			}
			if svc := cc.Service; svc != nil {
				s += " svc=" + svc.Namespace + "/" + svc.Name + *svc.Path
				if svc.Port != nil {
					s += ":443"
				}
			}
			out = append(out, s)
		}
		return out
	}

	t.Run("service", func(t *testing.T) {
		p, _ := newTestProvider(t, &clock{now: t0}, func(o *Options) { o.Namespace = "ops" })
		existing := append(installed(
			"validator.mpijob.training-operator.kubeflow.org",
			"validator.pytorchjob.training-operator.kubeflow.org",
		), admissionregistrationv1.ValidatingWebhook{Name: "someone-else.example.com"})
		before := summary(existing)
		got := reconcileEntries(existing, cfgs.Validating, cfgs.Managed, p.clientConfigSetter(ca), access)
		want := []string{
			"validator.pytorchjob.training-operator.kubeflow.org ca=CA svc=ops/training-operator/validate-kubeflow-org-v1-pytorchjob:443",
			"someone-else.example.com ca=",
			"validator.tfjob.training-operator.kubeflow.org ca=CA svc=ops/training-operator/validate-kubeflow-org-v1-tfjob",
		}
		if diff := cmp.Diff(want, summary(got)); diff != "" {
			t.Errorf("webhooks (-want +got):\n%s", diff)
		}
		if got[0].TimeoutSeconds == nil || *got[0].TimeoutSeconds != 5 {
			t.Errorf("installed settings not kept: %+v", got[0])
		}
		// The appended entry (TFJob) takes the installed entries' settings:
		// a namespace-scoped chart admits its namespace only, for every kind.
		if got[2].TimeoutSeconds == nil || *got[2].TimeoutSeconds != 5 ||
			got[2].NamespaceSelector == nil || got[2].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "team-a" {
			t.Errorf("appended entry lacks the installed timeoutSeconds and namespaceSelector: %+v", got[2])
		}
		if diff := cmp.Diff(before, summary(existing)); diff != "" {
			t.Errorf("input modified (-before +after):\n%s", diff)
		}
	})
	t.Run("client URL", func(t *testing.T) {
		p, _ := newTestProvider(t, &clock{now: t0}, func(o *Options) { o.ClientURL = "https://127.0.0.1:9443/" })
		got := reconcileEntries(installed("validator.tfjob.training-operator.kubeflow.org"), cfgs.Validating, cfgs.Managed, p.clientConfigSetter(ca), access)
		want := []string{
			"validator.tfjob.training-operator.kubeflow.org ca=CA url=https://127.0.0.1:9443/validate-kubeflow-org-v1-tfjob",
			"validator.pytorchjob.training-operator.kubeflow.org ca=CA url=https://127.0.0.1:9443/validate-kubeflow-org-v1-pytorchjob",
		}
		if diff := cmp.Diff(want, summary(got)); diff != "" {
			t.Errorf("webhooks (-want +got):\n%s", diff)
		}
	})
}

func TestReconcileWebhookConfigurations(t *testing.T) {
	ctx := context.Background()
	cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), []string{"XGBoostJob"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := webhooks.WebhookConfigurations(kinds.Webhooks(), configv1alpha1.AllSchemes())
	if err != nil {
		t.Fatal(err)
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhooks.MutatingWebhookConfigurationName}, Webhooks: all.Mutating}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhooks.ValidatingWebhookConfigurationName}, Webhooks: all.Validating}
	p, cl := newTestProvider(t, &clock{now: t0}, func(o *Options) {
		o.Webhooks = fromWebhooks(cfgs)
		o.ClientURL = "https://127.0.0.1:9443"
	}, mutating, validating)
	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if !p.isReady() {
		t.Error("not ready after writing the files")
	}
	var gotM admissionregistrationv1.MutatingWebhookConfiguration
	var gotV admissionregistrationv1.ValidatingWebhookConfiguration
	if err := cl.Get(ctx, client.ObjectKey{Name: webhooks.MutatingWebhookConfigurationName}, &gotM); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &gotV); err != nil {
		t.Fatal(err)
	}
	ca := getSecret(t, cl).Data[CACertKey]
	if len(gotM.Webhooks) != 1 || gotM.Webhooks[0].Name != "defaulter.xgboostjob.training-operator.kubeflow.org" ||
		*gotM.Webhooks[0].ClientConfig.URL != "https://127.0.0.1:9443/mutate-kubeflow-org-v1-xgboostjob" ||
		!bytes.Equal(gotM.Webhooks[0].ClientConfig.CABundle, ca) {
		t.Errorf("mutating webhooks %+v", gotM.Webhooks)
	}
	if len(gotV.Webhooks) != 1 || gotV.Webhooks[0].Name != "validator.xgboostjob.training-operator.kubeflow.org" ||
		!bytes.Equal(gotV.Webhooks[0].ClientConfig.CABundle, ca) {
		t.Errorf("validating webhooks %+v", gotV.Webhooks)
	}
	// A second pass changes nothing.
	rvM, rvV := gotM.ResourceVersion, gotV.ResourceVersion
	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	// Fresh objects: a failed Get must not leave the old resourceVersion.
	var againM admissionregistrationv1.MutatingWebhookConfiguration
	var againV admissionregistrationv1.ValidatingWebhookConfiguration
	if err := cl.Get(ctx, client.ObjectKey{Name: webhooks.MutatingWebhookConfigurationName}, &againM); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &againV); err != nil {
		t.Fatal(err)
	}
	if againM.ResourceVersion != rvM || againV.ResourceVersion != rvV {
		t.Errorf("configurations rewritten without changes (resourceVersions %s, %s -> %s, %s)",
			rvM, rvV, againM.ResourceVersion, againV.ResourceVersion)
	}
}

func TestReconcileWithoutConfigurations(t *testing.T) {
	cfgs, _ := webhooks.WebhookConfigurations(kinds.Webhooks(), []string{"PyTorchJob"})
	p, _ := newTestProvider(t, &clock{now: t0}, func(o *Options) { o.Webhooks = fromWebhooks(cfgs) })
	if err := p.reconcile(context.Background()); err != nil {
		t.Errorf("reconcile without installed configurations: %v", err)
	}
	if !p.isReady() {
		t.Error("certificates not ready")
	}
}

// fakeServer is a webhook.Server that records Start; startedC is closed
// on the first Start so tests wait for it instead of polling.
type fakeServer struct {
	webhook.Server
	started, ok atomic.Bool
	startedC    chan struct{}
	once        sync.Once
}

func newFakeServer() *fakeServer { return &fakeServer{startedC: make(chan struct{})} }

func (s *fakeServer) Start(ctx context.Context) error {
	s.started.Store(true)
	s.once.Do(func() { close(s.startedC) })
	<-ctx.Done()
	return nil
}

func (s *fakeServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		if !s.ok.Load() {
			return errors.New("not started")
		}
		return nil
	}
}

// An install ships the Secret and the webhook configurations and grants no
// create: once seen, one deleted is left for a re-install (the error says
// so) instead of being created; the sandbox, which starts without them,
// gets them created.
func TestDeletedObjectsAreNotCreatedAgain(t *testing.T) {
	ctx := context.Background()
	cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), configv1alpha1.AllSchemes())
	if err != nil {
		t.Fatal(err)
	}
	withWebhooks := func(o *Options) { o.Webhooks = fromWebhooks(cfgs) }

	fresh, cl := newTestProvider(t, &clock{now: t0}, withWebhooks)
	if err := fresh.reconcile(ctx); err != nil {
		t.Fatalf("first start without the objects: %v", err)
	}
	getSecret(t, cl)
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	if err := cl.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &validating); err != nil {
		t.Fatalf("validating configuration not created on the first start: %v", err)
	}

	for _, obj := range []client.Object{
		&validating,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kubeflow", Name: "training-operator-webhook-cert"}},
	} {
		if err := cl.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		err := fresh.reconcile(ctx)
		if err == nil || !strings.Contains(err.Error(), "was deleted") || !strings.Contains(err.Error(), "re-install") {
			t.Errorf("after deleting %T: error %v, want one asking for a re-install", obj, err)
		}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T created again (get: %v)", obj, err)
		}
		// Re-installed (empty, as the chart ships it), it is filled again.
		obj.SetResourceVersion("")
		if err := cl.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if err := fresh.reconcile(ctx); err != nil {
			t.Errorf("after re-installing %T: %v", obj, err)
		}
	}
}

// fromWebhooks is what the operator's wiring hands the provider.
func fromWebhooks(c *webhooks.Configurations) *WebhookConfigurations {
	return &WebhookConfigurations{MutatingName: c.MutatingName, ValidatingName: c.ValidatingName,
		Mutating: c.Mutating, Validating: c.Validating, Managed: c.Managed}
}

// TestCARotationPublishesBeforeSwitching follows a CA rotation pass by
// pass: at every step the serving certificate on disk must verify against
// the caBundle in both webhook configurations, also while the bundle
// cannot be written.
func TestCARotationPublishesBeforeSwitching(t *testing.T) {
	ctx := context.Background()
	cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), []string{"PyTorchJob"})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: t0}
	var failBundle atomic.Bool
	p, cl := newTestProvider(t, c, func(o *Options) { o.Webhooks = fromWebhooks(cfgs) })
	// The same store, with updates of the validating configuration failing
	// while failBundle is set.
	p.writer = interceptor.NewClient(cl.(client.WithWatch), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok && failBundle.Load() {
				return apierrors.NewInternalError(errors.New("injected"))
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	served := func() *x509.Certificate {
		t.Helper()
		data, err := os.ReadFile(p.certFile(TLSCertKey))
		if err != nil {
			t.Fatal(err)
		}
		return parseCert(t, data)
	}
	// checkServed fails unless the served leaf verifies against the bundle
	// of both configurations, as an API server opening a connection checks it.
	checkServed := func(step string) {
		t.Helper()
		var m admissionregistrationv1.MutatingWebhookConfiguration
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := cl.Get(ctx, client.ObjectKey{Name: cfgs.MutatingName}, &m); err != nil {
			t.Fatal(err)
		}
		if err := cl.Get(ctx, client.ObjectKey{Name: cfgs.ValidatingName}, &v); err != nil {
			t.Fatal(err)
		}
		leaf := served()
		for _, bundle := range [][]byte{m.Webhooks[0].ClientConfig.CABundle, v.Webhooks[0].ClientConfig.CABundle} {
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(bundle)
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: c.now, DNSName: "training-operator.kubeflow.svc"}); err != nil {
				t.Fatalf("%s: the served certificate fails the published caBundle: %v", step, err)
			}
		}
	}

	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkServed("first issue")
	// A month before the CA is due: a fresh leaf from the old CA.
	due := t0.Add(DefaultCAValidity - DefaultCARenewBefore)
	c.now = due.Add(-30 * 24 * time.Hour)
	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkServed("leaf renewed")
	oldCA := parseCert(t, getSecret(t, cl).Data[CACertKey])
	oldLeaf := served()

	// The CA is due; the bundle cannot be written: the new CA is in the
	// Secret, the old leaf is still served.
	c.now = due.Add(time.Hour)
	failBundle.Store(true)
	if err := p.reconcile(ctx); err == nil {
		t.Fatal("no error from a failed bundle write")
	}
	checkServed("bundle write failed")
	if !served().Equal(oldLeaf) {
		t.Fatal("the serving certificate switched although the new CA was not published")
	}
	bundle, _ := parseCerts(getSecret(t, cl).Data[CACertKey])
	if len(bundle) != 2 || !bundle[1].Equal(oldCA) {
		t.Fatalf("Secret's ca.crt has %d certificates, want [new, old]", len(bundle))
	}
	newCA := bundle[0]

	// Written: the bundle holds both, the old leaf is still served until
	// BundlePropagation has passed.
	failBundle.Store(false)
	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkServed("bundle written")
	if !served().Equal(oldLeaf) {
		t.Fatal("the serving certificate switched as soon as the bundle was written")
	}
	if want := c.now.Add(DefaultBundlePropagation); !p.switchAt.Equal(want) {
		t.Errorf("next pass at %s, want %s", p.switchAt, want)
	}

	c.now = c.now.Add(DefaultBundlePropagation)
	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkServed("switched")
	if err := served().CheckSignatureFrom(newCA); err != nil {
		t.Fatalf("the serving certificate did not switch to the new CA: %v", err)
	}
	if !p.switchAt.IsZero() {
		t.Errorf("a switch still pending at %s", p.switchAt)
	}

	// The old CA leaves the bundle last, once expired.
	c.now = oldCA.NotAfter.Add(time.Second)
	if err := p.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkServed("old CA dropped")
	if bundle, _ := parseCerts(getSecret(t, cl).Data[CACertKey]); len(bundle) != 1 || !bundle[0].Equal(newCA) {
		t.Errorf("Secret's ca.crt has %d certificates, want the new CA alone", len(bundle))
	}
}

// TestBundleWriteConflictsAreAnError: a bundle is published only if it
// was written, also when every attempt met a conflict.
func TestBundleWriteConflictsAreAnError(t *testing.T) {
	cfgs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), []string{"PyTorchJob"})
	if err != nil {
		t.Fatal(err)
	}
	p, cl := newTestProvider(t, &clock{now: t0}, func(o *Options) { o.Webhooks = fromWebhooks(cfgs) })
	if err := p.reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.writer = interceptor.NewClient(cl.(client.WithWatch), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
				return apierrors.NewConflict(schema.GroupResource{Resource: "validatingwebhookconfigurations"}, obj.GetName(), errors.New("injected"))
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	if err := p.reconcileWebhookConfigurations(context.Background(), []byte("another bundle")); !apierrors.IsConflict(err) {
		t.Errorf("after %d conflicting writes: error %v, want the conflict", maxWriteAttempts, err)
	}
}
