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
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// parse binds Flags on a fresh FlagSet and parses args.
func parse(t *testing.T, args []string) (*Flags, map[string]bool, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := &Flags{}
	f.Bind(fs)
	err := fs.Parse(args)
	return f, ExplicitFlags(fs), err
}

const fileWithEverything = header + `
namespace: from-file
enabledSchemes: [MPIJob]
gangScheduling:
  schedulerName: volcano
controller:
  defaultConcurrency: 8
  concurrency:
    PyTorchJob: 16
clientConnection:
  qps: 10
  burst: 20
webhook:
  port: 10443
  serviceName: file-svc
  secretName: file-secret
metrics:
  bindAddress: ":9090"
health:
  probeBindAddress: ":9091"
leaderElection:
  leaderElect: true
  resourceName: file-lease
pytorchInitContainer:
  image: file-image
  templateFile: /file-template
  maxTries: 5
mpi:
  kubectlDeliveryImage: file-delivery
`

func fileConfig() *configv1alpha1.Configuration {
	return withDefaults(func(c *configv1alpha1.Configuration) {
		c.Namespace = "from-file"
		c.EnabledSchemes = []string{"MPIJob"}
		c.GangScheduling.SchedulerName = "volcano"
		c.Controller.DefaultConcurrency = ptr[int32](8)
		c.Controller.Concurrency = map[string]int32{"PyTorchJob": 16}
		c.ClientConnection.QPS = ptr[float32](10)
		c.ClientConnection.Burst = ptr[int32](20)
		c.Webhook.Port = ptr[int32](10443)
		c.Webhook.ServiceName = "file-svc"
		c.Webhook.SecretName = "file-secret"
		c.Metrics.BindAddress = ":9090"
		c.Health.ProbeBindAddress = ":9091"
		c.LeaderElection.LeaderElect = true
		c.LeaderElection.ResourceName = "file-lease"
		c.PyTorchInitContainer.Image = "file-image"
		c.PyTorchInitContainer.TemplateFile = "/file-template"
		c.PyTorchInitContainer.MaxTries = ptr[int32](5)
		c.MPI.KubectlDeliveryImage = "file-delivery"
	})
}

