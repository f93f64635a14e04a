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

import corev1 "k8s.io/api/core/v1"

// FailurePolicy restarts the whole job when one of its pods fails, within a
// budget, or fails it at once, by rules. An addition to v1: a job without it
// behaves as in v1 (per-replica restartPolicy and backoffLimit only).
type FailurePolicy struct {
	// MaxRestarts is how many whole-job restarts that count (RestartJob)
	// the job may make before it fails.
	// +kubebuilder:validation:Minimum=0
	MaxRestarts int32 `json:"maxRestarts"`

	// MaxTotalRestarts bounds every whole-job restart, those of
	// RestartJobAndIgnoreMaxRestarts rules included: once the job has made
	// this many (status.restarts), the next restart due fails it (reason
	// ReachedMaxTotalRestarts), so a failure that an ignoring rule matches
	// every time cannot restart the job forever. Unset: no bound besides
	// maxRestarts. At least maxRestarts.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxTotalRestarts *int32 `json:"maxTotalRestarts,omitempty"`

	// RestartStrategy says how the pods of a new attempt are created:
	// BlockingRecreate (the default) creates none until every pod of the
	// previous attempt is gone, so new ranks never meet dying ones; Recreate
	// recreates each pod as soon as its own predecessor is gone.
	// +optional
	RestartStrategy RestartStrategy `json:"restartStrategy,omitempty"`

	// RestartBackoff delays the pods of each new attempt, doubling the delay
	// with every whole-job restart, so a failure that recurs at once (a bad
	// node, a service the job needs that is down) does not restart the job
	// as fast as it can fail. Unset: no delay.
	// +optional
	RestartBackoff *RestartBackoff `json:"restartBackoff,omitempty"`

	// LostPodTimeoutSeconds is how long a whole-job restart waits for a pod
	// of an earlier attempt that is still terminating, past its grace period,
	// on a node that is NotReady or gone, before the operator force-deletes
	// it as the pod garbage collector does on a lost node. A pod on a Ready
	// node is never force-deleted. Unset: 300, how long Kubernetes keeps pods
	// on a NotReady node by default (its not-ready toleration).
	// +kubebuilder:validation:Minimum=0
	// +optional
	LostPodTimeoutSeconds *int32 `json:"lostPodTimeoutSeconds,omitempty"`

	// Rules are evaluated in order against the earliest failure of the
	// current attempt; the first that matches decides. No match: RestartJob.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Rules []FailurePolicyRule `json:"rules,omitempty"`
}

// RestartBackoff is the delay before a new attempt's pods are created:
// initialDelaySeconds after the first whole-job restart, doubled after each
// further one, at most maxDelaySeconds.
type RestartBackoff struct {
	// InitialDelaySeconds is the delay after the first restart.
	// +kubebuilder:validation:Minimum=1
	InitialDelaySeconds int32 `json:"initialDelaySeconds"`

	// MaxDelaySeconds caps the delay. Unset: 300, the kubelet's cap on
	// a crash-looping container's back-off. At least initialDelaySeconds.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxDelaySeconds *int32 `json:"maxDelaySeconds,omitempty"`
}

// DefaultLostPodTimeoutSeconds and DefaultMaxRestartDelaySeconds are the
// engine's values for the unset fields.
const (
	DefaultLostPodTimeoutSeconds  = 300
	DefaultMaxRestartDelaySeconds = 300
)

// RestartStrategy is how a whole-job restart recreates pods.
// +kubebuilder:validation:Enum=BlockingRecreate;Recreate
type RestartStrategy string

const (
	// RestartStrategyBlockingRecreate creates the new attempt's pods once
	// every pod of the old attempt is gone.
	RestartStrategyBlockingRecreate RestartStrategy = "BlockingRecreate"
	// RestartStrategyRecreate recreates each pod once its predecessor is gone.
	RestartStrategyRecreate RestartStrategy = "Recreate"
)

// FailurePolicyAction is what a matching rule does.
// +kubebuilder:validation:Enum=FailJob;RestartJob;RestartJobAndIgnoreMaxRestarts;UseReplicaRestartPolicy
type FailurePolicyAction string

const (
	// FailJobAction fails the job at once.
	FailJobAction FailurePolicyAction = "FailJob"
	// RestartJobAction restarts every replica; it counts toward maxRestarts.
	RestartJobAction FailurePolicyAction = "RestartJob"
	// RestartJobAndIgnoreMaxRestartsAction restarts every replica without
	// counting toward maxRestarts (infrastructure failures).
	RestartJobAndIgnoreMaxRestartsAction FailurePolicyAction = "RestartJobAndIgnoreMaxRestarts"
	// UseReplicaRestartPolicyAction handles the failed pod alone, by its
	// replica's restartPolicy and the job's backoffLimit, as v1 does.
	UseReplicaRestartPolicyAction FailurePolicyAction = "UseReplicaRestartPolicy"
)

