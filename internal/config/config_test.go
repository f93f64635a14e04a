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

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

const header = "apiVersion: config.training-operator.io/v1alpha1\nkind: Configuration\n"

// defaults returns the fully defaulted Configuration, written out by hand so
// that a changed default shows up as a test failure.
func defaults() *configv1alpha1.Configuration {
	return &configv1alpha1.Configuration{
		TypeMeta:       metav1.TypeMeta{APIVersion: "config.training-operator.io/v1alpha1", Kind: "Configuration"},
		EnabledSchemes: []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"},
		GangScheduling: configv1alpha1.GangScheduling{SchedulerPluginsSchedulerName: "scheduler-plugins-scheduler"},
		Controller:     configv1alpha1.Controller{DefaultConcurrency: ptr[int32](16), CacheSyncTimeout: &metav1.Duration{Duration: 10 * time.Minute}, PodTracking: ptr(true)},
		ClientConnection: configv1alpha1.ClientConnection{
			QPS:                ptr[float32](500),
			Burst:              ptr[int32](1000),
			DisableCompression: ptr(true),
		},
		Webhook: configv1alpha1.Webhook{
			Port:           ptr[int32](9443),
			ServiceName:    "training-operator",
			SecretName:     "training-operator-webhook-cert",
			CertDir:        "/tmp/k8s-webhook-server/serving-certs",
			CertManagement: configv1alpha1.CertManagementSelfSigned,
		},
		Metrics: configv1alpha1.Metrics{BindAddress: ":8080"},
		Health:  configv1alpha1.Health{ProbeBindAddress: ":8081"},
		LeaderElection: configv1alpha1.LeaderElection{
			ResourceName:  "1ca428e5.training-operator.kubeflow.org",
			LeaseDuration: &metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline: &metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:   &metav1.Duration{Duration: 2 * time.Second},
		},
		PyTorchInitContainer: configv1alpha1.PyTorchInitContainer{
			Image:        "alpine:3.10",
			TemplateFile: "/etc/config/initContainer.yaml",
			MaxTries:     ptr[int32](100),
		},
		MPI:   configv1alpha1.MPI{KubectlDeliveryImage: "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest"},
		Kueue: configv1alpha1.Kueue{Integration: configv1alpha1.KueueIntegrationBuiltin},
	}
}

