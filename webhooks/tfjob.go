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

package webhooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-tfjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=tfjobs,verbs=create;update,versions=v1,name=defaulter.tfjob.training-operator.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-tfjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=tfjobs,verbs=create;update,versions=v1,name=validator.tfjob.training-operator.kubeflow.org,admissionReviewVersions=v1

var (
	tfSpecsPath    = specPath.Child("tfReplicaSpecs")
	tfReplicaRules = replicaRules{
		path: tfSpecsPath,
		types: []kubeflowv1.ReplicaType{
			kubeflowv1.TFJobReplicaTypePS, kubeflowv1.TFJobReplicaTypeWorker, kubeflowv1.TFJobReplicaTypeChief,
			kubeflowv1.TFJobReplicaTypeMaster, kubeflowv1.TFJobReplicaTypeEval,
		},
		container:    kubeflowv1.TFJobDefaultContainerName,
		containerMsg: mustHaveContainer(kubeflowv1.TFJobDefaultContainerName),
	}
)

// ValidateTFJob validates a defaulted TFJob; old is nil on create. Besides
// the rules shared by all kinds, replica types must be PS, Worker, Chief,
// Master or Evaluator (checked after defaulting normalized their case, so
// "worker" is fine but "worker" next to "Worker" is not), and there is at
// most one Chief or Master.
func ValidateTFJob(old, job *kubeflowv1.TFJob) (field.ErrorList, admission.Warnings) {
	return validateJob(old, job, validateTFJob)
}

func validateTFJob(job *kubeflowv1.TFJob) (field.ErrorList, admission.Warnings) {
	specs := job.Spec.TFReplicaSpecs
	errs := validateName(job.Name, lastChildNames(job.Name, specs, func(_ kubeflowv1.ReplicaType, rs *kubeflowv1.ReplicaSpec) int32 {
		return replicasOrDefault(rs, 1)
	}))
	errs = append(errs, validateRunPolicy(&job.Spec.RunPolicy)...)
	chiefs := 0
	for rtype := range specs {
		if kubeflowv1.IsChiefOrMaster(rtype) {
			chiefs++
		}
	}
	if chiefs > 1 {
		errs = append(errs, field.Forbidden(tfSpecsPath, "must not have more than 1 Chief or Master role"))
	}
	errs = append(errs, tfReplicaRules.validate(specs)...)
	dynErrs, warnings := validateDynamicWorkerRules(job)
	return append(errs, dynErrs...), warnings
}

// validateDynamicWorkerRules: with enableDynamicWorker, v1 ignores a failed
// Worker, so no failure-policy rule ever sees one. A rule that names Worker
// is refused; a rule for every replica type is told that Workers are not
// among them.
func validateDynamicWorkerRules(job *kubeflowv1.TFJob) (field.ErrorList, admission.Warnings) {
	fp := job.Spec.RunPolicy.FailurePolicy
	if !job.Spec.EnableDynamicWorker || fp == nil {
		return nil, nil
	}
	var errs field.ErrorList
	var warnings admission.Warnings
	for i, rule := range fp.Rules {
		rp := failurePolicyPath.Child("rules").Index(i)
		if len(rule.TargetReplicaTypes) == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: with spec.enableDynamicWorker a failed Worker is ignored, as in v1: this rule never sees one", rp))
			continue
		}
		for j, rt := range rule.TargetReplicaTypes {
			if rt == kubeflowv1.TFJobReplicaTypeWorker {
				errs = append(errs, field.Forbidden(rp.Child("targetReplicaTypes").Index(j),
					"with spec.enableDynamicWorker a failed Worker is ignored, as in v1: no rule can act on one"))
			}
		}
	}
	return errs, warnings
}
