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
	// JAXJobKind is the kind name.
	JAXJobKind = "JAXJob"
	// JAXJobPlural is the plural resource name.
	JAXJobPlural = "jaxjobs"
	// JAXJobSingular is the singular resource name.
	JAXJobSingular = "jaxjob"
	// JAXJobFrameworkName is the framework name used in metric labels.
	JAXJobFrameworkName = "jax"
	// JAXJobControllerName is the controller name, the value of the
	// OperatorNameLabel on the job's pods and services.
	JAXJobControllerName = "jaxjob-controller"

	// JAXJobDefaultContainerName is the name of the JAXJob container.
	JAXJobDefaultContainerName = "jax"
	// JAXJobDefaultPortName is the name of the port used by the JAX
	// distributed coordinator.
	JAXJobDefaultPortName = "jaxjob-port"
	// JAXJobDefaultPort is the default value of the port.
	JAXJobDefaultPort = 6666
	// JAXJobDefaultRestartPolicy is the default restart policy of JAXJob
	// replicas.
	JAXJobDefaultRestartPolicy = RestartPolicyNever

	// JAXJobReplicaTypeWorker is the type for worker replicas (the only JAXJob
	// replica type; worker 0 hosts the coordinator).
	JAXJobReplicaTypeWorker ReplicaType = "Worker"
)

// JAXJob represents a JAXJob resource: a distributed JAX training job.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=jaxjobs,singular=jaxjob
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.jaxReplicaSpecs.Worker.replicas,statuspath=.status.replicaStatuses.Worker.active,selectorpath=.status.replicaStatuses.Worker.selector
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1,description="Whole-job restarts made by the failure policy"
type JAXJob struct {
	// Standard Kubernetes type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard Kubernetes object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Specification of the desired state of the JAXJob.
	// +optional
	Spec JAXJobSpec `json:"spec,omitempty"`

	// Most recently observed status of the JAXJob.
	// Read-only (modified by the system).
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// JAXJobSpec is a desired state description of the JAXJob.
type JAXJobSpec struct {
	// RunPolicy encapsulates various runtime policies of the distributed training
	// job, for example how to clean up resources and how long the job can stay
	// active.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy"`

	// JAXReplicaSpecs maps a replica type (only "Worker") to its
	// ReplicaSpec, for example {"Worker": {...}}.
	JAXReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"jaxReplicaSpecs"`
}

// JAXJobList is a list of JAXJobs.
// +kubebuilder:object:root=true
type JAXJobList struct {
	// Standard type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// List of JAXJobs.
	Items []JAXJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&JAXJob{}, &JAXJobList{})
}
