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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CertManagement selects where the webhook serving certificate comes from.
type CertManagement string

const (
	// CertManagementSelfSigned makes the operator generate a self-signed CA and
	// serving certificate, store them in the webhook Secret, rotate them and
	// inject the CA bundle into its webhook configurations (v1 behaviour).
	CertManagementSelfSigned CertManagement = "self-signed"
	// CertManagementCertManager expects cert-manager to issue the certificate
	// into the webhook Secret and to inject the CA bundle
	// (cert-manager.io/inject-ca-from); the operator only waits for the files.
	CertManagementCertManager CertManagement = "cert-manager"
	// CertManagementNone expects the certificate files to be provided in
	// webhook.certDir by other means; the operator neither creates nor
	// injects anything.
	CertManagementNone CertManagement = "none"
)

// +kubebuilder:object:root=true

// Configuration is the file-based configuration of the training operator
// (apiVersion config.training-operator.io/v1alpha1, kind Configuration).
// Omitted fields take the documented defaults. Command-line flags with the
// Kubeflow Training Operator v1 names override the file when they are given.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// The sections are omitzero (omitempty never omits a struct), so a
	// written Configuration holds only the sections that set something.

	// Namespace restricts the operator to jobs, pods and services in one
	// namespace. Empty (the default) watches all namespaces.
	// Flag: --namespace (default: $KUBEFLOW_NAMESPACE).
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// EnabledSchemes lists the job kinds whose controllers and webhooks are
	// started. Names are matched case-insensitively against PyTorchJob, TFJob,
	// MPIJob, XGBoostJob, PaddleJob and JAXJob. Empty (the default) enables all six.
	// Flag: --enable-scheme (repeatable).
	// +optional
	EnabledSchemes []string `json:"enabledSchemes,omitempty"`

	// GangScheduling configures PodGroup-based gang scheduling.
	// +optional
	GangScheduling GangScheduling `json:"gangScheduling,omitzero"`

	// Controller configures the job reconcilers.
	// +optional
	Controller Controller `json:"controller,omitzero"`

	// ClientConnection configures the operator's connection to the kube-apiserver.
	// +optional
	ClientConnection ClientConnection `json:"clientConnection,omitzero"`

	// Webhook configures the admission webhook server and its certificate.
	// +optional
	Webhook Webhook `json:"webhook,omitzero"`

	// Metrics configures the Prometheus metrics endpoint.
	// +optional
	Metrics Metrics `json:"metrics,omitzero"`

	// Health configures the liveness (/healthz) and readiness (/readyz) endpoint.
	// +optional
	Health Health `json:"health,omitzero"`

	// LeaderElection configures leader election between operator replicas.
	// +optional
	LeaderElection LeaderElection `json:"leaderElection,omitzero"`

	// PyTorchInitContainer configures the init container added to PyTorchJob
	// workers that waits until the master is resolvable and reachable.
	// +optional
	PyTorchInitContainer PyTorchInitContainer `json:"pytorchInitContainer,omitzero"`

	// MPI configures MPIJob-specific settings.
	// +optional
	MPI MPI `json:"mpi,omitzero"`

	// Kueue configures how jobs are queued by Kueue (kueue.x-k8s.io).
	// +optional
	Kueue Kueue `json:"kueue,omitzero"`
}

