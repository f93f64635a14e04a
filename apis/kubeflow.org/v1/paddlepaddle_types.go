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
	// PaddleJobKind is the kind name.
	PaddleJobKind = "PaddleJob"
	// PaddleJobPlural is the plural resource name.
	PaddleJobPlural = "paddlejobs"
	// PaddleJobSingular is the singular resource name.
	PaddleJobSingular = "paddlejob"
	// PaddleJobFrameworkName is the framework name used in metric labels.
	PaddleJobFrameworkName = "paddle"
	// PaddleJobControllerName is the controller name, the value of the
	// OperatorNameLabel on the job's pods and services.
	PaddleJobControllerName = "paddlejob-controller"

	// PaddleJobDefaultContainerName is the name of the PaddleJob container.
	PaddleJobDefaultContainerName = "paddle"
	// PaddleJobDefaultPortName is the name of the port used to communicate
	// between Master and Workers.
	PaddleJobDefaultPortName = "master"
	// PaddleJobDefaultPort is the default value of the port.
	PaddleJobDefaultPort = 36543
	// PaddleJobDefaultRestartPolicy is the default restart policy of
	// PaddleJob replicas.
	PaddleJobDefaultRestartPolicy = RestartPolicyOnFailure

	// PaddleJobReplicaTypeMaster is the type for the master replica
	// (parameter server mode).
	PaddleJobReplicaTypeMaster ReplicaType = "Master"
	// PaddleJobReplicaTypeWorker is the type for worker replicas.
	PaddleJobReplicaTypeWorker ReplicaType = "Worker"
)

// PaddleJob represents a PaddleJob resource: a distributed PaddlePaddle
// training job.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,path=paddlejobs,singular=paddlejob
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.paddleReplicaSpecs.Worker.replicas,statuspath=.status.replicaStatuses.Worker.active,selectorpath=.status.replicaStatuses.Worker.selector
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1,description="Whole-job restarts made by the failure policy"
type PaddleJob struct {
	// Standard Kubernetes type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard Kubernetes object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Specification of the desired state of the PaddleJob.
	// +optional
	Spec PaddleJobSpec `json:"spec,omitempty"`

	// Most recently observed status of the PaddleJob.
	// Read-only (modified by the system).
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// PaddleJobSpec is a desired state description of the PaddleJob.
type PaddleJobSpec struct {
	// RunPolicy encapsulates various runtime policies of the distributed training
	// job, for example how to clean up resources and how long the job can stay
	// active.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy"`

	// ElasticPolicy holds the elastic configuration of the job: the range of
	// Worker replicas and the autoscaling metrics.
	// +optional
	ElasticPolicy *PaddleElasticPolicy `json:"elasticPolicy,omitempty"`

	// PaddleReplicaSpecs maps a replica type ("Master" or "Worker") to its
	// ReplicaSpec, for example {"Master": {...}, "Worker": {...}}.
	PaddleReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"paddleReplicaSpecs"`
}

// PaddleElasticPolicy is the elastic training configuration of a PaddleJob.
type PaddleElasticPolicy struct {
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

	// MaxRestarts is the maximum number of restarts of the worker group
	// before the job fails.
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`

	// Metrics are the autoscaling/v2 metric specifications used to compute
	// the desired number of Worker replicas (the largest replica count
	// across all metrics wins).
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`
}

// PaddleJobList is a list of PaddleJobs.
// +kubebuilder:object:root=true
type PaddleJobList struct {
	// Standard type metadata.
	metav1.TypeMeta `json:",inline"`

	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// List of PaddleJobs.
	Items []PaddleJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PaddleJob{}, &PaddleJobList{})
}
