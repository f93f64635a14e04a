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
	"errors"
	"flag"
	"math"
	"os"
	"slices"
	"strings"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// EnvKubeflowNamespace is the environment variable that provides the default
// of --namespace, as in v1.
const EnvKubeflowNamespace = "KUBEFLOW_NAMESPACE"

// Names of the command-line flags: v1's, but for FlagConfig, the Kueue flags
// and FlagPodTracking.
const (
	FlagConfig                           = "config"
	FlagMetricsBindAddress               = "metrics-bind-address"
	FlagHealthProbeBindAddress           = "health-probe-bind-address"
	FlagPprofBindAddress                 = "pprof-bind-address"
	FlagLeaderElect                      = "leader-elect"
	FlagLeaderElectionID                 = "leader-election-id"
	FlagEnableScheme                     = "enable-scheme"
	FlagGangSchedulerName                = "gang-scheduler-name"
	FlagNamespace                        = "namespace"
	FlagControllerThreads                = "controller-threads"
	FlagKubeAPIQPS                       = "kube-api-qps"
	FlagKubeAPIBurst                     = "kube-api-burst"
	FlagPyTorchInitContainerImage        = "pytorch-init-container-image"
	FlagPyTorchInitContainerTemplateFile = "pytorch-init-container-template-file"
	FlagPyTorchInitContainerMaxTries     = "pytorch-init-container-max-tries"
	FlagMPIKubectlDeliveryImage          = "mpi-kubectl-delivery-image"
	FlagWebhookServerPort                = "webhook-server-port"
	FlagWebhookServiceName               = "webhook-service-name"
	FlagWebhookSecretName                = "webhook-secret-name"
	FlagKueueIntegration                 = "kueue-integration"
	FlagKueueConfig                      = "kueue-config"
	FlagPodTracking                      = "pod-tracking"
)

// Flags holds the values of the operator's command-line flags. Bind
// registers them; Apply copies the ones given on the command line onto a
// Configuration, so a flag overrides the file only when it is set explicitly.
type Flags struct {
	// ConfigFile is the path of the Configuration file (--config); empty
	// means defaults only.
	ConfigFile string

	MetricsBindAddress               string
	HealthProbeBindAddress           string
	PprofBindAddress                 string
	LeaderElect                      bool
	LeaderElectionID                 string
	EnabledSchemes                   SchemeList
	GangSchedulerName                string
	Namespace                        string
	ControllerThreads                int
	KubeAPIQPS                       float64
	KubeAPIBurst                     int
	PyTorchInitContainerImage        string
	PyTorchInitContainerTemplateFile string
	PyTorchInitContainerMaxTries     int
	MPIKubectlDeliveryImage          string
	WebhookServerPort                int
	WebhookServiceName               string
	WebhookSecretName                string
	KueueIntegration                 string
	KueueConfig                      string
	PodTracking                      bool
}