func withDefaults(mutate func(*configv1alpha1.Configuration)) *configv1alpha1.Configuration {
	c := defaults()
	mutate(c)
	return c
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDefaults(t *testing.T) {
	got, err := Load("")
	if err != nil {
		t.Fatalf("Load(\"\"): %v", err)
	}
	if diff := cmp.Diff(defaults(), got); diff != "" {
		t.Errorf("Load(\"\") (-want +got):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name string
		// file is the content of the Configuration file; "-" means no file.
		file string
		want *configv1alpha1.Configuration
		// wantErr lists substrings the error must contain; empty means no error.
		wantErr []string
	}{
		{
			name: "header only gives defaults",
			file: header,
			want: defaults(),
		},
		{
			name: "JSON document",
			file: `{"apiVersion":"config.training-operator.io/v1alpha1","kind":"Configuration","namespace":"team-a"}`,
			want: withDefaults(func(c *configv1alpha1.Configuration) { c.Namespace = "team-a" }),
		},
		{
			name: "every field set",
			file: header + `
namespace: kubeflow
enabledSchemes: [pytorchjob, TFJOB]
gangScheduling:
  schedulerName: volcano
  schedulerPluginsSchedulerName: coscheduler
  podGroupAPI: volcano
controller:
  defaultConcurrency: 8
  concurrency:
    pytorchjob: 16
    MPIJob: 2
  cacheSyncTimeout: 30m
  podTracking: false
clientConnection:
  qps: 200.5
  burst: 400
  disableCompression: false
webhook:
  port: 10443
  host: 127.0.0.1
  serviceName: my-webhook
  secretName: my-secret
  certDir: /certs
  certManagement: cert-manager
metrics:
  bindAddress: ":9090"
  secure: true
health:
  probeBindAddress: "0"
leaderElection:
  leaderElect: true
  resourceName: my-lease
  resourceNamespace: kube-system
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 5s
pytorchInitContainer:
  image: busybox:1.36
  templateFile: /tmpl.yaml
  maxTries: 7
mpi:
  kubectlDeliveryImage: example.com/kubectl-delivery:v1
kueue:
  integration: operator
  configFile: /etc/kueue/controller_manager_config.yaml
`,
			want: &configv1alpha1.Configuration{
				TypeMeta:       metav1.TypeMeta{APIVersion: "config.training-operator.io/v1alpha1", Kind: "Configuration"},
				Namespace:      "kubeflow",
				EnabledSchemes: []string{"PyTorchJob", "TFJob"},
				GangScheduling: configv1alpha1.GangScheduling{SchedulerName: "volcano", SchedulerPluginsSchedulerName: "coscheduler", PodGroupAPI: configv1alpha1.PodGroupAPIVolcano},
				Controller: configv1alpha1.Controller{
					DefaultConcurrency: ptr[int32](8),
					Concurrency:        map[string]int32{"PyTorchJob": 16, "MPIJob": 2},
					CacheSyncTimeout:   &metav1.Duration{Duration: 30 * time.Minute},
					PodTracking:        ptr(false),
				},
				ClientConnection: configv1alpha1.ClientConnection{QPS: ptr[float32](200.5), Burst: ptr[int32](400), DisableCompression: ptr(false)},
				Webhook: configv1alpha1.Webhook{
					Port: ptr[int32](10443), Host: "127.0.0.1", ServiceName: "my-webhook", SecretName: "my-secret",
					CertDir: "/certs", CertManagement: configv1alpha1.CertManagementCertManager,
				},
				Metrics: configv1alpha1.Metrics{BindAddress: ":9090", Secure: true},
				Health:  configv1alpha1.Health{ProbeBindAddress: "0"},
				LeaderElection: configv1alpha1.LeaderElection{
					LeaderElect: true, ResourceName: "my-lease", ResourceNamespace: "kube-system",
					LeaseDuration: &metav1.Duration{Duration: 30 * time.Second},
					RenewDeadline: &metav1.Duration{Duration: 20 * time.Second},
					RetryPeriod:   &metav1.Duration{Duration: 5 * time.Second},
				},
				PyTorchInitContainer: configv1alpha1.PyTorchInitContainer{Image: "busybox:1.36", TemplateFile: "/tmpl.yaml", MaxTries: ptr[int32](7)},
				MPI:                  configv1alpha1.MPI{KubectlDeliveryImage: "example.com/kubectl-delivery:v1"},
				Kueue:                configv1alpha1.Kueue{Integration: configv1alpha1.KueueIntegrationOperator, ConfigFile: "/etc/kueue/controller_manager_config.yaml"},
			},
		},
		{
			name: "webhook client URL for a local cluster",
			file: header + "webhook:\n  host: 127.0.0.1\n  clientURL: https://127.0.0.1:9443\n",
			want: withDefaults(func(c *configv1alpha1.Configuration) {
				c.Webhook.Host = "127.0.0.1"
				c.Webhook.ClientURL = "https://127.0.0.1:9443"
			}),
		},
		{
			name:    "unknown top-level and nested fields",
			file:    header + "namespaces: x\nwebhook:\n  prot: 1\n",
			wantErr: []string{`unknown field "namespaces"`, `unknown field "webhook.prot"`},
		},
		{
			name:    "duplicate field",
			file:    header + "namespace: a\nnamespace: b\n",
			wantErr: []string{`"namespace" already set`},
		},
		{
			name:    "duplicate field in JSON",
			file:    `{"apiVersion":"config.training-operator.io/v1alpha1","kind":"Configuration","namespace":"a","namespace":"b"}`,
			wantErr: []string{`duplicate field "namespace"`},
		},
		{
			name:    "wrong apiVersion",
			file:    "apiVersion: config.training-operator.io/v1beta1\nkind: Configuration\n",
			wantErr: []string{`unsupported apiVersion "config.training-operator.io/v1beta1"`},
		},
		{
			name:    "wrong kind",
			file:    "apiVersion: config.training-operator.io/v1alpha1\nkind: JobSetConfiguration\n",
			wantErr: []string{`unsupported kind "JobSetConfiguration"`},
		},
		{
			name:    "missing apiVersion",
			file:    "kind: Configuration\nnamespace: a\n",
			wantErr: []string{"apiVersion is required"},
		},
		{
			name:    "missing kind",
			file:    "apiVersion: config.training-operator.io/v1alpha1\n",
			wantErr: []string{"kind is required"},
		},
		{
			name:    "empty file",
			file:    "",
			wantErr: []string{"apiVersion is required"},
		},
		{
			name:    "wrong type",
			file:    header + "clientConnection:\n  qps: fast\n",
			wantErr: []string{"clientConnection.qps"},
		},
		{
			name:    "invalid values are reported with their paths",
			file:    header + "enabledSchemes: [PyTorchJob, TFJob, FooJob]\nwebhook:\n  port: 70000\nclientConnection:\n  qps: -1\n",
			wantErr: []string{"invalid configuration", "enabledSchemes[2]", "scheme foojob is not supported yet", "webhook.port", "clientConnection.qps"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(writeFile(t, tc.file))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Load succeeded with %+v, want error containing %q", got, tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"))
	if err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("Load(absent) error = %v, want one naming the file", err)
	}
}

func TestNormalizeScheme(t *testing.T) {
	cases := []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"PyTorchJob", "PyTorchJob", true},
		{"pytorchjob", "PyTorchJob", true},
		{"TFJOB", "TFJob", true},
		{"mpijob", "MPIJob", true},
		{"xgboostjob", "XGBoostJob", true},
		{"paddlejob", "PaddleJob", true},
		{"JaxJob", "JAXJob", true},
		{"pytorch", "", false},
		{"", "", false},
		{" TFJob", "", false},
	}
	for _, tc := range cases {
		got, ok := NormalizeScheme(tc.in)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("NormalizeScheme(%q) = (%q, %v), want (%q, %v)", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestConcurrencyAndSchemeEnabled(t *testing.T) {
	cfg := withDefaults(func(c *configv1alpha1.Configuration) {
		c.Controller.DefaultConcurrency = ptr[int32](3)
		c.Controller.Concurrency = map[string]int32{"PyTorchJob": 10}
		c.EnabledSchemes = []string{"PyTorchJob", "TFJob"}
	})
	got := map[string]int{}
	enabled := map[string]bool{}
	for _, k := range []string{"PyTorchJob", "pytorchjob", "TFJob", "JAXJob"} {
		got[k] = Concurrency(cfg, k)
		enabled[k] = SchemeEnabled(cfg, k)
	}
	if diff := cmp.Diff(map[string]int{"PyTorchJob": 10, "pytorchjob": 10, "TFJob": 3, "JAXJob": 3}, got); diff != "" {
		t.Errorf("Concurrency (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"PyTorchJob": true, "pytorchjob": true, "TFJob": true, "JAXJob": false}, enabled); diff != "" {
		t.Errorf("SchemeEnabled (-want +got):\n%s", diff)
	}
	if got := Concurrency(&configv1alpha1.Configuration{}, "TFJob"); got != int(configv1alpha1.DefaultConcurrency) {
		t.Errorf("Concurrency on an undefaulted configuration = %d, want %d", got, configv1alpha1.DefaultConcurrency)
	}
}
