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

const (
	// ReplicaIndexLabel is the label key holding the index of a replica
	// (pod) inside its replica type, e.g. "0".
	ReplicaIndexLabel = "training.kubeflow.org/replica-index"

	// ReplicaTypeLabel is the label key holding the lower-cased replica type
	// of a pod or service, e.g. "worker".
	ReplicaTypeLabel = "training.kubeflow.org/replica-type"

	// OperatorNameLabel is the label key holding the name of the controller
	// that created a pod or service, e.g. "pytorchjob-controller".
	OperatorNameLabel = "training.kubeflow.org/operator-name"

	// JobNameLabel is the label key holding the name of the job that owns a
	// pod or service.
	JobNameLabel = "training.kubeflow.org/job-name"

	// JobRoleLabel is the label key marking the role of a pod in its job.
	JobRoleLabel = "training.kubeflow.org/job-role"

	// JobRoleMaster is the JobRoleLabel value of the master (or chief) pod.
	JobRoleMaster = "master"
)

const (
	// KubeflowJobsController is the runPolicy.managedBy value meaning the job
	// is reconciled by this operator (the same as an unset field).
	KubeflowJobsController = "kubeflow.org/training-operator"

	// MultiKueueController is the runPolicy.managedBy value meaning the job is
	// reconciled by Kueue's MultiKueue; this operator leaves it alone.
	MultiKueueController = "kueue.x-k8s.io/multikueue"
)

// IsChiefOrMaster reports whether the replica type is the TFJob Chief or
// Master type (the two are equivalent). The comparison is case-sensitive.
func IsChiefOrMaster(t ReplicaType) bool {
	return t == TFJobReplicaTypeChief || t == TFJobReplicaTypeMaster
}