// GangScheduling configures gang scheduling. The backend is chosen per job:
// a replica template whose schedulerName is "volcano" selects Volcano, one
// whose schedulerName equals SchedulerPluginsSchedulerName selects the
// scheduler-plugins coscheduling plugin; otherwise SchedulerName applies.
type GangScheduling struct {
	// SchedulerName is the operator-wide default gang scheduler, with the
	// semantics of v1's flag: empty (the default) disables gang scheduling for
	// jobs that do not select a gang scheduler themselves; "volcano" (matched
	// case-insensitively) selects Volcano; any other value selects
	// scheduler-plugins and is set as the pods' schedulerName when a template
	// leaves it empty.
	// Flag: --gang-scheduler-name.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// SchedulerPluginsSchedulerName is the schedulerName of the kube-scheduler
	// profile that runs the scheduler-plugins coscheduling plugin; a job whose
	// replica template uses it gets a scheduling.x-k8s.io PodGroup.
	// Defaults to "scheduler-plugins-scheduler".
	// +optional
	SchedulerPluginsSchedulerName string `json:"schedulerPluginsSchedulerName,omitempty"`

	// PodGroupAPI is the PodGroup API of the default gang scheduler
	// (SchedulerName), set independently of its name: "volcano"
	// (scheduling.volcano.sh/v1beta1), "scheduler-plugins"
	// (scheduling.x-k8s.io/v1alpha1) or "kubernetes" (the native
	// scheduling.k8s.io/v1beta1 Workload and PodGroup of Kubernetes 1.37+,
	// which need the GenericWorkload feature gate and that API version
	// enabled). Empty (the default) keeps v1's rule: Volcano when
	// SchedulerName is "volcano", scheduler-plugins for any other non-empty
	// SchedulerName.
	// When PodGroupAPI is set, gang scheduling is on for every job even if
	// SchedulerName is empty; pods whose template names no scheduler then get
	// "volcano", SchedulerPluginsSchedulerName, or (for "kubernetes") keep the
	// cluster's default scheduler.
	// +optional
	PodGroupAPI PodGroupAPI `json:"podGroupAPI,omitempty"`

	// PodGroupAPIs are the gang backends the operator may use, each by its
	// PodGroup API; empty (the default) enables all. A job whose replica
	// template names the scheduler of a backend not listed is not
	// gang-scheduled by the operator (it falls to the default, like any
	// other scheduler name). The default backend (PodGroupAPI, or the one
	// SchedulerName selects) must be listed. The chart grants the RBAC of
	// the listed backends only.
	// +optional
	// +listType=set
	PodGroupAPIs []PodGroupAPI `json:"podGroupAPIs,omitempty"`
}

// PodGroupAPI names a PodGroup API (a gang-scheduling backend).
type PodGroupAPI string

const (
	// PodGroupAPIVolcano is Volcano's scheduling.volcano.sh/v1beta1 PodGroup.
	PodGroupAPIVolcano PodGroupAPI = "volcano"
	// PodGroupAPISchedulerPlugins is the scheduler-plugins coscheduling
	// scheduling.x-k8s.io/v1alpha1 PodGroup.
	PodGroupAPISchedulerPlugins PodGroupAPI = "scheduler-plugins"
	// PodGroupAPIKubernetes is the native Kubernetes scheduling.k8s.io/v1beta1
	// Workload and PodGroup (gang policy), scheduled by kube-scheduler's
	// GangScheduling plugin.
	PodGroupAPIKubernetes PodGroupAPI = "kubernetes"
)

// PodGroupAPIs are the values podGroupAPI accepts, one per gang backend.
func PodGroupAPIs() []PodGroupAPI {
	return []PodGroupAPI{PodGroupAPIVolcano, PodGroupAPISchedulerPlugins, PodGroupAPIKubernetes}
}

// Controller configures the job reconcilers.
type Controller struct {
	// DefaultConcurrency is the number of jobs of one kind reconciled in
	// parallel (MaxConcurrentReconciles) for kinds not listed in Concurrency.
	// Defaults to 16 (chosen by make bench). Minimum 1.
	// Flag: --controller-threads (which also clears Concurrency).
	// +optional
	DefaultConcurrency *int32 `json:"defaultConcurrency,omitempty"`

	// Concurrency overrides DefaultConcurrency per job kind. Keys are kind
	// names (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob, matched
	// case-insensitively); values are at least 1.
	// +optional
	Concurrency map[string]int32 `json:"concurrency,omitempty"`

	// CacheSyncTimeout is how long the operator waits at start for its
	// caches (jobs, pods, Services) to be listed before it gives up and
	// exits. Defaults to 10m: with controller-runtime's 2m default, an
	// operator restarted on a busy control plane holding 5,000 finished jobs
	// with their pods and Services exited before its jobs were listed, and
	// restarted into the same wait. Must be greater than 0.
	// +optional
	CacheSyncTimeout *metav1.Duration `json:"cacheSyncTimeout,omitempty"`

	// PodTracking puts the pod-tracking finalizer on the pods of jobs with
	// runPolicy.backoffLimit or runPolicy.failurePolicy, so that a failure
	// is counted even when its pod is deleted while the operator is not
	// watching. false counts failures from the pods it sees, as v1 did:
	// no pod gets the finalizer, and the operator removes it from every
	// pod that has it (the way back to v1 starts here). Defaults to true.
	// Flag: --pod-tracking.
	// +optional
	PodTracking *bool `json:"podTracking,omitempty"`
}

