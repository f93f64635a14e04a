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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

func TestValidate(t *testing.T) {
	dns1123LabelMsg := "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	allSchemes := configv1alpha1.AllSchemes()
	cases := []struct {
		name   string
		mutate func(*configv1alpha1.Configuration)
		want   field.ErrorList
	}{
		{
			name:   "defaults are valid",
			mutate: func(*configv1alpha1.Configuration) {},
		},
		{
			name: "valid non-default values",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Namespace = "kubeflow"
				c.EnabledSchemes = []string{"tfjob", "PyTorchJob"}
				c.GangScheduling.SchedulerName = "scheduler-plugins"
				c.GangScheduling.PodGroupAPI = configv1alpha1.PodGroupAPIKubernetes
				c.Controller.Concurrency = map[string]int32{"mpijob": 1, "JAXJob": 100}
				c.Metrics.BindAddress = "0"
				c.Health.ProbeBindAddress = "127.0.0.1:0"
				c.LeaderElection.LeaderElect = true
				c.PyTorchInitContainer.TemplateFile = ""
				c.Webhook.CertManagement = configv1alpha1.CertManagementNone
			},
		},
		{
			name: "unsupported, duplicate and missing schemes",
			mutate: func(c *configv1alpha1.Configuration) {
				c.EnabledSchemes = []string{"PyTorchJob", "TFJob", "FooJob", "pytorchjob"}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("enabledSchemes").Index(2), "FooJob", "scheme foojob is not supported yet"),
				field.Duplicate(field.NewPath("enabledSchemes").Index(3), "pytorchjob"),
			},
		},
		{
			name:   "no scheme enabled",
			mutate: func(c *configv1alpha1.Configuration) { c.EnabledSchemes = nil },
			want:   field.ErrorList{field.Required(field.NewPath("enabledSchemes"), "at least one scheme must be enabled")},
		},
		{
			name:   "namespace must be a DNS label",
			mutate: func(c *configv1alpha1.Configuration) { c.Namespace = "Team_A" },
			want:   field.ErrorList{field.Invalid(field.NewPath("namespace"), "Team_A", dns1123LabelMsg)},
		},
		{
			name: "controller concurrency",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Controller.DefaultConcurrency = ptr[int32](0)
				c.Controller.CacheSyncTimeout = &metav1.Duration{}
				c.Controller.Concurrency = map[string]int32{"PyTorchJob": 0, "pytorchjob": 2, "Job": 1, "TFJob": 3}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("controller", "defaultConcurrency"), int32(0), "must be at least 1"),
				field.Invalid(field.NewPath("controller", "cacheSyncTimeout"), "0s", "must be greater than 0"),
				field.NotSupported(field.NewPath("controller", "concurrency").Key("Job"), "Job", allSchemes),
				field.Invalid(field.NewPath("controller", "concurrency").Key("PyTorchJob"), int32(0), "must be at least 1"),
				field.Duplicate(field.NewPath("controller", "concurrency").Key("pytorchjob"), "pytorchjob (same kind as PyTorchJob)"),
			},
		},
		{
			name: "client connection",
			mutate: func(c *configv1alpha1.Configuration) {
				c.ClientConnection.QPS = ptr[float32](0)
				c.ClientConnection.Burst = nil
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("clientConnection", "qps"), float32(0), "must be greater than 0"),
				field.Required(field.NewPath("clientConnection", "burst"), ""),
			},
		},
		{
			name: "webhook",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Webhook.Port = ptr[int32](65536)
				c.Webhook.ServiceName = "1svc"
				c.Webhook.SecretName = ""
				c.Webhook.CertDir = ""
				c.Webhook.CertManagement = "manual"
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "port"), int32(65536), "must be between 1 and 65535, inclusive"),
				field.Invalid(field.NewPath("webhook", "serviceName"), "1svc", "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
				field.Required(field.NewPath("webhook", "secretName"), ""),
				field.Required(field.NewPath("webhook", "certDir"), ""),
				field.NotSupported(field.NewPath("webhook", "certManagement"), configv1alpha1.CertManagement("manual"), []configv1alpha1.CertManagement{"self-signed", "cert-manager", "none"}),
			},
		},
		{
			name:   "webhook port zero",
			mutate: func(c *configv1alpha1.Configuration) { c.Webhook.Port = ptr[int32](0) },
			want:   field.ErrorList{field.Invalid(field.NewPath("webhook", "port"), int32(0), "must be between 1 and 65535, inclusive")},
		},
		{
			name: "webhook client URL with an IP address and a trailing slash",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Webhook.ClientURL = "https://127.0.0.1:9443/"
			},
		},
		{
			name: "webhook client URL with a host name",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Webhook.ClientURL = "https://host.docker.internal:9443"
			},
		},
		{
			name:   "webhook client URL must use https",
			mutate: func(c *configv1alpha1.Configuration) { c.Webhook.ClientURL = "http://127.0.0.1:9443" },
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "clientURL"), "http://127.0.0.1:9443", `must use the "https" scheme`),
			},
		},
		{
			name:   "webhook client URL must have a host",
			mutate: func(c *configv1alpha1.Configuration) { c.Webhook.ClientURL = "https:///validate" },
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "clientURL"), "https:///validate", "must have a host"),
			},
		},
		{
			name:   "webhook client URL must not have a path",
			mutate: func(c *configv1alpha1.Configuration) { c.Webhook.ClientURL = "https://127.0.0.1:9443/hooks" },
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "clientURL"), "https://127.0.0.1:9443/hooks", "must not have a path, query or fragment"),
			},
		},
		{
			name:   "webhook client URL must not have user info",
			mutate: func(c *configv1alpha1.Configuration) { c.Webhook.ClientURL = "https://me@127.0.0.1:9443" },
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "clientURL"), "https://me@127.0.0.1:9443", "must not have user info"),
			},
		},
		{
			name:   "webhook client URL that does not parse",
			mutate: func(c *configv1alpha1.Configuration) { c.Webhook.ClientURL = "https://[::1" },
			want: field.ErrorList{
				field.Invalid(field.NewPath("webhook", "clientURL"), "https://[::1", "must be a URL"),
			},
		},
		{
			name: "webhook client URL needs self-signed certificates",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Webhook.ClientURL = "https://127.0.0.1:9443"
				c.Webhook.CertManagement = configv1alpha1.CertManagementCertManager
			},
			want: field.ErrorList{
				field.Forbidden(field.NewPath("webhook", "clientURL"), `only supported with certManagement "self-signed"`),
			},
		},
		{
			name: "bind addresses",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Metrics.BindAddress = "8080"
				c.Health.ProbeBindAddress = ":99999"
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("metrics", "bindAddress"), "8080", `must be "0" or host:port, e.g. ":8080"`),
				field.Invalid(field.NewPath("health", "probeBindAddress"), ":99999", "port must be a number between 0 and 65535"),
			},
		},
		{
			name: "metrics and health on the same address",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Health.ProbeBindAddress = ":8080"
			},
			want: field.ErrorList{field.Invalid(field.NewPath("health", "probeBindAddress"), ":8080", "must differ from metrics.bindAddress")},
		},
		{
			name: "leader election needs a resource name",
			mutate: func(c *configv1alpha1.Configuration) {
				c.LeaderElection.LeaderElect = true
				c.LeaderElection.ResourceName = ""
			},
			want: field.ErrorList{field.Required(field.NewPath("leaderElection", "resourceName"), "required when leaderElect is true")},
		},
		{
			name:   "resource name may be empty when leader election is off",
			mutate: func(c *configv1alpha1.Configuration) { c.LeaderElection.ResourceName = "" },
		},
		{
			name: "leader election timings",
			mutate: func(c *configv1alpha1.Configuration) {
				c.LeaderElection.LeaseDuration = &metav1.Duration{Duration: 10 * time.Second}
				c.LeaderElection.RenewDeadline = &metav1.Duration{Duration: 10 * time.Second}
				c.LeaderElection.RetryPeriod = &metav1.Duration{Duration: 9 * time.Second}
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("leaderElection", "leaseDuration"), "10s", "must be greater than renewDeadline"),
				field.Invalid(field.NewPath("leaderElection", "renewDeadline"), "10s", "must be greater than 1.2 times retryPeriod"),
			},
		},
		{
			name: "leader election non-positive durations",
			mutate: func(c *configv1alpha1.Configuration) {
				c.LeaderElection.RetryPeriod = &metav1.Duration{}
				c.LeaderElection.ResourceNamespace = "Kube_System"
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("leaderElection", "resourceNamespace"), "Kube_System", dns1123LabelMsg),
				field.Invalid(field.NewPath("leaderElection", "retryPeriod"), "0s", "must be greater than 0"),
			},
		},
		{
			name: "gang scheduling names",
			mutate: func(c *configv1alpha1.Configuration) {
				c.GangScheduling.SchedulerName = "Volcano"
				c.GangScheduling.SchedulerPluginsSchedulerName = "volcano"
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("gangScheduling", "schedulerName"), "Volcano", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
				field.Invalid(field.NewPath("gangScheduling", "schedulerPluginsSchedulerName"), "volcano", "must not be the Volcano scheduler name"),
			},
		},
		{
			name: "gang scheduling PodGroup API",
			mutate: func(c *configv1alpha1.Configuration) {
				c.GangScheduling.PodGroupAPI = "yunikorn"
			},
			want: field.ErrorList{
				field.NotSupported(field.NewPath("gangScheduling", "podGroupAPI"), configv1alpha1.PodGroupAPI("yunikorn"),
					[]configv1alpha1.PodGroupAPI{"volcano", "scheduler-plugins", "kubernetes"}),
			},
		},
		{
			name: "gang backends enabled",
			mutate: func(c *configv1alpha1.Configuration) {
				c.GangScheduling.PodGroupAPIs = []configv1alpha1.PodGroupAPI{"volcano", "yunikorn", "volcano"}
			},
			want: field.ErrorList{
				field.NotSupported(field.NewPath("gangScheduling", "podGroupAPIs").Index(1), configv1alpha1.PodGroupAPI("yunikorn"),
					[]configv1alpha1.PodGroupAPI{"volcano", "scheduler-plugins", "kubernetes"}),
				field.Duplicate(field.NewPath("gangScheduling", "podGroupAPIs").Index(2), configv1alpha1.PodGroupAPI("volcano")),
			},
		},
		{
			name: "images and tries",
			mutate: func(c *configv1alpha1.Configuration) {
				c.PyTorchInitContainer.Image = ""
				c.PyTorchInitContainer.MaxTries = ptr[int32](-1)
				c.MPI.KubectlDeliveryImage = ""
			},
			want: field.ErrorList{
				field.Required(field.NewPath("pytorchInitContainer", "image"), ""),
				field.Invalid(field.NewPath("pytorchInitContainer", "maxTries"), int32(-1), "must be at least 1"),
				field.Required(field.NewPath("mpi", "kubectlDeliveryImage"), ""),
			},
		},
		{
			name: "undefaulted configuration reports required fields",
			mutate: func(c *configv1alpha1.Configuration) {
				*c = configv1alpha1.Configuration{EnabledSchemes: []string{"TFJob"}}
			},
			want: field.ErrorList{
				field.Required(field.NewPath("gangScheduling", "schedulerPluginsSchedulerName"), ""),
				field.Required(field.NewPath("controller", "defaultConcurrency"), ""),
				field.Required(field.NewPath("controller", "cacheSyncTimeout"), ""),
				field.Required(field.NewPath("clientConnection", "qps"), ""),
				field.Required(field.NewPath("clientConnection", "burst"), ""),
				field.Required(field.NewPath("webhook", "port"), ""),
				field.Required(field.NewPath("webhook", "serviceName"), ""),
				field.Required(field.NewPath("webhook", "secretName"), ""),
				field.Required(field.NewPath("webhook", "certDir"), ""),
				field.NotSupported(field.NewPath("webhook", "certManagement"), configv1alpha1.CertManagement(""), []configv1alpha1.CertManagement{"self-signed", "cert-manager", "none"}),
				field.Required(field.NewPath("metrics", "bindAddress"), `use "0" to disable`),
				field.Required(field.NewPath("health", "probeBindAddress"), `use "0" to disable`),
				field.Required(field.NewPath("leaderElection", "leaseDuration"), ""),
				field.Required(field.NewPath("leaderElection", "renewDeadline"), ""),
				field.Required(field.NewPath("leaderElection", "retryPeriod"), ""),
				field.Required(field.NewPath("pytorchInitContainer", "image"), ""),
				field.Required(field.NewPath("pytorchInitContainer", "maxTries"), ""),
				field.Required(field.NewPath("mpi", "kubectlDeliveryImage"), ""),
				field.NotSupported(field.NewPath("kueue", "integration"), configv1alpha1.KueueIntegration(""), []configv1alpha1.KueueIntegration{
					configv1alpha1.KueueIntegrationBuiltin, configv1alpha1.KueueIntegrationOperator}),
			},
		},
		{
			name: "Kueue integration",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Kueue.Integration = "kueue"
			},
			want: field.ErrorList{
				field.NotSupported(field.NewPath("kueue", "integration"), configv1alpha1.KueueIntegration("kueue"), []configv1alpha1.KueueIntegration{
					configv1alpha1.KueueIntegrationBuiltin, configv1alpha1.KueueIntegrationOperator}),
			},
		},
		{
			name: "Kueue's configuration is read only by the operator's integration",
			mutate: func(c *configv1alpha1.Configuration) {
				c.Kueue.ConfigFile = "/etc/kueue/config.yaml"
			},
			want: field.ErrorList{
				field.Invalid(field.NewPath("kueue", "configFile"), "/etc/kueue/config.yaml", `is read only with integration "operator"`),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Validate(withDefaults(tc.mutate))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}
