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
	// XGBoostJobKind is the kind name.
	XGBoostJobKind = "XGBoostJob"
	// XGBoostJobPlural is the plural resource name.
	XGBoostJobPlural = "xgboostjobs"
	// XGBoostJobSingular is the singular resource name.
	XGBoostJobSingular = "xgboostjob"
	// XGBoostJobFrameworkName is the framework name used in metric labels.
	XGBoostJobFrameworkName = "xgboost"
	// XGBoostJobControllerName is the controller name, the value of the
	// OperatorNameLabel on the job's pods and services.
	XGBoostJobControllerName = "xgboostjob-controller"

	// XGBoostJobDefaultContainerName is the name of the XGBoostJob container.
	XGBoostJobDefaultContainerName = "xgboost"
	// XGBoostJobDefaultPortName is the name of the port used to communicate
	// between Master and Workers.
	XGBoostJobDefaultPortName = "xgboostjob-port"
	// XGBoostJobDefaultPort is the default value of the port.
	XGBoostJobDefaultPort = 9999
	// XGBoostJobDefaultRestartPolicy is the default restart policy of
	// XGBoostJob replicas.
	XGBoostJobDefaultRestartPolicy = RestartPolicyNever

	// XGBoostJobReplicaTypeMaster is the type for the master replica.
	XGBoostJobReplicaTypeMaster ReplicaType = "Master"
	// XGBoostJobReplicaTypeWorker is the type for worker replicas.
	XGBoostJobReplicaTypeWorker ReplicaType = "Worker"
)

// XGBoostJob represents an XGBoostJob resource: a distributed XGBoost
// (Rabit) training job.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=xgboostjobs,singular=xgboostjob
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1,description="Whole-job restarts made by the failure policy"
type XGBoostJob struct {
	// Standard Kubernetes type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard Kubernetes object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Specification of the desired state of the XGBoostJob.
	// +optional
	Spec XGBoostJobSpec `json:"spec,omitempty"`

	// Most recently observed status of the XGBoostJob.
	// Read-only (modified by the system).
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// XGBoostJobSpec is a desired state description of the XGBoostJob.
type XGBoostJobSpec struct {
	// RunPolicy encapsulates various runtime policies of the distributed training
	// job, for example how to clean up resources and how long the job can stay
	// active.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy"`

	// XGBReplicaSpecs maps a replica type ("Master" or "Worker") to its
	// ReplicaSpec, for example {"Master": {...}, "Worker": {...}}.
	XGBReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"xgbReplicaSpecs"`
}

// XGBoostJobList is a list of XGBoostJobs.
// +kubebuilder:object:root=true
type XGBoostJobList struct {
	// Standard type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// List of XGBoostJobs.
	Items []XGBoostJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&XGBoostJob{}, &XGBoostJobList{})
}