// ClientConnection configures the client used to talk to the kube-apiserver.
type ClientConnection struct {
	// QPS is the sustained queries per second allowed by the client-side rate
	// limiter. Defaults to 500. Must be greater than 0.
	// Flag: --kube-api-qps.
	// +optional
	QPS *float32 `json:"qps,omitempty"`

	// Burst is the number of queries allowed above QPS for short periods.
	// Defaults to 1000. Must be greater than 0.
	// Flag: --kube-api-burst.
	// +optional
	Burst *int32 `json:"burst,omitempty"`

	// DisableCompression stops the operator asking the kube-apiserver for
	// gzip-compressed responses. Defaults to true: the operator runs next to
	// its API server, and since Kubernetes 1.37 the API server compresses a
	// client's watch-list streams (an informer's initial listing, then every
	// event on that watch) as well as large lists, which spends the API
	// server's CPU to save bandwidth a cluster network is not short of.
	// Set false when the operator reaches its API server over a slow link.
	// +optional
	DisableCompression *bool `json:"disableCompression,omitempty"`
}

// Webhook configures the admission webhook server and its serving certificate.
type Webhook struct {
	// Port is the port the webhook server listens on. Defaults to 9443.
	// Flag: --webhook-server-port.
	// +optional
	Port *int32 `json:"port,omitempty"`

	// Host is the address the webhook server binds to. Empty (the default)
	// listens on all interfaces.
	// +optional
	Host string `json:"host,omitempty"`

	// ServiceName is the name of the Service in front of the webhook server;
	// the serving certificate is issued for <serviceName>.<namespace>.svc.
	// Defaults to "training-operator".
	// Flag: --webhook-service-name.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// SecretName is the name of the Secret holding the serving certificate.
	// Defaults to "training-operator-webhook-cert".
	// Flag: --webhook-secret-name.
	// +optional
	SecretName string `json:"secretName,omitempty"`

	// CertDir is the directory the webhook server reads tls.crt and tls.key
	// from. Defaults to "/tmp/k8s-webhook-server/serving-certs".
	// +optional
	CertDir string `json:"certDir,omitempty"`

	// CertManagement selects who provides the serving certificate:
	// "self-signed" (the default; generated and rotated by the operator),
	// "cert-manager" or "none" (provided in CertDir by other means).
	// +optional
	CertManagement CertManagement `json:"certManagement,omitempty"`

	// ClientURL is a development and test setting: when set (for example
	// "https://127.0.0.1:9443"), the operator points its webhook
	// configurations at <clientURL><path> (clientConfig.url) instead of the
	// Service, and the self-signed serving certificate also covers the URL's
	// host (an IP address or DNS name). Use it for local clusters whose API
	// server cannot reach Services (no kube-proxy) and the operator runs
	// outside the cluster. It must be an https URL without path, query or
	// fragment. Empty (the default) uses the Service. Only honoured with
	// certManagement "self-signed".
	// +optional
	ClientURL string `json:"clientURL,omitempty"`
}

// Metrics configures the Prometheus metrics endpoint.
type Metrics struct {
	// BindAddress is the address the metrics server listens on, such as
	// ":8080". "0" disables the metrics server. Defaults to ":8080".
	// Flag: --metrics-bind-address.
	// +optional
	BindAddress string `json:"bindAddress,omitempty"`

	// Secure serves metrics over HTTPS and requires callers to be
	// authenticated (TokenReview) and authorized (SubjectAccessReview for
	// GET on the /metrics non-resource URL). Defaults to false (plain HTTP,
	// as in v1).
	// +optional
	Secure bool `json:"secure,omitempty"`
}

// Health configures the health probe endpoint.
type Health struct {
	// ProbeBindAddress is the address serving /healthz and /readyz, such as
	// ":8081". "0" disables it. Defaults to ":8081".
	// Flag: --health-probe-bind-address.
	// +optional
	ProbeBindAddress string `json:"probeBindAddress,omitempty"`

	// PprofBindAddress is the address serving Go's /debug/pprof profiles,
	// such as "127.0.0.1:8082", for diagnosing CPU and memory use. Empty (the
	// default) or "0" disables it.
	// Flag: --pprof-bind-address.
	// +optional
	PprofBindAddress string `json:"pprofBindAddress,omitempty"`
}