// Bind registers the flags on fs. The defaults shown are the effective
// defaults of the Configuration API (v1's flag defaults, except
// --controller-threads, --kube-api-qps and --kube-api-burst whose
// Configuration defaults are higher); --namespace defaults to
// $KUBEFLOW_NAMESPACE.
func (f *Flags) Bind(fs *flag.FlagSet) {
	d := &configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults_Configuration(d)
	over := func(field string) string {
		return " Overrides " + field + " of the --config file when given."
	}

	fs.StringVar(&f.ConfigFile, FlagConfig, "",
		"Path of a config.training-operator.io/v1alpha1 Configuration file. Flags given on the command line override its values.")
	fs.StringVar(&f.MetricsBindAddress, FlagMetricsBindAddress, d.Metrics.BindAddress,
		"The address the metric endpoint binds to; \"0\" disables it."+over("metrics.bindAddress"))
	fs.StringVar(&f.HealthProbeBindAddress, FlagHealthProbeBindAddress, d.Health.ProbeBindAddress,
		"The address the probe endpoint binds to."+over("health.probeBindAddress"))
	fs.StringVar(&f.PprofBindAddress, FlagPprofBindAddress, d.Health.PprofBindAddress,
		"The address serving Go's /debug/pprof profiles; empty or \"0\" disables it."+over("health.pprofBindAddress"))
	fs.BoolVar(&f.LeaderElect, FlagLeaderElect, d.LeaderElection.LeaderElect,
		"Enable leader election for controller manager. Enabling this will ensure there is only one active controller manager."+
			over("leaderElection.leaderElect"))
	fs.StringVar(&f.LeaderElectionID, FlagLeaderElectionID, d.LeaderElection.ResourceName,
		"The ID for leader election (the Lease name)."+over("leaderElection.resourceName"))
	fs.Var(&f.EnabledSchemes, FlagEnableScheme,
		"Enable scheme(s) as --enable-scheme=tfjob --enable-scheme=pytorchjob, case insensitive. Supported: "+
			strings.Join(configv1alpha1.AllSchemes(), ", ")+". By default, all supported schemes are enabled."+over("enabledSchemes"))
	fs.StringVar(&f.GangSchedulerName, FlagGangSchedulerName, d.GangScheduling.SchedulerName,
		"Default gang scheduler: volcano, or any other name for scheduler-plugins (used as the pods' schedulerName). Empty disables."+
			over("gangScheduling.schedulerName"))
	fs.StringVar(&f.Namespace, FlagNamespace, os.Getenv(EnvKubeflowNamespace),
		"The namespace to monitor kubeflow jobs. If unset, it monitors all namespaces cluster-wide. Defaults to $"+
			EnvKubeflowNamespace+"."+over("namespace"))
	fs.IntVar(&f.ControllerThreads, FlagControllerThreads, int(*d.Controller.DefaultConcurrency),
		"Number of jobs of each kind reconciled concurrently."+over("controller.defaultConcurrency and clears controller.concurrency"))
	fs.Float64Var(&f.KubeAPIQPS, FlagKubeAPIQPS, float64(*d.ClientConnection.QPS),
		"QPS indicates the maximum QPS to the master from this client."+over("clientConnection.qps"))
	fs.IntVar(&f.KubeAPIBurst, FlagKubeAPIBurst, int(*d.ClientConnection.Burst),
		"Maximum burst for throttle."+over("clientConnection.burst"))
	fs.StringVar(&f.PyTorchInitContainerImage, FlagPyTorchInitContainerImage, d.PyTorchInitContainer.Image,
		"The image for pytorch init container."+over("pytorchInitContainer.image"))
	fs.StringVar(&f.PyTorchInitContainerTemplateFile, FlagPyTorchInitContainerTemplateFile, d.PyTorchInitContainer.TemplateFile,
		"The template file for pytorch init container (used only if it exists)."+over("pytorchInitContainer.templateFile"))
	fs.IntVar(&f.PyTorchInitContainerMaxTries, FlagPyTorchInitContainerMaxTries, int(*d.PyTorchInitContainer.MaxTries),
		"The number of tries for the pytorch init container."+over("pytorchInitContainer.maxTries"))
	fs.StringVar(&f.MPIKubectlDeliveryImage, FlagMPIKubectlDeliveryImage, d.MPI.KubectlDeliveryImage,
		"The image for mpi launcher init container."+over("mpi.kubectlDeliveryImage"))
	fs.IntVar(&f.WebhookServerPort, FlagWebhookServerPort, int(*d.Webhook.Port),
		"Endpoint port for the webhook server."+over("webhook.port"))
	fs.StringVar(&f.WebhookServiceName, FlagWebhookServiceName, d.Webhook.ServiceName,
		"Name of the Service used as part of the DNSName."+over("webhook.serviceName"))
	fs.StringVar(&f.WebhookSecretName, FlagWebhookSecretName, d.Webhook.SecretName,
		"Name of the Secret to store CA and server certs."+over("webhook.secretName"))
	fs.StringVar(&f.KueueIntegration, FlagKueueIntegration, string(d.Kueue.Integration),
		"Who manages the Kueue Workloads of queued jobs: builtin (Kueue's own kubeflow.org integrations) or operator "+
			"(the operator, as a Kueue external framework; MPIJob included)."+over("kueue.integration"))
	fs.StringVar(&f.KueueConfig, FlagKueueConfig, d.Kueue.ConfigFile,
		"Path of Kueue's Configuration file, read with --kueue-integration=operator; empty means Kueue's defaults."+
			over("kueue.configFile"))
	fs.BoolVar(&f.PodTracking, FlagPodTracking, *d.Controller.PodTracking,
		"Put the pod-tracking finalizer on the pods of jobs with backoffLimit or failurePolicy, so that failures of pods deleted "+
			"while the operator is down still count; false counts as v1 did and removes the finalizer from every pod."+
			over("controller.podTracking"))
}

