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
	"fmt"

	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The SetDefaults_<Kind> functions fill in the defaults of a job in place.
// They run in the mutating webhook and again in the controller for objects
// that bypassed the webhook, so they are idempotent, never panic on partial
// objects (nil maps, nil replica specs, pods without containers) and never
// touch runPolicy.suspend or runPolicy.managedBy.
//
// They are deliberately not registered as scheme defaulters.

// NprocPerNodeAuto is the default value of PyTorchJobSpec.NprocPerNode.
const NprocPerNodeAuto = "auto"

// SetDefaults_PyTorchJob sets the defaults of a PyTorchJob: cleanPodPolicy
// None (not with a failure policy), canonical replica type names (Master, Worker), replicas 1,
// restartPolicy OnFailure, the pytorchjob-port port and nprocPerNode "auto".
// Unset elastic min/max replicas are left unset: they follow Worker.replicas
// when used (PyTorchJobSpec.ElasticReplicas).
func SetDefaults_PyTorchJob(job *PyTorchJob) {
	if job == nil {
		return
	}
	spec := &job.Spec
	SetDefaultsFailurePolicy(spec.RunPolicy.FailurePolicy)
	setDefaultCleanPodPolicy(&spec.RunPolicy)
	normalizeReplicaTypes(spec.PyTorchReplicaSpecs, PyTorchJobReplicaTypeMaster, PyTorchJobReplicaTypeWorker)
	for _, rs := range spec.PyTorchReplicaSpecs {
		setDefaultReplicaSpec(rs, 1, PyTorchJobDefaultRestartPolicy, PyTorchJobDefaultContainerName)
		if rs != nil {
			setDefaultPort(&rs.Template.Spec, PyTorchJobDefaultContainerName, PyTorchJobDefaultPortName, PyTorchJobDefaultPort)
		}
	}
	if (spec.ElasticPolicy == nil || spec.ElasticPolicy.NProcPerNode == nil) && spec.NprocPerNode == nil {
		spec.NprocPerNode = ptrTo(NprocPerNodeAuto)
	}
}

// SetDefaults_TFJob sets the defaults of a TFJob: cleanPodPolicy None (not
// with a failure policy), successPolicy "" (a non-nil pointer), canonical replica type names (PS,
// Worker, Chief, Master, Evaluator), replicas 1, restartPolicy Never and the
// tfjob-port port.
func SetDefaults_TFJob(job *TFJob) {
	if job == nil {
		return
	}
	spec := &job.Spec
	SetDefaultsFailurePolicy(spec.RunPolicy.FailurePolicy)
	setDefaultCleanPodPolicy(&spec.RunPolicy)
	if spec.SuccessPolicy == nil {
		spec.SuccessPolicy = ptrTo(SuccessPolicyDefault)
	}
	normalizeReplicaTypes(spec.TFReplicaSpecs,
		TFJobReplicaTypePS, TFJobReplicaTypeWorker, TFJobReplicaTypeChief, TFJobReplicaTypeMaster, TFJobReplicaTypeEval)
	for _, rs := range spec.TFReplicaSpecs {
		setDefaultReplicaSpec(rs, 1, TFJobDefaultRestartPolicy, TFJobDefaultContainerName)
		if rs != nil {
			setDefaultPort(&rs.Template.Spec, TFJobDefaultContainerName, TFJobDefaultPortName, TFJobDefaultPort)
		}
	}
}