// LeaderElection configures leader election through a coordination.k8s.io Lease.
type LeaderElection struct {
	// LeaderElect enables leader election, so that only one replica runs the
	// controllers. Defaults to false.
	// Flag: --leader-elect.
	// +optional
	LeaderElect bool `json:"leaderElect,omitempty"`

	// ResourceName is the name of the Lease. Defaults to
	// "1ca428e5.training-operator.kubeflow.org" (the v1 value).
	// Flag: --leader-election-id.
	// +optional
	ResourceName string `json:"resourceName,omitempty"`

	// ResourceNamespace is the namespace of the Lease. Empty (the default)
	// means the namespace the operator runs in.
	// +optional
	ResourceNamespace string `json:"resourceNamespace,omitempty"`

	// LeaseDuration is how long non-leaders wait before trying to take over
	// an unrenewed lease. Defaults to 15s.
	// +optional
	LeaseDuration *metav1.Duration `json:"leaseDuration,omitempty"`

	// RenewDeadline is how long the leader keeps retrying to renew before it
	// gives up leadership. Must be less than LeaseDuration. Defaults to 10s.
	// +optional
	RenewDeadline *metav1.Duration `json:"renewDeadline,omitempty"`

	// RetryPeriod is the interval between attempts to acquire or renew the
	// lease. Must be less than RenewDeadline. Defaults to 2s.
	// +optional
	RetryPeriod *metav1.Duration `json:"retryPeriod,omitempty"`
}

// PyTorchInitContainer configures the init container that makes PyTorchJob
// workers wait for the master.
type PyTorchInitContainer struct {
	// Image is the init container image. Defaults to "alpine:3.10".
	// Flag: --pytorch-init-container-image.
	// +optional
	Image string `json:"image,omitempty"`

	// TemplateFile is a text/template file for the init container; it is
	// used only if the file exists, otherwise the built-in template is used.
	// A file that does not render to a YAML list of containers stops the
	// operator at startup; keys unknown to a container are ignored.
	// Defaults to "/etc/config/initContainer.yaml".
	// Flag: --pytorch-init-container-template-file.
	// +optional
	TemplateFile string `json:"templateFile,omitempty"`

	// MaxTries is how many times the init container checks for the master
	// before it fails. Defaults to 100. Minimum 1.
	// Flag: --pytorch-init-container-max-tries.
	// +optional
	MaxTries *int32 `json:"maxTries,omitempty"`
}

// MPI configures MPIJob-specific settings.
type MPI struct {
	// KubectlDeliveryImage is the image of the launcher's init container that
	// delivers kubectl. Defaults to
	// "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest".
	// Flag: --mpi-kubectl-delivery-image.
	// +optional
	KubectlDeliveryImage string `json:"kubectlDeliveryImage,omitempty"`
}

// Kueue configures the integration with Kueue.
type Kueue struct {
	// Integration says who creates and manages the Kueue Workloads of the
	// operator's jobs. "builtin" (the default): Kueue's own kubeflow.org
	// integrations do (its integrations.frameworks lists the kinds), and the
	// operator honours runPolicy.suspend, as v1 did; Kueue never integrated
	// v1's MPIJob this way. "operator": the operator does, for every enabled
	// kind MPIJob included, with Kueue's job framework library; Kueue lists
	// the kinds in integrations.externalFrameworks (PyTorchJob.v1.kubeflow.org,
	// ...) and none of kubeflow.org/* in integrations.frameworks.
	// Flag: --kueue-integration.
	// +optional
	// +kubebuilder:validation:Enum=builtin;operator
	Integration KueueIntegration `json:"integration,omitempty"`

	// ConfigFile is the path of Kueue's own Configuration file
	// (config.kueue.x-k8s.io, as mounted from Kueue's ConfigMap), read in
	// "operator" mode for manageJobsWithoutQueueName, the managed jobs'
	// namespace selector, waitForPodsReady and labelKeysToCopy. Empty means
	// Kueue's defaults.
	// Flag: --kueue-config.
	// +optional
	ConfigFile string `json:"configFile,omitempty"`
}

// KueueIntegration names who manages the Kueue Workloads of the jobs.
type KueueIntegration string

const (
	// KueueIntegrationBuiltin leaves the Workloads to Kueue's own
	// kubeflow.org integrations.
	KueueIntegrationBuiltin KueueIntegration = "builtin"
	// KueueIntegrationOperator has the operator create and manage them, as a
	// Kueue external framework.
	KueueIntegrationOperator KueueIntegration = "operator"
)
