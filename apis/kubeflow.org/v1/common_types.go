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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplicaType is the name of a group of replicas in a job, for example
// "Master", "Worker", "PS", "Chief", "Evaluator" or "Launcher".
type ReplicaType string

// ReplicaSpec is a description of a group of identical replicas (pods) of a job.
type ReplicaSpec struct {
	// Replicas is the desired number of replicas of the given template.
	// If unspecified, defaults to 1 (0 for the MPIJob Worker).
	// The schema caps it at 10000 (as the validating webhook does) because
	// the scale subresource (kubectl scale, an HPA) bypasses webhooks.
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Template is the object that describes the pod that
	// will be created for this replica. RestartPolicy in PodTemplateSpec
	// will be overridden by the RestartPolicy in ReplicaSpec.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`

	// RestartPolicy decides what happens to the replica's pods when they fail:
	// one of Always, OnFailure, Never or ExitCode. The default depends on the
	// kind (OnFailure for PyTorchJob and PaddleJob, Never for the others).
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// RestartPolicy describes how the replicas of a job should be restarted.
// ExitCode restarts a replica whose container exited with a retryable exit
// code (128-255, e.g. killed by a signal) and fails the job on a permanent
// error (exit codes 1-127).
// +kubebuilder:validation:Enum="";Always;OnFailure;Never;ExitCode
type RestartPolicy string

const (
	// RestartPolicyAlways always restarts failed replicas.
	RestartPolicyAlways RestartPolicy = "Always"
	// RestartPolicyOnFailure restarts replicas that failed.
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	// RestartPolicyNever never restarts replicas; a failed replica fails the job.
	RestartPolicyNever RestartPolicy = "Never"
	// RestartPolicyExitCode restarts replicas that exited with a retryable
	// exit code (128-255) and fails the job on exit codes 1-127.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// CleanPodPolicy describes how to deal with pods when the job is finished.
// +kubebuilder:validation:Enum="";All;Running;None
type CleanPodPolicy string

const (
	// CleanPodPolicyUndefined means the policy was not set.
	CleanPodPolicyUndefined CleanPodPolicy = ""
	// CleanPodPolicyAll deletes all pods of the job once it is finished.
	CleanPodPolicyAll CleanPodPolicy = "All"
	// CleanPodPolicyRunning deletes only the pods that are still running (or
	// pending) once the job is finished.
	CleanPodPolicyRunning CleanPodPolicy = "Running"
	// CleanPodPolicyNone keeps all pods once the job is finished.
	CleanPodPolicyNone CleanPodPolicy = "None"
)

// RunPolicy encapsulates various runtime policies of the distributed training
// job, for example how to clean up resources and how long the job can stay
// active.
// +kubebuilder:validation:XValidation:rule="has(self.failurePolicy) == has(oldSelf.failurePolicy)",message="spec.runPolicy.failurePolicy is immutable"
type RunPolicy struct {
	// CleanPodPolicy defines the policy to kill pods after the job completes:
	// one of All, Running or None.
	// Default to None. With a failurePolicy it is left unset, and unset
	// deletes the running pods of a job that failed (failed pods are kept).
	// +optional
	CleanPodPolicy *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`

	// TTLSecondsAfterFinished is the TTL to clean up jobs: the job is deleted
	// this many seconds after it finished (Succeeded or Failed).
	// Default to infinite.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// Specifies the duration in seconds relative to the startTime that the job may be active
	// before the system tries to terminate it; value must be positive integer.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// Optional number of retries before marking this job failed.
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// SchedulingPolicy defines the policy related to scheduling, e.g. gang-scheduling.
	// +optional
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`

	// suspend specifies whether the Job controller should create Pods or not.
	// If a Job is created with suspend set to true, no Pods are created by
	// the Job controller. If a Job is suspended after creation (i.e. the
	// flag goes from false to true), the Job controller will delete all
	// active Pods and PodGroups associated with this Job.
	// Users must design their workload to gracefully handle this.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ManagedBy is used to indicate the controller or entity that manages a job.
	// The value must be either empty, 'kubeflow.org/training-operator' or
	// 'kueue.x-k8s.io/multikueue'.
	// The training-operator reconciles a job which doesn't have this
	// field at all or the field value is the reserved string
	// 'kubeflow.org/training-operator', but delegates reconciling the job
	// with 'kueue.x-k8s.io/multikueue' to Kueue.
	// The field is immutable.
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`

	// FailurePolicy restarts the whole job when a pod fails, or fails it, by
	// rules and within a budget of restarts. An addition to v1; immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.runPolicy.failurePolicy is immutable"
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
}

// SchedulingPolicy encapsulates various scheduling policies of the distributed
// training job, for example `minAvailable` for gang-scheduling.
type SchedulingPolicy struct {
	// MinAvailable is the minimum number of pods that must be schedulable
	// together for the job to start (gang scheduling). Defaults to the total
	// number of replicas.
	// +optional
	MinAvailable *int32 `json:"minAvailable,omitempty"`

	// Queue is the name of the gang-scheduler queue the job is submitted to.
	// It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.runPolicy.schedulingPolicy.queue is immutable"
	// +optional
	Queue string `json:"queue,omitempty"`

	// MinResources is the minimum amount of resources that must be available
	// for the job's pod group to be scheduled. Defaults to the sum of the
	// requests of the first minAvailable pods.
	// +optional
	MinResources *map[corev1.ResourceName]resource.Quantity `json:"minResources,omitempty"`

	// PriorityClass is the name of the PriorityClass of the job's pod group.
	// +optional
	PriorityClass string `json:"priorityClass,omitempty"`

	// ScheduleTimeoutSeconds is the maximum time, in seconds, the gang
	// scheduler waits for the whole pod group to be schedulable.
	// +optional
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// JobStatus represents the current observed state of the training Job.
type JobStatus struct {
	// Conditions is an array of current observed job conditions.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`

	// ReplicaStatuses is map of ReplicaType and ReplicaStatus,
	// specifies the status of each replica.
	// +optional
	ReplicaStatuses map[ReplicaType]*ReplicaStatus `json:"replicaStatuses,omitempty"`

	// Represents time when the job was acknowledged by the job controller.
	// It is not guaranteed to be set in happens-before order across separate operations.
	// It is represented in RFC3339 form and is in UTC.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// Represents time when the job was completed. It is not guaranteed to
	// be set in happens-before order across separate operations.
	// It is represented in RFC3339 form and is in UTC.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Represents last time when the job was reconciled. It is not guaranteed to
	// be set in happens-before order across separate operations.
	// It is represented in RFC3339 form and is in UTC.
	// +optional
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`

	// RestartCount is how many times the operator has retried the job's
	// replicas: failed pods it recreated, pods deleted or evicted by others,
	// and in-place container restarts of pods it replaced. backoffLimit is
	// checked against it, so it survives operator restarts. An addition to v1.
	// +optional
	RestartCount int32 `json:"restartCount,omitempty"`

	// CountedPods are the UIDs of failed or deleted pods already counted in
	// restartCount that may still exist. It is written together with
	// restartCount, so an operator that restarts while such a pod is still
	// terminating does not count it twice; a UID goes once its pod is gone.
	// An addition to v1.
	// +optional
	// +listType=set
	CountedPods []string `json:"countedPods,omitempty"`

	// Restarts is how many whole-job restarts the failure policy made; the
	// pods of the current attempt carry it in their restart-attempt label.
	// Set (0 included, so kubectl's Restarts column shows it) on jobs with a
	// failure policy only. An addition to v1.
	// +optional
	Restarts *int32 `json:"restarts,omitempty"`

	// RestartsCountTowardsMax is how many of restarts count toward
	// failurePolicy.maxRestarts. An addition to v1.
	// +optional
	RestartsCountTowardsMax int32 `json:"restartsCountTowardsMax,omitempty"`

	// TerminatingPods is how many pods of an earlier attempt a whole-job
	// restart still waits for past their grace period (stuck terminating,
	// e.g. on a lost node); the Restarting condition names them. An addition
	// to v1.
	// +optional
	TerminatingPods int32 `json:"terminatingPods,omitempty"`
}

// ReplicaStatus represents the current observed state of the replica.
type ReplicaStatus struct {
	// The number of actively running pods.
	// +optional
	Active int32 `json:"active,omitempty"`

	// The number of pods which reached phase Succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// The number of pods which reached phase Failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// Deprecated: Use Selector instead
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// Selector is the label selector, in string form, that matches the pods
	// of this replica type (used by the scale subresource).
	// The result of matchLabels and matchExpressions are ANDed.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// JobCondition describes the state of the job at a certain point.
type JobCondition struct {
	// Type of job condition.
	Type JobConditionType `json:"type"`

	// Status of the condition, one of True, False, Unknown.
	Status corev1.ConditionStatus `json:"status"`

	// The reason for the condition's last transition.
	// +optional
	Reason string `json:"reason,omitempty"`

	// A human readable message indicating details about the transition.
	// +optional
	Message string `json:"message,omitempty"`

	// The last time this condition was updated.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`

	// Last time the condition transitioned from one status to another.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// JobConditionType defines all kinds of types of JobStatus.
type JobConditionType string

const (
	// JobCreated means the job was accepted and its pods and services are
	// being created; some of them may not be running yet.
	JobCreated JobConditionType = "Created"

	// JobRunning means the pods of the job were scheduled and started, and
	// the training is in progress.
	JobRunning JobConditionType = "Running"

	// JobRestarting means at least one pod of the job failed and is being
	// restarted according to the replica's restart policy.
	JobRestarting JobConditionType = "Restarting"

	// JobSucceeded means the job finished successfully.
	JobSucceeded JobConditionType = "Succeeded"

	// JobSuspended means the job is suspended (runPolicy.suspend is true)
	// and its pods were removed.
	JobSuspended JobConditionType = "Suspended"

	// JobFailed means the job finished unsuccessfully and will not be
	// restarted.
	JobFailed JobConditionType = "Failed"
)

// Attempt is the job's current restart attempt: status.restarts, 0 when
// unset.
func (s *JobStatus) Attempt() int32 {
	if s.Restarts == nil {
		return 0
	}
	return *s.Restarts
}
