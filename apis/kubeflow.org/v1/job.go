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
	"k8s.io/apimachinery/pkg/runtime"
)

// Job is what every kubeflow.org/v1 job kind has, so that code shared by
// the kinds (the engine, gang scheduling, tests) reads them without a type
// switch. It names no controller-runtime type: apis/ imports nothing of the
// operator's and no controller library.
// +kubebuilder:object:generate=false
type Job interface {
	metav1.Object
	runtime.Object
	// KindInfo is the kind's constants.
	KindInfo() KindInfo
	// ReplicaSpecs is the kind's replica spec map (spec.<kind>ReplicaSpecs).
	ReplicaSpecs() map[ReplicaType]*ReplicaSpec
	// RunPolicy points at the job's spec.runPolicy.
	RunPolicy() *RunPolicy
	// JobStatus points at the job's status.
	JobStatus() *JobStatus
	// ApplyDefaults applies SetDefaults_<Kind> in place.
	ApplyDefaults()
}

// KindInfo holds the constants of one job kind.
// +kubebuilder:object:generate=false
type KindInfo struct {
	// Kind is the kind name, e.g. PyTorchJob; it prefixes condition reasons.
	Kind string
	// Plural is the resource name, e.g. pytorchjobs.
	Plural string
	// ControllerName is the operator-name label value and event source.
	ControllerName string
	// FrameworkName is the framework label of the job metrics.
	FrameworkName string
	// DefaultContainerName is the container that carries ports and exit codes.
	DefaultContainerName string
	// ReplicaSpecsField is the JSON name of the replica spec map, e.g.
	// pytorchReplicaSpecs, for field paths.
	ReplicaSpecsField string
	// ReplicaTypes are every replica type of the kind, the one that leads
	// (chief, master, launcher) first. Kueue's integrations of these kinds
	// list a job's pod sets in this order, so queued jobs are described
	// alike whoever integrates them.
	ReplicaTypes []ReplicaType
}

var (
	_ Job = (*PyTorchJob)(nil)
	_ Job = (*TFJob)(nil)
	_ Job = (*MPIJob)(nil)
	_ Job = (*XGBoostJob)(nil)
	_ Job = (*PaddleJob)(nil)
	_ Job = (*JAXJob)(nil)
)

// KindInfo implements Job.
func (*PyTorchJob) KindInfo() KindInfo {
	return KindInfo{Kind: PyTorchJobKind, Plural: PyTorchJobPlural, ControllerName: PyTorchJobControllerName,
		FrameworkName: PyTorchJobFrameworkName, DefaultContainerName: PyTorchJobDefaultContainerName,
		ReplicaSpecsField: "pytorchReplicaSpecs", ReplicaTypes: []ReplicaType{PyTorchJobReplicaTypeMaster, PyTorchJobReplicaTypeWorker}}
}

// ReplicaSpecs implements Job.
func (j *PyTorchJob) ReplicaSpecs() map[ReplicaType]*ReplicaSpec { return j.Spec.PyTorchReplicaSpecs }

// RunPolicy implements Job.
func (j *PyTorchJob) RunPolicy() *RunPolicy { return &j.Spec.RunPolicy }

// JobStatus implements Job.
func (j *PyTorchJob) JobStatus() *JobStatus { return &j.Status }

// ApplyDefaults implements Job.
func (j *PyTorchJob) ApplyDefaults() { SetDefaults_PyTorchJob(j) }

// KindInfo implements Job.
func (*TFJob) KindInfo() KindInfo {
	return KindInfo{Kind: TFJobKind, Plural: TFJobPlural, ControllerName: TFJobControllerName,
		FrameworkName: TFJobFrameworkName, DefaultContainerName: TFJobDefaultContainerName,
		ReplicaSpecsField: "tfReplicaSpecs", ReplicaTypes: []ReplicaType{TFJobReplicaTypeChief, TFJobReplicaTypeMaster, TFJobReplicaTypePS, TFJobReplicaTypeWorker, TFJobReplicaTypeEval}}
}

// ReplicaSpecs implements Job.
func (j *TFJob) ReplicaSpecs() map[ReplicaType]*ReplicaSpec { return j.Spec.TFReplicaSpecs }

// RunPolicy implements Job.
func (j *TFJob) RunPolicy() *RunPolicy { return &j.Spec.RunPolicy }

// JobStatus implements Job.
func (j *TFJob) JobStatus() *JobStatus { return &j.Status }

// ApplyDefaults implements Job.
func (j *TFJob) ApplyDefaults() { SetDefaults_TFJob(j) }

