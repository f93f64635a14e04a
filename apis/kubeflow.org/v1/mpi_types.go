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
	// MPIJobKind is the kind name.
	MPIJobKind = "MPIJob"
	// MPIJobPlural is the plural resource name.
	MPIJobPlural = "mpijobs"
	// MPIJobSingular is the singular resource name.
	MPIJobSingular = "mpijob"
	// MPIJobFrameworkName is the framework name used in metric labels.
	MPIJobFrameworkName = "mpi"
	// MPIJobControllerName is the controller name, the value of the
	// OperatorNameLabel on the job's pods.
	MPIJobControllerName = "mpijob-controller"

	// MPIJobDefaultContainerName is the name of the MPIJob container (not
	// enforced).
	MPIJobDefaultContainerName = "mpi"
	// MPIJobDefaultPortName is the name of the MPIJob port (unused: no port
	// is defaulted for MPIJob).
	MPIJobDefaultPortName = "mpi-port"
	// MPIJobDefaultPort is the default value of the MPIJob port (unused).
	MPIJobDefaultPort = 9999
	// MPIJobDefaultRestartPolicy is the default restart policy of MPIJob
	// replicas.
	MPIJobDefaultRestartPolicy = RestartPolicyNever

	// MPIJobReplicaTypeLauncher is the type for the launcher replica.
	MPIJobReplicaTypeLauncher ReplicaType = "Launcher"
	// MPIJobReplicaTypeWorker is the type for worker replicas.
	MPIJobReplicaTypeWorker ReplicaType = "Worker"
)

// MPIJob represents an MPIJob resource: an MPI (e.g. Horovod) job whose
// launcher runs mpirun against the worker pods.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=mpijobs,singular=mpijob
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1,description="Whole-job restarts made by the failure policy"
type MPIJob struct {
	// Standard Kubernetes type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard Kubernetes object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Specification of the desired state of the MPIJob.
	// +optional
	Spec MPIJobSpec `json:"spec,omitempty"`

	// Most recently observed status of the MPIJob.
	// Read-only (modified by the system).
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// MPIJobSpec is a desired state description of the MPIJob.
type MPIJobSpec struct {
	// SlotsPerWorker specifies the number of slots per worker used in the
	// hostfile. Defaults to 1.
	// +optional
	SlotsPerWorker *int32 `json:"slotsPerWorker,omitempty"`

	// CleanPodPolicy defines the policy that whether to kill pods after the job completes.
	// Defaults to None (not with a failurePolicy: see runPolicy.cleanPodPolicy).
	// Deprecated: use runPolicy.cleanPodPolicy instead; the two are kept in
	// sync, runPolicy.cleanPodPolicy winning when both are set.
	// +optional
	CleanPodPolicy *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`

	// MPIReplicaSpecs maps a replica type ("Launcher" or "Worker") to its
	// ReplicaSpec, for example {"Launcher": {...}, "Worker": {...}}.
	MPIReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"mpiReplicaSpecs"`

	// MainContainer specifies the name of the container that runs the MPI
	// processes in the worker pods (kubexec.sh --container).
	// +optional
	MainContainer string `json:"mainContainer,omitempty"`

	// RunPolicy encapsulates various runtime policies of the job.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
}

// MPIJobList is a list of MPIJobs.
// +kubebuilder:object:root=true
type MPIJobList struct {
	// Standard type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// List of MPIJobs.
	Items []MPIJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MPIJob{}, &MPIJobList{})
}