// SetDefaults_MPIJob sets the defaults of an MPIJob: the deprecated
// spec.cleanPodPolicy None when neither it nor runPolicy.cleanPodPolicy is
// set and there is no failure policy; Launcher replicas 1, Worker replicas 0 and restartPolicy Never for
// both. Replica type names are not normalized and no port is added.
//
// The two cleanPodPolicy fields are not synchronized: v1 did that in memory
// on every reconcile, and a stored copy in runPolicy would shadow any later
// update of spec.cleanPodPolicy. Readers use EffectiveCleanPodPolicy.
func SetDefaults_MPIJob(job *MPIJob) {
	if job == nil {
		return
	}
	spec := &job.Spec
	SetDefaultsFailurePolicy(spec.RunPolicy.FailurePolicy)
	if spec.RunPolicy.CleanPodPolicy == nil && spec.CleanPodPolicy == nil && spec.RunPolicy.FailurePolicy == nil {
		// Not with a failure policy: see setDefaultCleanPodPolicy.
		spec.CleanPodPolicy = ptrTo(CleanPodPolicyNone)
	}
	setDefaultReplicaSpec(spec.MPIReplicaSpecs[MPIJobReplicaTypeLauncher], 1, MPIJobDefaultRestartPolicy, MPIJobDefaultContainerName)
	setDefaultReplicaSpec(spec.MPIReplicaSpecs[MPIJobReplicaTypeWorker], 0, MPIJobDefaultRestartPolicy, MPIJobDefaultContainerName)
}

// EffectiveCleanPodPolicy is the cleanPodPolicy an MPIJob runs with, as v1
// reads it: runPolicy.cleanPodPolicy if set, else the deprecated
// spec.cleanPodPolicy, else None.
func EffectiveCleanPodPolicy(job *MPIJob) CleanPodPolicy {
	for _, p := range []*CleanPodPolicy{job.Spec.RunPolicy.CleanPodPolicy, job.Spec.CleanPodPolicy} {
		if p != nil && *p != CleanPodPolicyUndefined {
			return *p
		}
	}
	return CleanPodPolicyNone
}

// SetDefaults_XGBoostJob sets the defaults of an XGBoostJob: cleanPodPolicy
// None (not with a failure policy), canonical replica type names (Master, Worker), replicas 1,
// restartPolicy Never and the xgboostjob-port port.
func SetDefaults_XGBoostJob(job *XGBoostJob) {
	if job == nil {
		return
	}
	spec := &job.Spec
	SetDefaultsFailurePolicy(spec.RunPolicy.FailurePolicy)
	setDefaultCleanPodPolicy(&spec.RunPolicy)
	normalizeReplicaTypes(spec.XGBReplicaSpecs, XGBoostJobReplicaTypeMaster, XGBoostJobReplicaTypeWorker)
	for _, rs := range spec.XGBReplicaSpecs {
		setDefaultReplicaSpec(rs, 1, XGBoostJobDefaultRestartPolicy, XGBoostJobDefaultContainerName)
		if rs != nil {
			setDefaultPort(&rs.Template.Spec, XGBoostJobDefaultContainerName, XGBoostJobDefaultPortName, XGBoostJobDefaultPort)
		}
	}
}

// SetDefaults_PaddleJob sets the defaults of a PaddleJob: cleanPodPolicy
// None (not with a failure policy), canonical replica type names (Master, Worker), replicas 1,
// restartPolicy OnFailure and the "master" port. Unset elastic min/max
// replicas are left unset, as for PyTorch (PaddleJobSpec.ElasticReplicas).
func SetDefaults_PaddleJob(job *PaddleJob) {
	if job == nil {
		return
	}
	spec := &job.Spec
	SetDefaultsFailurePolicy(spec.RunPolicy.FailurePolicy)
	setDefaultCleanPodPolicy(&spec.RunPolicy)
	normalizeReplicaTypes(spec.PaddleReplicaSpecs, PaddleJobReplicaTypeMaster, PaddleJobReplicaTypeWorker)
	for _, rs := range spec.PaddleReplicaSpecs {
		setDefaultReplicaSpec(rs, 1, PaddleJobDefaultRestartPolicy, PaddleJobDefaultContainerName)
		if rs != nil {
			setDefaultPort(&rs.Template.Spec, PaddleJobDefaultContainerName, PaddleJobDefaultPortName, PaddleJobDefaultPort)
		}
	}
}

