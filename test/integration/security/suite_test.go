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

// Package security_test runs the operator in-process on a real local
// control plane (harness/cluster) with nothing but the RBAC the Helm chart
// installs (every API call impersonates the chart's ServiceAccount) and
// checks its security properties: the secure metrics endpoint
// authenticates and authorizes callers, the webhook and metrics servers
// refuse TLS below 1.2, and the generated RBAC (config/rbac/role.yaml) is
// exactly what a workload exercising every feature uses.
package security_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

const (
	timeout = 90 * time.Second
	poll    = 250 * time.Millisecond
	// releaseNamespace is where the chart is installed (ServiceAccount,
	// certificate Secret, Lease).
	releaseNamespace = "kubeflow"
	serviceAccount   = "training-operator"
)

// suite is one local cluster with the chart's RBAC installed.
type suite struct {
	// mode is the chart's webhook.certManagement: self-signed (the
	// operator issues its certificate and injects the CA bundle) or
	// cert-manager (the suite writes what cert-manager and its CA injector
	// would).
	mode     configv1alpha1.CertManagement
	certDir  string        // cert-manager mode: the mounted Secret's files
	ca       *util.KeyPair // cert-manager mode: the CA Issuer's certificate
	env      *cluster.Cluster
	admin    *rest.Config
	k8s      client.Client
	chart    []*unstructured.Unstructured
	config   *configv1alpha1.Configuration
	recorder *recorder
	logs     *util.LogBuffer
	// webhookURL, when set, is where injectAsCAInjector points the webhook
	// configurations instead of the operator's address (a proxy).
	webhookURL string
}

func start(t *testing.T, mode configv1alpha1.CertManagement) *suite {
	t.Helper()
	return startWith(t, mode)
}

// startWith is start with more helm template arguments (e.g. --set).
func startWith(t *testing.T, mode configv1alpha1.CertManagement, helmArgs ...string) *suite {
	t.Helper()
	// Volcano and scheduler-plugins are stood in for by kube-scheduler
	// profiles; the native Workload/PodGroup API needs its feature gate.
	env := util.StartTestCluster(t, cluster.Options{
		Nodes:          2,
		SchedulerNames: []string{gang.VolcanoSchedulerName, configv1alpha1.DefaultSchedulerPluginsSchedulerName},
		FeatureGates:   "GenericWorkload=true",
		RuntimeConfig:  "scheduling.k8s.io/v1beta1=true",
	}, filepath.Join(util.RepoRoot(), "config", "crd", "external"))
	s := &suite{mode: mode, recorder: newRecorder(), logs: util.CaptureOperatorLogs(t, 200)}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	s.env = env
	s.admin = env.RESTConfig()
	s.admin.QPS, s.admin.Burst = 200, 400
	scheme := util.Scheme()
	var err error
	if err := gang.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if s.k8s, err = client.New(s.admin, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	s.installChart(t, ctx, helmArgs...)
	return s
}

// installChart renders the chart (defaults plus secure metrics) and creates
// what the operator's permissions and inputs come from: the
// ServiceAccount, its (Cluster)Roles and bindings, the empty certificate
// Secret, the webhook configurations and the ConfigMap. The Deployment and
// Service are left out: the operator runs in this process.
func (s *suite) installChart(t *testing.T, ctx context.Context, helmArgs ...string) {
	t.Helper()
	if err := s.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace}}); err != nil {
		t.Fatal(err)
	}
	out := helm(t, append([]string{"template", "training-operator", filepath.Join(util.RepoRoot(), "charts", "training-operator"),
		"--namespace", releaseNamespace, "--set", "metrics.secure=true", "--set", "webhook.certManagement=" + string(s.mode)}, helmArgs...)...)
	objs, err := parseManifests(out)
	if err != nil {
		t.Fatal(err)
	}
	s.chart = objs
	install := map[string]bool{
		"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
		"Secret": true, "ConfigMap": true, "MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	}
	for _, o := range objs {
		if !install[o.GetKind()] {
			continue
		}
		if err := s.k8s.Create(ctx, o.DeepCopy()); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "training-operator-config") {
			data, _, _ := unstructured.NestedString(o.Object, "data", "config.yaml")
			if s.config, err = config.Decode([]byte(data)); err != nil {
				t.Fatalf("the chart's configuration: %v", err)
			}
			// As config.Build does after decoding.
			configv1alpha1.SetDefaults_Configuration(s.config)
		}
	}
	if s.config == nil {
		t.Fatal("the chart has no training-operator-config ConfigMap")
	}
	if !s.config.Metrics.Secure {
		t.Fatal("metrics.secure=true did not reach the chart's configuration")
	}
	if s.config.Webhook.CertManagement != s.mode {
		t.Fatalf("the chart's configuration has certManagement %q, want %q", s.config.Webhook.CertManagement, s.mode)
	}
	if s.mode == configv1alpha1.CertManagementCertManager {
		s.issueAsCertManager(t, ctx)
	}
}

