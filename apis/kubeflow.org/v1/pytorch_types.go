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

package v1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// PyTorchJobKind is the kind name.
	PyTorchJobKind = "PyTorchJob"
	// PyTorchJobPlural is the plural resource name.
	PyTorchJobPlural = "pytorchjobs"
	// PyTorchJobSingular is the singular resource name.
	PyTorchJobSingular = "pytorchjob"
	// PyTorchJobFrameworkName is the framework name used in metric labels.
	PyTorchJobFrameworkName = "pytorch"
	// PyTorchJobControllerName is the controller name, the value of the
	// OperatorNameLabel on the job's pods and services.
	PyTorchJobControllerName = "pytorchjob-controller"

	// PyTorchJobDefaultContainerName is the name of the PyTorchJob container.
	PyTorchJobDefaultContainerName = "pytorch"
	// PyTorchJobDefaultPortName is the name of the port used to communicate
	// between Master and Workers.
	PyTorchJobDefaultPortName = "pytorchjob-port"
	// PyTorchJobDefaultPort is the default value of the port.
	PyTorchJobDefaultPort = 23456
	// PyTorchJobDefaultRestartPolicy is the default restart policy of
	// PyTorchJob replicas.
	PyTorchJobDefaultRestartPolicy = RestartPolicyOnFailure

	// PyTorchJobReplicaTypeMaster is the type of the Master of distributed PyTorch.
	PyTorchJobReplicaTypeMaster ReplicaType = "Master"
	// PyTorchJobReplicaTypeWorker is the type of the Workers of distributed PyTorch.
	PyTorchJobReplicaTypeWorker ReplicaType = "Worker"
)

// PyTorchJob represents a PyTorchJob resource: a distributed PyTorch training
// job run with torchrun (optionally elastic).
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=pytorchjobs,singular=pytorchjob
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.pytorchReplicaSpecs.Worker.replicas,statuspath=.status.replicaStatuses.Worker.active,selectorpath=.status.replicaStatuses.Worker.selector
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1,description="Whole-job restarts made by the failure policy"
type PyTorchJob struct {
	// Standard Kubernetes type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard Kubernetes object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Specification of the desired state of the PyTorchJob.
	// +optional
	Spec PyTorchJobSpec `json:"spec,omitempty"`

	// Most recently observed status of the PyTorchJob.
	// Read-only (modified by the system).
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// PyTorchJobSpec is a desired state description of the PyTorchJob.
type PyTorchJobSpec struct {
	// RunPolicy encapsulates various runtime policies of the distributed training
	// job, for example how to clean up resources and how long the job can stay
	// active.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy"`

	// ElasticPolicy holds the elastic (torchrun rendezvous) configuration of
	// the job. When set, the Workers form an elastic group whose size may
	// vary between minReplicas and maxReplicas.
	// +optional
	ElasticPolicy *ElasticPolicy `json:"elasticPolicy,omitempty"`

	// PyTorchReplicaSpecs maps a replica type ("Master" or "Worker") to its
	// ReplicaSpec, describing the PyTorch cluster, for example
	// {"Master": {...}, "Worker": {...}}.
	PyTorchReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"pytorchReplicaSpecs"`

	// NprocPerNode is the number of worker processes per node (torchrun
	// --nproc-per-node): "auto", "cpu", "gpu" or an integer.
	// Defaults to auto.
	// +optional
	NprocPerNode *string `json:"nprocPerNode,omitempty"`
}

// RDZVBackend is the rendezvous backend of an elastic PyTorchJob.
// +kubebuilder:validation:Enum=c10d;etcd;etcd-v2
type RDZVBackend string

const (
	// BackendC10D is the c10d rendezvous backend.
	BackendC10D RDZVBackend = "c10d"
	// BackendETCD is the etcd rendezvous backend.
	BackendETCD RDZVBackend = "etcd"
	// BackendETCDV2 is the etcd-v2 rendezvous backend.
	BackendETCDV2 RDZVBackend = "etcd-v2"
)

// ElasticPolicy is the elastic training configuration of a PyTorchJob.
type ElasticPolicy struct {
	// MinReplicas is the lower limit for the number of Worker replicas the
	// job can scale down to. If unset it defaults to maxReplicas, or to the
	// Worker replicas when maxReplicas is unset too.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the upper limit for the number of Worker replicas the
	// autoscaler can set; it cannot be smaller than minReplicas. If unset it
	// defaults to minReplicas, or to the Worker replicas when minReplicas is
	// unset too.
	// +optional
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// RDZVBackend is the rendezvous backend: c10d, etcd or etcd-v2
	// (torchrun --rdzv-backend).
	// +optional
	RDZVBackend *RDZVBackend `json:"rdzvBackend,omitempty"`

	// RDZVPort is the port of the rendezvous endpoint.
	// +optional
	RDZVPort *int32 `json:"rdzvPort,omitempty"`

	// RDZVHost is the host of the rendezvous endpoint.
	// +optional
	RDZVHost *string `json:"rdzvHost,omitempty"`

	// RDZVID is the rendezvous id (torchrun --rdzv-id).
	// +optional
	RDZVID *string `json:"rdzvId,omitempty"`

	// RDZVConf contains additional rendezvous configuration (<key1>=<value1>,<key2>=<value2>,...).
	// +optional
	RDZVConf []RDZVConf `json:"rdzvConf,omitempty"`

	// Standalone starts a local rendezvous backend (a c10d TCP store on port
	// 29400), for single-node, multi-worker jobs (torchrun --standalone).
	// When true, the rendezvous backend, endpoint and id are chosen
	// automatically and any values set here are ignored.
	// +optional
	Standalone *bool `json:"standalone,omitempty"`

	// NProcPerNode is the number of worker processes per node.
	// Deprecated: use .spec.nprocPerNode instead; the two must not be set
	// together.
	// +optional
	NProcPerNode *int32 `json:"nProcPerNode,omitempty"`

	// MaxRestarts is the maximum number of worker group restarts before
	// failing (torchrun --max-restarts).
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`

	// Metrics are the autoscaling/v2 metric specifications used by the
	// HorizontalPodAutoscaler that scales the Workers between minReplicas and
	// maxReplicas (the largest replica count across all metrics wins).
	// The HorizontalPodAutoscaler is created only when this is set.
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`
}

// RDZVConf is one key/value pair of additional rendezvous configuration.
type RDZVConf struct {
	// Key is the configuration key.
	// +optional
	Key string `json:"key,omitempty"`
	// Value is the configuration value.
	// +optional
	Value string `json:"value,omitempty"`
}

// PyTorchJobList is a list of PyTorchJobs.
// +kubebuilder:object:root=true
type PyTorchJobList struct {
	// Standard type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// List of PyTorchJobs.
	Items []PyTorchJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PyTorchJob{}, &PyTorchJobList{})
}