// FailurePolicyRule matches a pod failure and names the action to take. A
// rule with neither onExitCodes nor onPodConditions matches any failure.
type FailurePolicyRule struct {
	// Name identifies the rule in conditions, events and messages; unique
	// within the policy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// Action is what a failure matching the rule does.
	Action FailurePolicyAction `json:"action"`

	// TargetReplicaTypes narrows the rule to failures of these replica
	// types; empty means every replica type.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	TargetReplicaTypes []ReplicaType `json:"targetReplicaTypes,omitempty"`

	// OnExitCodes matches the exit code of a container of the failed pod.
	// +optional
	OnExitCodes *FailurePolicyOnExitCodesRequirement `json:"onExitCodes,omitempty"`

	// OnPodConditions matches a condition of the failed pod (for example
	// DisruptionTarget, which evictions and preemptions set).
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	OnPodConditions []FailurePolicyOnPodConditionsPattern `json:"onPodConditions,omitempty"`
}

// FailurePolicyOnExitCodesOperator is how exit codes are compared.
// +kubebuilder:validation:Enum=In;NotIn
type FailurePolicyOnExitCodesOperator string

const (
	// FailurePolicyOnExitCodesOpIn matches an exit code in values.
	FailurePolicyOnExitCodesOpIn FailurePolicyOnExitCodesOperator = "In"
	// FailurePolicyOnExitCodesOpNotIn matches a non-zero exit code not in values.
	FailurePolicyOnExitCodesOpNotIn FailurePolicyOnExitCodesOperator = "NotIn"
)

// FailurePolicyOnExitCodesRequirement matches a container's exit code.
type FailurePolicyOnExitCodesRequirement struct {
	// ContainerName is the container or init container whose exit code is
	// read. Empty reads the job's main container (the kind's default:
	// pytorch, tensorflow, ...; an MPIJob's spec.mainContainer, else its
	// first container) or, when the pod failed before that one ran, the
	// init container that failed it (native sidecars excepted).
	// +optional
	ContainerName string `json:"containerName,omitempty"`

	// Operator is In or NotIn.
	Operator FailurePolicyOnExitCodesOperator `json:"operator"`

	// Values are the exit codes, 1-255, unique.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=255
	// +listType=set
	Values []int32 `json:"values"`
}

// FailurePolicyOnPodConditionsPattern matches a pod condition.
type FailurePolicyOnPodConditionsPattern struct {
	// Type is the pod condition type, e.g. DisruptionTarget.
	Type corev1.PodConditionType `json:"type"`

	// Status is the condition's status to match; defaults to True.
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
}

// RestartAttemptLabel is the label and annotation of the pods of a job with
// a failure policy: the whole-job restart attempt the pod belongs to
// (status.restarts when it was created), readable through the downward API.
const RestartAttemptLabel = "training.kubeflow.org/restart-attempt"

// Reasons of the conditions, and of their events, that record the failure
// policy's decisions. v1 had no failure policy, so these are its own; every
// other path (per-pod retries, backoffLimit, deadlines, a replica's own
// restartPolicy failing the job) keeps v1's <Kind>Restarting and
// <Kind>Failed. The rule's name is in the message.
const (
	// FailurePolicyRestartJobReason (Restarting=True): a rule with action
	// RestartJob matched; the restart counts toward maxRestarts.
	FailurePolicyRestartJobReason = "FailurePolicyRestartJob"
	// FailurePolicyRestartJobAndIgnoreMaxRestartsReason (Restarting=True): a
	// rule with action RestartJobAndIgnoreMaxRestarts matched.
	FailurePolicyRestartJobAndIgnoreMaxRestartsReason = "FailurePolicyRestartJobAndIgnoreMaxRestarts"
	// FailurePolicyNoRuleMatchedReason (Restarting=True): no rule matched the
	// failure, so the job restarts as under RestartJob (counted).
	FailurePolicyNoRuleMatchedReason = "FailurePolicyNoRuleMatched"
	// FailurePolicyFailJobReason (Failed=True): a rule with action FailJob
	// matched.
	FailurePolicyFailJobReason = "FailurePolicyFailJob"
	// ReachedMaxRestartsReason (Failed=True): a counted restart was due
	// (a RestartJob rule, or no rule) with maxRestarts spent.
	ReachedMaxRestartsReason = "ReachedMaxRestarts"
	// ReachedMaxTotalRestartsReason (Failed=True): a restart of any kind
	// was due with maxTotalRestarts made.
	ReachedMaxTotalRestartsReason = "ReachedMaxTotalRestarts"
)

// SuspendedDisruptionReason is the reason of the DisruptionTarget pod
// condition the operator sets on a pod before deleting it because its job
// is suspended: the pod's end is no failure, whoever reads it later.
const SuspendedDisruptionReason = "TrainingJobSuspended"

// PodTrackingFinalizer is on the pods of a job whose failures decide its
// outcome (backoffLimit or failurePolicy set): a pod that fails or is
// deleted stays until its failure is counted in the job's status, so no
// failure is lost while the operator is down and none is counted twice.
const PodTrackingFinalizer = "training.kubeflow.org/pod-tracking"

// SetDefaultsFailurePolicy fills a failure policy's defaults: restartStrategy
// BlockingRecreate and each pod-condition pattern's status True.
func SetDefaultsFailurePolicy(fp *FailurePolicy) {
	if fp == nil {
		return
	}
	if fp.RestartStrategy == "" {
		fp.RestartStrategy = RestartStrategyBlockingRecreate
	}
	for i := range fp.Rules {
		for j := range fp.Rules[i].OnPodConditions {
			if c := &fp.Rules[i].OnPodConditions[j]; c.Status == "" {
				c.Status = corev1.ConditionTrue
			}
		}
	}
}