// issueAsCertManager writes what cert-manager makes from the chart's
// Issuers and Certificates: a CA, a serving certificate it signs for the
// Service, and the Secret holding both (mounted into the operator's
// certificate directory).
func (s *suite) issueAsCertManager(t *testing.T, ctx context.Context) {
	t.Helper()
	var err error
	if s.ca, err = util.NewCA("training-operator-ca"); err != nil {
		t.Fatal(err)
	}
	svc := fmt.Sprintf("%s.%s.svc", s.config.Webhook.ServiceName, releaseNamespace)
	leaf, err := s.ca.ServingCert(svc, svc)
	if err != nil {
		t.Fatal(err)
	}
	s.certDir = t.TempDir()
	if err := util.WriteTLSFiles(s.certDir, leaf); err != nil {
		t.Fatal(err)
	}
	data := map[string][]byte{"ca.crt": s.ca.CertPEM}
	for _, f := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if data[f], err = os.ReadFile(filepath.Join(s.certDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: s.config.Webhook.SecretName},
		Type: corev1.SecretTypeTLS, Data: data}
	if err := s.k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
}

// injectAsCAInjector does what cert-manager's CA injector does for the
// chart's webhook configurations (the CA bundle), and points them at the
// in-process operator by URL, as the operator does itself when it manages
// its certificates.
func (s *suite) injectAsCAInjector(t *testing.T, op *util.FullOperator) {
	t.Helper()
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, o := range s.chart {
			if o.GetKind() != kind {
				continue
			}
			if _, ok := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; !ok {
				t.Fatalf("%s %s lacks the cert-manager.io/inject-ca-from annotation", kind, o.GetName())
			}
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(o.GroupVersionKind())
			if err := s.k8s.Get(t.Context(), client.ObjectKeyFromObject(o), live); err != nil {
				t.Fatal(err)
			}
			// From the chart's webhooks: the live ones already point at an
			// earlier operator's URL.
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			base := "https://" + op.WebhookAddr
			if s.webhookURL != "" {
				base = s.webhookURL
			}
			for i, h := range hooks {
				m := h.(map[string]any)
				path, _, _ := unstructured.NestedString(m, "clientConfig", "service", "path")
				m["clientConfig"] = map[string]any{
					"url":      base + path,
					"caBundle": base64.StdEncoding.EncodeToString(s.ca.CertPEM),
				}
				hooks[i] = m
			}
			if err := unstructured.SetNestedSlice(live.Object, hooks, "webhooks"); err != nil {
				t.Fatal(err)
			}
			if err := s.k8s.Update(t.Context(), live); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// operatorConfig is the chart's ServiceAccount identity, every request
// recorded.
func (s *suite) operatorConfig() *rest.Config {
	c := rest.CopyConfig(s.admin)
	c.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", releaseNamespace, serviceAccount)}
	c.QPS, c.Burst = *s.config.ClientConnection.QPS, int(*s.config.ClientConnection.Burst)
	c.Wrap(s.recorder.wrap)
	return c
}

// startOperator runs the operator as main.go does with the chart's
// configuration, as the chart's ServiceAccount, with leader election.
func (s *suite) startOperator(t *testing.T, change func(*configv1alpha1.Configuration)) *util.FullOperator {
	t.Helper()
	return s.startOperatorElected(t, change, true)
}

// startOperatorElected is startOperator with leader election on or off.
func (s *suite) startOperatorElected(t *testing.T, change func(*configv1alpha1.Configuration), leaderElection bool) *util.FullOperator {
	t.Helper()
	return s.startOperatorWith(t, change, func(o *util.FullOperatorOptions) { o.LeaderElection = leaderElection })
}

// startOperatorWith is startOperator with the harness's options changed.
func (s *suite) startOperatorWith(t *testing.T, change func(*configv1alpha1.Configuration), opts func(*util.FullOperatorOptions)) *util.FullOperator {
	t.Helper()
	cfg := s.config.DeepCopy()
	if change != nil {
		change(cfg)
	}
	o := util.FullOperatorOptions{
		RESTConfig:       s.operatorConfig(),
		Config:           cfg,
		Namespace:        releaseNamespace,
		LeaderElection:   true,
		MetricsSecure:    cfg.Metrics.Secure,
		CertResyncPeriod: 2 * time.Second,
		ProvidedCertDir:  s.certDir,
	}
	if opts != nil {
		opts(&o)
	}
	op, err := util.StartFullOperator(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := op.Stop(); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})
	if s.mode == configv1alpha1.CertManagementCertManager {
		s.injectAsCAInjector(t, op)
	}
	return op
}

// waitWebhooksReachable waits until a dry-run create passes both webhooks.
func (s *suite) waitWebhooksReachable(t *testing.T, obj client.Object) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(t.Context(), poll, timeout, true, func(ctx context.Context) (bool, error) {
		last = s.k8s.Create(ctx, obj.DeepCopyObject().(client.Object), client.DryRunAll)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("webhooks not reachable: %v (last: %v)", err, last)
	}
}

// helm runs the helm binary built by hack/controlplane.sh.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if _, err := os.Stat(filepath.Join(dir, "helm")); dir == "" || err != nil {
		out, err := exec.Command(filepath.Join(util.RepoRoot(), "hack", "controlplane.sh"), "--print-dir").Output()
		if err != nil {
			t.Fatalf("hack/controlplane.sh --print-dir: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	home := t.TempDir()
	cmd := exec.Command(filepath.Join(dir, "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// parseManifests splits a multi-document YAML stream into objects.
func parseManifests(data string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// chartObject returns the rendered object of a kind and name.
func (s *suite) chartObject(kind, name string) *unstructured.Unstructured {
	for _, o := range s.chart {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// httpStatus performs a request and returns its status code and body.
func httpStatus(c *http.Client, req *http.Request) (int, string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close() //nolint:errcheck
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(body), nil
}