func TestBuildFlagPrecedence(t *testing.T) {
	cases := []struct {
		name string
		// file is the Configuration file content; empty means no --config.
		file    string
		args    []string
		env     string
		want    *configv1alpha1.Configuration
		wantErr string
	}{
		{
			name: "no file, no flags: defaults",
			want: defaults(),
		},
		{
			name: "file values win over flag defaults",
			file: fileWithEverything,
			want: fileConfig(),
		},
		{
			name: "every v1 flag overrides the file",
			file: fileWithEverything,
			args: []string{
				"--metrics-bind-address=:18080",
				"--health-probe-bind-address=:18081",
				"--pprof-bind-address=127.0.0.1:18082",
				"--leader-elect=false",
				"--leader-election-id=flag-lease",
				"--enable-scheme=tfjob", "--enable-scheme=PyTorchJob", "--enable-scheme=TFJOB",
				"--gang-scheduler-name=scheduler-plugins",
				"--namespace=from-flag",
				"--controller-threads=2",
				"--kube-api-qps=20",
				"--kube-api-burst=30",
				"--pytorch-init-container-image=flag-image",
				"--pytorch-init-container-template-file=/flag-template",
				"--pytorch-init-container-max-tries=9",
				"--mpi-kubectl-delivery-image=flag-delivery",
				"--webhook-server-port=19443",
				"--webhook-service-name=flag-svc",
				"--webhook-secret-name=flag-secret",
				"--pod-tracking=false",
			},
			want: withDefaults(func(c *configv1alpha1.Configuration) {
				c.Namespace = "from-flag"
				c.EnabledSchemes = []string{"TFJob", "PyTorchJob"}
				c.GangScheduling.SchedulerName = "scheduler-plugins"
				c.Controller.DefaultConcurrency = ptr[int32](2)
				c.ClientConnection.QPS = ptr[float32](20)
				c.ClientConnection.Burst = ptr[int32](30)
				c.Webhook.Port = ptr[int32](19443)
				c.Webhook.ServiceName = "flag-svc"
				c.Webhook.SecretName = "flag-secret"
				c.Metrics.BindAddress = ":18080"
				c.Health.ProbeBindAddress = ":18081"
				c.Health.PprofBindAddress = "127.0.0.1:18082"
				c.LeaderElection.ResourceName = "flag-lease"
				c.PyTorchInitContainer.Image = "flag-image"
				c.PyTorchInitContainer.TemplateFile = "/flag-template"
				c.PyTorchInitContainer.MaxTries = ptr[int32](9)
				c.MPI.KubectlDeliveryImage = "flag-delivery"
				c.Controller.PodTracking = ptr(false)
			}),
		},
		{
			name: "a flag set to its default value still overrides the file",
			file: fileWithEverything,
			args: []string{"--kube-api-qps=500", "--webhook-server-port=9443", "--metrics-bind-address=:8080"},
			want: func() *configv1alpha1.Configuration {
				c := fileConfig()
				c.ClientConnection.QPS = ptr[float32](500)
				c.Webhook.Port = ptr[int32](9443)
				c.Metrics.BindAddress = ":8080"
				return c
			}(),
		},
		{
			name: "KUBEFLOW_NAMESPACE overrides the file",
			file: fileWithEverything,
			env:  "from-env",
			want: func() *configv1alpha1.Configuration {
				c := fileConfig()
				c.Namespace = "from-env"
				return c
			}(),
		},
		{
			name: "--namespace overrides KUBEFLOW_NAMESPACE",
			env:  "from-env",
			args: []string{"--namespace=from-flag"},
			want: withDefaults(func(c *configv1alpha1.Configuration) { c.Namespace = "from-flag" }),
		},
		{
			name: "explicitly empty --namespace means all namespaces",
			file: fileWithEverything,
			env:  "from-env",
			args: []string{"--namespace="},
			want: func() *configv1alpha1.Configuration {
				c := fileConfig()
				c.Namespace = ""
				return c
			}(),
		},
		{
			name: "--config is read",
			file: header + "namespace: x\n",
			want: withDefaults(func(c *configv1alpha1.Configuration) { c.Namespace = "x" }),
		},
		{
			name:    "unknown --enable-scheme is a flag error with v1's text",
			args:    []string{"--enable-scheme=FooJob"},
			wantErr: "scheme foojob is not supported yet",
		},
		{
			name:    "flag values are validated",
			args:    []string{"--leader-elect", "--leader-election-id=", "--controller-threads=0"},
			wantErr: "leaderElection.resourceName: Required value",
		},
		{
			name:    "an out-of-range port is rejected, not wrapped",
			args:    []string{"--webhook-server-port=4294977739"},
			wantErr: "webhook.port: Invalid value: 2147483647",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvKubeflowNamespace, tc.env)
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config=" + writeFile(t, tc.file)}, args...)
			}
			f, set, err := parse(t, args)
			var got *configv1alpha1.Configuration
			if err == nil {
				got, err = Build(f.ConfigFile, f, set)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindDefaultsMatchConfigurationDefaults(t *testing.T) {
	t.Setenv(EnvKubeflowNamespace, "")
	f, set, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 0 {
		t.Errorf("ExplicitFlags without arguments = %v, want none", set)
	}
	// Applying every flag at its default must not change a defaulted configuration.
	all := map[string]bool{}
	fs := flag.NewFlagSet("names", flag.ContinueOnError)
	(&Flags{}).Bind(fs)
	fs.VisitAll(func(fl *flag.Flag) { all[fl.Name] = true })
	got := defaults()
	f.Apply(got, all)
	// An empty --enable-scheme leaves the defaults (all schemes) in place.
	if diff := cmp.Diff(defaults(), got); diff != "" {
		t.Errorf("Apply(all flags at default) (-want +got):\n%s", diff)
	}
	wantNames := []string{
		"config", "controller-threads", "enable-scheme", "gang-scheduler-name", "health-probe-bind-address",
		"kube-api-burst", "kube-api-qps", "kueue-config", "kueue-integration", "leader-elect", "leader-election-id", "metrics-bind-address",
		"mpi-kubectl-delivery-image", "namespace", "pod-tracking", "pprof-bind-address", "pytorch-init-container-image",
		"pytorch-init-container-max-tries", "pytorch-init-container-template-file", "webhook-secret-name",
		"webhook-server-port", "webhook-service-name",
	}
	var names []string
	for n := range all {
		names = append(names, n)
	}
	if diff := cmp.Diff(wantNames, names, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("flag names (-want +got):\n%s", diff)
	}
}

func TestSchemeList(t *testing.T) {
	var s SchemeList
	for _, v := range []string{"pytorchjob", "TFJob", "PYTORCHJOB", "jaxjob"} {
		if err := s.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if diff := cmp.Diff("PyTorchJob,TFJob,JAXJob", s.String()); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
	err := s.Set("MXJob")
	if diff := cmp.Diff("scheme mxjob is not supported yet", err.Error()); diff != "" {
		t.Errorf("Set(MXJob) error (-want +got):\n%s", diff)
	}
}
