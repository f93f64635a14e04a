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

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Default values of the Configuration fields. Where v1 had a flag, the
// default is v1's flag default unless noted.
const (
	// DefaultSchedulerPluginsSchedulerName is the default gangScheduling.schedulerPluginsSchedulerName.
	DefaultSchedulerPluginsSchedulerName = "scheduler-plugins-scheduler"
	// DefaultConcurrency is the default controller.defaultConcurrency (v1: 1 via
	// --controller-threads). Chosen by make bench: bursts create pods faster
	// with 16 workers than with 4 (figures in the README).
	DefaultConcurrency int32 = 16
	// DefaultCacheSyncTimeout is the default controller.cacheSyncTimeout
	// (v1: controller-runtime's 2 minutes).
	DefaultCacheSyncTimeout = 10 * time.Minute
	// DefaultQPS is the default clientConnection.qps (v1: 20 via --kube-api-qps).
	// Chosen by make bench: at 50 a big job's creates are paced by the
	// client, at 500 by the control plane. The apiserver's priority and
	// fairness, not a client-side limit, protects it.
	DefaultQPS float32 = 500
	// DefaultBurst is the default clientConnection.burst (v1: 30 via --kube-api-burst).
	DefaultBurst int32 = 1000
	// DefaultDisableCompression is the default clientConnection.disableCompression
	// (v1 left client-go's default: compressed).
	DefaultDisableCompression = true
	// DefaultWebhookPort is the default webhook.port.
	DefaultWebhookPort int32 = 9443
	// DefaultWebhookServiceName is the default webhook.serviceName.
	DefaultWebhookServiceName = "training-operator"
	// DefaultWebhookSecretName is the default webhook.secretName.
	DefaultWebhookSecretName = "training-operator-webhook-cert"
	// DefaultWebhookCertDir is the default webhook.certDir.
	DefaultWebhookCertDir = "/tmp/k8s-webhook-server/serving-certs"
	// DefaultCertManagement is the default webhook.certManagement.
	DefaultCertManagement = CertManagementSelfSigned
	// DefaultMetricsBindAddress is the default metrics.bindAddress.
	DefaultMetricsBindAddress = ":8080"
	// DefaultHealthProbeBindAddress is the default health.probeBindAddress.
	DefaultHealthProbeBindAddress = ":8081"
	// DefaultLeaderElectionID is the default leaderElection.resourceName.
	DefaultLeaderElectionID = "1ca428e5.training-operator.kubeflow.org"
	// DefaultLeaseDuration is the default leaderElection.leaseDuration.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultRenewDeadline is the default leaderElection.renewDeadline.
	DefaultRenewDeadline = 10 * time.Second
	// DefaultRetryPeriod is the default leaderElection.retryPeriod.
	DefaultRetryPeriod = 2 * time.Second
	// DefaultPyTorchInitContainerImage is the default pytorchInitContainer.image.
	DefaultPyTorchInitContainerImage = "alpine:3.10"
	// DefaultPyTorchInitContainerTemplateFile is the default pytorchInitContainer.templateFile.
	DefaultPyTorchInitContainerTemplateFile = "/etc/config/initContainer.yaml"
	// DefaultPyTorchInitContainerMaxTries is the default pytorchInitContainer.maxTries.
	DefaultPyTorchInitContainerMaxTries int32 = 100
	// DefaultMPIKubectlDeliveryImage is the default mpi.kubectlDeliveryImage.
	DefaultMPIKubectlDeliveryImage = "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest"
)

// SetDefaults_Configuration fills every unset field of cfg with its default.
// It never changes a field that is already set, so it is idempotent.
// Namespace, gangScheduling.schedulerName, webhook.host,
// leaderElection.resourceNamespace and controller.concurrency have no
// default: empty means "all namespaces", "no default gang scheduler", "all
// interfaces", "the operator's namespace" and "no per-kind override".
//
//nolint:revive,staticcheck // Kubernetes defaulter naming convention.
func SetDefaults_Configuration(cfg *Configuration) {
	if cfg.APIVersion == "" {
		cfg.APIVersion = GroupVersion.String()
	}
	if cfg.Kind == "" {
		cfg.Kind = "Configuration"
	}
	if len(cfg.EnabledSchemes) == 0 {
		cfg.EnabledSchemes = AllSchemes()
	}

	if cfg.GangScheduling.SchedulerPluginsSchedulerName == "" {
		cfg.GangScheduling.SchedulerPluginsSchedulerName = DefaultSchedulerPluginsSchedulerName
	}

	if cfg.Controller.DefaultConcurrency == nil {
		cfg.Controller.DefaultConcurrency = ptrTo(DefaultConcurrency)
	}
	if cfg.Controller.PodTracking == nil {
		cfg.Controller.PodTracking = ptrTo(true)
	}
	if cfg.Controller.CacheSyncTimeout == nil {
		cfg.Controller.CacheSyncTimeout = &metav1.Duration{Duration: DefaultCacheSyncTimeout}
	}

	if cfg.ClientConnection.QPS == nil {
		cfg.ClientConnection.QPS = ptrTo(DefaultQPS)
	}
	if cfg.ClientConnection.Burst == nil {
		cfg.ClientConnection.Burst = ptrTo(DefaultBurst)
	}
	if cfg.ClientConnection.DisableCompression == nil {
		cfg.ClientConnection.DisableCompression = ptrTo(DefaultDisableCompression)
	}

	wh := &cfg.Webhook
	if wh.Port == nil {
		wh.Port = ptrTo(DefaultWebhookPort)
	}
	if wh.ServiceName == "" {
		wh.ServiceName = DefaultWebhookServiceName
	}
	if wh.SecretName == "" {
		wh.SecretName = DefaultWebhookSecretName
	}
	if wh.CertDir == "" {
		wh.CertDir = DefaultWebhookCertDir
	}
	if wh.CertManagement == "" {
		wh.CertManagement = DefaultCertManagement
	}

	if cfg.Metrics.BindAddress == "" {
		cfg.Metrics.BindAddress = DefaultMetricsBindAddress
	}
	if cfg.Health.ProbeBindAddress == "" {
		cfg.Health.ProbeBindAddress = DefaultHealthProbeBindAddress
	}

	le := &cfg.LeaderElection
	if le.ResourceName == "" {
		le.ResourceName = DefaultLeaderElectionID
	}
	if le.LeaseDuration == nil {
		le.LeaseDuration = &metav1.Duration{Duration: DefaultLeaseDuration}
	}
	if le.RenewDeadline == nil {
		le.RenewDeadline = &metav1.Duration{Duration: DefaultRenewDeadline}
	}
	if le.RetryPeriod == nil {
		le.RetryPeriod = &metav1.Duration{Duration: DefaultRetryPeriod}
	}

	pic := &cfg.PyTorchInitContainer
	if pic.Image == "" {
		pic.Image = DefaultPyTorchInitContainerImage
	}
	if pic.TemplateFile == "" {
		pic.TemplateFile = DefaultPyTorchInitContainerTemplateFile
	}
	if pic.MaxTries == nil {
		pic.MaxTries = ptrTo(DefaultPyTorchInitContainerMaxTries)
	}

	if cfg.Kueue.Integration == "" {
		cfg.Kueue.Integration = KueueIntegrationBuiltin
	}
	if cfg.MPI.KubectlDeliveryImage == "" {
		cfg.MPI.KubectlDeliveryImage = DefaultMPIKubectlDeliveryImage
	}
}

func ptrTo[T any](v T) *T { return &v }
