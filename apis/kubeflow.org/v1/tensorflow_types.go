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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// TFJobKind is the kind name.
	TFJobKind = "TFJob"
	// TFJobPlural is the plural resource name.
	TFJobPlural = "tfjobs"
	// TFJobSingular is the singular resource name.
	TFJobSingular = "tfjob"
	// TFJobFrameworkName is the framework name used in metric labels.
	TFJobFrameworkName = "tensorflow"
	// TFJobControllerName is the controller name, the value of the
	// OperatorNameLabel on the job's pods and services.
	TFJobControllerName = "tfjob-controller"

	// TFJobDefaultContainerName is the name of the TFJob container.
	TFJobDefaultContainerName = "tensorflow"
	// TFJobDefaultPortName is the name of the port used to communicate
	// between the replicas.
	TFJobDefaultPortName = "tfjob-port"
	// TFJobDefaultPort is the default value of the port.
	TFJobDefaultPort = 2222
	// TFJobDefaultRestartPolicy is the default restart policy of TFJob
	// replicas.
	TFJobDefaultRestartPolicy = RestartPolicyNever

	// TFJobReplicaTypePS is the type for parameter servers of distributed TensorFlow.
	TFJobReplicaTypePS ReplicaType = "PS"
	// TFJobReplicaTypeWorker is the type for workers of distributed TensorFlow.
	// This is also used for non-distributed TensorFlow.
	TFJobReplicaTypeWorker ReplicaType = "Worker"
	// TFJobReplicaTypeChief is the type for the chief worker of distributed
	// TensorFlow. If there is a "chief" replica type, it's the "chief" worker;
	// otherwise worker 0 is the chief.
	TFJobReplicaTypeChief ReplicaType = "Chief"
	// TFJobReplicaTypeMaster is the type for the master worker of distributed
	// TensorFlow. It is equivalent to TFJobReplicaTypeChief.
	TFJobReplicaTypeMaster ReplicaType = "Master"
	// TFJobReplicaTypeEval is the type for evaluation replicas in TensorFlow.
	TFJobReplicaTypeEval ReplicaType = "Evaluator"
)

// SuccessPolicy decides when a TFJob without a Chief/Master is successful.
// +kubebuilder:validation:Enum="";AllWorkers
type SuccessPolicy string

const (
	// SuccessPolicyDefault marks the job successful when worker 0 succeeds.
	SuccessPolicyDefault SuccessPolicy = ""
	// SuccessPolicyAllWorkers marks the job successful when all workers
	// succeed.
	SuccessPolicyAllWorkers SuccessPolicy = "AllWorkers"
)

// TFJob represents a TFJob resource: a distributed TensorFlow training job.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=tfjobs,singular=tfjob
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1,description="Whole-job restarts made by the failure policy"
type TFJob struct {
	// Standard Kubernetes type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard Kubernetes object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Specification of the desired state of the TFJob.
	// +optional
	Spec TFJobSpec `json:"spec,omitempty"`

	// Most recently observed status of the TFJob.
	// Read-only (modified by the system).
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// TFJobSpec is a desired state description of the TFJob.
type TFJobSpec struct {
	// RunPolicy encapsulates various runtime policies of the distributed training
	// job, for example how to clean up resources and how long the job can stay
	// active.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy"`

	// SuccessPolicy defines the policy to mark the TFJob as succeeded when
	// there is no Chief or Master: "" (the default) means worker 0 succeeded,
	// "AllWorkers" means every worker succeeded.
	// +optional
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`

	// TFReplicaSpecs maps a replica type ("PS", "Worker", "Chief", "Master"
	// or "Evaluator") to its ReplicaSpec, describing the TensorFlow cluster,
	// for example {"PS": {...}, "Worker": {...}}.
	TFReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"tfReplicaSpecs"`

	// EnableDynamicWorker, when true, lets workers join and leave the
	// cluster: a failed Worker does not fail the job, and TF_CONFIG only
	// lists the pod itself among the workers.
	// +optional
	EnableDynamicWorker bool `json:"enableDynamicWorker,omitempty"`
}

// TFJobList is a list of TFJobs.
// +kubebuilder:object:root=true
type TFJobList struct {
	// Standard type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// List of TFJobs.
	Items []TFJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TFJob{}, &TFJobList{})
}