// SetDefaults_JAXJob sets the defaults of a JAXJob: cleanPodPolicy None
// (not with a failure policy), canonical replica type name (Worker), replicas 1, restartPolicy Never and
// the jaxjob-port port.
func SetDefaults_JAXJob(job *JAXJob) {
	if job == nil {
		return
	}
	spec := &job.Spec
	SetDefaultsFailurePolicy(spec.RunPolicy.FailurePolicy)
	setDefaultCleanPodPolicy(&spec.RunPolicy)
	normalizeReplicaTypes(spec.JAXReplicaSpecs, JAXJobReplicaTypeWorker)
	for _, rs := range spec.JAXReplicaSpecs {
		setDefaultReplicaSpec(rs, 1, JAXJobDefaultRestartPolicy, JAXJobDefaultContainerName)
		if rs != nil {
			setDefaultPort(&rs.Template.Spec, JAXJobDefaultContainerName, JAXJobDefaultPortName, JAXJobDefaultPort)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// setDefaultCleanPodPolicy sets runPolicy.cleanPodPolicy to None when unset
// and the job has no failure policy. With one, unset stays unset: it means
// the failure policy's cleanup (a failed job's running pods are deleted),
// and a None stored here could not be told from a None the user chose.
func setDefaultCleanPodPolicy(rp *RunPolicy) {
	if rp.CleanPodPolicy == nil && rp.FailurePolicy == nil {
		rp.CleanPodPolicy = ptrTo(CleanPodPolicyNone)
	}
}

// setDefaultReplicaSpec fills replicas and restartPolicy of one replica spec;
// a nil spec is skipped.
func setDefaultReplicaSpec(rs *ReplicaSpec, replicas int32, restartPolicy RestartPolicy, containerName string) {
	if rs == nil {
		return
	}
	setDefaultContainerNames(&rs.Template.Spec, containerName)
	if rs.Replicas == nil {
		rs.Replicas = ptrTo(replicas)
	}
	if rs.RestartPolicy == "" {
		rs.RestartPolicy = restartPolicy
	}
}

// setDefaultContainerNames names containers that have no name (v1 samples
// such as the MPIJob one omit them, and pods cannot be created without): the
// first gets the kind's default container name unless a container already has
// it, the rest "<default>-<n>" with the smallest free n.
func setDefaultContainerNames(pod *corev1.PodSpec, name string) {
	taken := map[string]bool{}
	for _, c := range pod.Containers {
		taken[c.Name] = true
	}
	for i := range pod.Containers {
		c := &pod.Containers[i]
		if c.Name != "" {
			continue
		}
		candidate := name
		for n := 1; taken[candidate]; n++ {
			candidate = fmt.Sprintf("%s-%d", name, n)
		}
		c.Name = candidate
		taken[candidate] = true
	}
}

// normalizeReplicaTypes moves a replica spec whose key matches a canonical
// replica type case-insensitively (e.g. "worker" or "WORKER" for "Worker") to
// the canonical key. Only one key is moved per canonical type; when several
// spellings exist the lexicographically smallest one is chosen so the result
// is deterministic. A spec already present under the canonical key is never
// overwritten: the other spelling is then left in place for validation to
// report.
func normalizeReplicaTypes(specs map[ReplicaType]*ReplicaSpec, canonical ...ReplicaType) {
	if len(specs) == 0 {
		return
	}
	for _, typ := range canonical {
		if _, ok := specs[typ]; ok {
			continue
		}
		var candidates []ReplicaType
		for key := range specs {
			if key != typ && strings.EqualFold(string(key), string(typ)) {
				candidates = append(candidates, key)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		sort.Slice(candidates, func(i, j int) bool { return candidates[i] < candidates[j] })
		specs[typ] = specs[candidates[0]]
		delete(specs, candidates[0])
	}
}

// setDefaultPort appends {name: portName, containerPort: port} to the
// container named containerName (or, if there is none, to the first
// container) unless that container already has a port with that name,
// whatever its number. A pod without containers is left alone.
func setDefaultPort(pod *corev1.PodSpec, containerName, portName string, port int32) {
	c := DefaultContainer(pod.Containers, containerName)
	if c == nil {
		return
	}
	if _, ok := NamedPort(c, portName); ok {
		return
	}
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: portName, ContainerPort: port})
}