// KindInfo implements Job.
func (*MPIJob) KindInfo() KindInfo {
	return KindInfo{Kind: MPIJobKind, Plural: MPIJobPlural, ControllerName: MPIJobControllerName,
		FrameworkName: MPIJobFrameworkName, DefaultContainerName: MPIJobDefaultContainerName,
		ReplicaSpecsField: "mpiReplicaSpecs", ReplicaTypes: []ReplicaType{MPIJobReplicaTypeLauncher, MPIJobReplicaTypeWorker}}
}

// ReplicaSpecs implements Job.
func (j *MPIJob) ReplicaSpecs() map[ReplicaType]*ReplicaSpec { return j.Spec.MPIReplicaSpecs }

// RunPolicy implements Job. The controller reads the cleanPodPolicy of
// EffectiveCleanPodPolicy instead of this one's.
func (j *MPIJob) RunPolicy() *RunPolicy { return &j.Spec.RunPolicy }

// JobStatus implements Job.
func (j *MPIJob) JobStatus() *JobStatus { return &j.Status }

// ApplyDefaults implements Job.
func (j *MPIJob) ApplyDefaults() { SetDefaults_MPIJob(j) }

// KindInfo implements Job.
func (*XGBoostJob) KindInfo() KindInfo {
	return KindInfo{Kind: XGBoostJobKind, Plural: XGBoostJobPlural, ControllerName: XGBoostJobControllerName,
		FrameworkName: XGBoostJobFrameworkName, DefaultContainerName: XGBoostJobDefaultContainerName,
		ReplicaSpecsField: "xgbReplicaSpecs", ReplicaTypes: []ReplicaType{XGBoostJobReplicaTypeMaster, XGBoostJobReplicaTypeWorker}}
}

// ReplicaSpecs implements Job.
func (j *XGBoostJob) ReplicaSpecs() map[ReplicaType]*ReplicaSpec { return j.Spec.XGBReplicaSpecs }

// RunPolicy implements Job.
func (j *XGBoostJob) RunPolicy() *RunPolicy { return &j.Spec.RunPolicy }

// JobStatus implements Job.
func (j *XGBoostJob) JobStatus() *JobStatus { return &j.Status }

// ApplyDefaults implements Job.
func (j *XGBoostJob) ApplyDefaults() { SetDefaults_XGBoostJob(j) }

// KindInfo implements Job.
func (*PaddleJob) KindInfo() KindInfo {
	return KindInfo{Kind: PaddleJobKind, Plural: PaddleJobPlural, ControllerName: PaddleJobControllerName,
		FrameworkName: PaddleJobFrameworkName, DefaultContainerName: PaddleJobDefaultContainerName,
		ReplicaSpecsField: "paddleReplicaSpecs", ReplicaTypes: []ReplicaType{PaddleJobReplicaTypeMaster, PaddleJobReplicaTypeWorker}}
}

// ReplicaSpecs implements Job.
func (j *PaddleJob) ReplicaSpecs() map[ReplicaType]*ReplicaSpec { return j.Spec.PaddleReplicaSpecs }

// RunPolicy implements Job.
func (j *PaddleJob) RunPolicy() *RunPolicy { return &j.Spec.RunPolicy }

// JobStatus implements Job.
func (j *PaddleJob) JobStatus() *JobStatus { return &j.Status }

// ApplyDefaults implements Job.
func (j *PaddleJob) ApplyDefaults() { SetDefaults_PaddleJob(j) }

// KindInfo implements Job.
func (*JAXJob) KindInfo() KindInfo {
	return KindInfo{Kind: JAXJobKind, Plural: JAXJobPlural, ControllerName: JAXJobControllerName,
		FrameworkName: JAXJobFrameworkName, DefaultContainerName: JAXJobDefaultContainerName,
		ReplicaSpecsField: "jaxReplicaSpecs", ReplicaTypes: []ReplicaType{JAXJobReplicaTypeWorker}}
}

// ReplicaSpecs implements Job.
func (j *JAXJob) ReplicaSpecs() map[ReplicaType]*ReplicaSpec { return j.Spec.JAXReplicaSpecs }

// RunPolicy implements Job.
func (j *JAXJob) RunPolicy() *RunPolicy { return &j.Spec.RunPolicy }

// JobStatus implements Job.
func (j *JAXJob) JobStatus() *JobStatus { return &j.Status }

// ApplyDefaults implements Job.
func (j *JAXJob) ApplyDefaults() { SetDefaults_JAXJob(j) }