// ExplicitFlags returns the names of the flags that were set on the command
// line of a parsed FlagSet.
func ExplicitFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// Apply copies onto cfg the value of every flag named in set (see
// ExplicitFlags). --namespace is also applied when it is not in set but is
// non-empty, i.e. when it comes from $KUBEFLOW_NAMESPACE.
// --controller-threads sets controller.defaultConcurrency and removes the
// per-kind overrides, so that it governs every kind as in v1.
func (f *Flags) Apply(cfg *configv1alpha1.Configuration, set map[string]bool) {
	if set[FlagMetricsBindAddress] {
		cfg.Metrics.BindAddress = f.MetricsBindAddress
	}
	if set[FlagHealthProbeBindAddress] {
		cfg.Health.ProbeBindAddress = f.HealthProbeBindAddress
	}
	if set[FlagPprofBindAddress] {
		cfg.Health.PprofBindAddress = f.PprofBindAddress
	}
	if set[FlagLeaderElect] {
		cfg.LeaderElection.LeaderElect = f.LeaderElect
	}
	if set[FlagLeaderElectionID] {
		cfg.LeaderElection.ResourceName = f.LeaderElectionID
	}
	if set[FlagEnableScheme] && len(f.EnabledSchemes) > 0 {
		cfg.EnabledSchemes = slices.Clone([]string(f.EnabledSchemes))
	}
	if set[FlagGangSchedulerName] {
		cfg.GangScheduling.SchedulerName = f.GangSchedulerName
	}
	if set[FlagNamespace] || f.Namespace != "" {
		cfg.Namespace = f.Namespace
	}
	if set[FlagControllerThreads] {
		cfg.Controller.DefaultConcurrency = ptr(clampInt32(f.ControllerThreads))
		cfg.Controller.Concurrency = nil
	}
	if set[FlagKubeAPIQPS] {
		cfg.ClientConnection.QPS = ptr(float32(f.KubeAPIQPS))
	}
	if set[FlagKubeAPIBurst] {
		cfg.ClientConnection.Burst = ptr(clampInt32(f.KubeAPIBurst))
	}
	if set[FlagPyTorchInitContainerImage] {
		cfg.PyTorchInitContainer.Image = f.PyTorchInitContainerImage
	}
	if set[FlagPyTorchInitContainerTemplateFile] {
		cfg.PyTorchInitContainer.TemplateFile = f.PyTorchInitContainerTemplateFile
	}
	if set[FlagPyTorchInitContainerMaxTries] {
		cfg.PyTorchInitContainer.MaxTries = ptr(clampInt32(f.PyTorchInitContainerMaxTries))
	}
	if set[FlagMPIKubectlDeliveryImage] {
		cfg.MPI.KubectlDeliveryImage = f.MPIKubectlDeliveryImage
	}
	if set[FlagWebhookServerPort] {
		cfg.Webhook.Port = ptr(clampInt32(f.WebhookServerPort))
	}
	if set[FlagWebhookServiceName] {
		cfg.Webhook.ServiceName = f.WebhookServiceName
	}
	if set[FlagWebhookSecretName] {
		cfg.Webhook.SecretName = f.WebhookSecretName
	}
	if set[FlagKueueIntegration] {
		cfg.Kueue.Integration = configv1alpha1.KueueIntegration(f.KueueIntegration)
	}
	if set[FlagKueueConfig] {
		cfg.Kueue.ConfigFile = f.KueueConfig
	}
	if set[FlagPodTracking] {
		cfg.Controller.PodTracking = ptr(f.PodTracking)
	}
}

// SchemeList is the value of the repeatable --enable-scheme flag. Set
// accepts a supported kind name case-insensitively, stores its canonical
// name once, and rejects anything else with v1's error text.
type SchemeList []string

var _ flag.Value = (*SchemeList)(nil)

// String returns the schemes joined by commas.
func (s *SchemeList) String() string {
	if s == nil {
		return ""
	}
	return strings.Join(*s, ",")
}

// Set adds one scheme.
func (s *SchemeList) Set(name string) error {
	c, ok := NormalizeScheme(name)
	if !ok {
		return errors.New(unsupportedSchemeMessage(name))
	}
	if !slices.Contains(*s, c) {
		*s = append(*s, c)
	}
	return nil
}

func clampInt32(v int) int32 {
	return int32(max(math.MinInt32, min(v, math.MaxInt32)))
}

func ptr[T any](v T) *T { return &v }
