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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupLabel is the pod label that makes a pod a member of the PodGroup
// it names (in the pod's namespace).
const PodGroupLabel = "scheduling.x-k8s.io/pod-group"

// PodGroupPhase is the phase of a pod group at the current time.
type PodGroupPhase string

// The phases the coscheduling plugin and its controller set.
const (
	// PodGroupPending means the pod group has been accepted by the system,
	// but the scheduler cannot allocate enough resources to it.
	PodGroupPending PodGroupPhase = "Pending"
	// PodGroupRunning means minMember pods of the group are running.
	PodGroupRunning PodGroupPhase = "Running"
	// PodGroupScheduling means the number of pods scheduled is less than minMember.
	PodGroupScheduling PodGroupPhase = "Scheduling"
	// PodGroupUnknown means part of minMember pods are running but the others
	// cannot be scheduled.
	PodGroupUnknown PodGroupPhase = "Unknown"
	// PodGroupFinished means all pods of the group succeeded.
	PodGroupFinished PodGroupPhase = "Finished"
	// PodGroupFailed means at least one pod of the group failed.
	PodGroupFailed PodGroupPhase = "Failed"
	// PodGroupScheduled means all pods of the group are scheduled.
	PodGroupScheduled PodGroupPhase = "Scheduled"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=podgroups,scope=Namespaced,shortName={pg,pgs}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="MinMember",type=integer,JSONPath=`.spec.minMember`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// PodGroup is a collection of pods that the coscheduling plugin schedules
// all-or-nothing.
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the pod group.
	// +optional
	Spec PodGroupSpec `json:"spec,omitempty"`

	// Status is the observed state of the pod group.
	// +optional
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupSpec is the desired state of a pod group.
type PodGroupSpec struct {
	// MinMember is the minimal number of members (pods) to run the pod group;
	// if there are not enough resources to start all of them, the scheduler
	// starts none.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinMember int32 `json:"minMember,omitempty"`

	// MinResources is the minimal amount of resources the members need to run
	// the pod group; if it is not available, the scheduler starts none.
	// +optional
	MinResources corev1.ResourceList `json:"minResources,omitempty"`

	// ScheduleTimeoutSeconds is the maximal time members wait before the pod
	// group runs.
	// +optional
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// PodGroupStatus is the observed state of a pod group.
type PodGroupStatus struct {
	// Phase is the current phase of the pod group.
	// +optional
	Phase PodGroupPhase `json:"phase,omitempty"`

	// OccupiedBy is the UID of the workload (for example a Deployment) that
	// occupies the pod group. Empty if not initialized.
	// +optional
	OccupiedBy string `json:"occupiedBy,omitempty"`

	// Scheduled is the number of scheduled pods.
	// +optional
	Scheduled int32 `json:"scheduled,omitempty"`

	// Running is the number of running pods.
	// +optional
	Running int32 `json:"running,omitempty"`

	// Succeeded is the number of pods that reached phase Succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of pods that reached phase Failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// ScheduleStartTime is when the group started to be scheduled.
	// +optional
	ScheduleStartTime metav1.Time `json:"scheduleStartTime,omitempty"`
}

// +kubebuilder:object:root=true

// PodGroupList is a list of PodGroups.
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items is the list of PodGroups.
	Items []PodGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodGroup{}, &PodGroupList{})
}
