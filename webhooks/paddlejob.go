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
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-paddlejob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=paddlejobs,verbs=create;update,versions=v1,name=defaulter.paddlejob.training-operator.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-paddlejob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=paddlejobs,verbs=create;update,versions=v1,name=validator.paddlejob.training-operator.kubeflow.org,admissionReviewVersions=v1

var (
	paddleSpecsPath    = specPath.Child("paddleReplicaSpecs")
	paddleReplicaRules = replicaRules{
		path:      paddleSpecsPath,
		types:     []kubeflowv1.ReplicaType{kubeflowv1.PaddleJobReplicaTypeMaster, kubeflowv1.PaddleJobReplicaTypeWorker},
		container: kubeflowv1.PaddleJobDefaultContainerName,
		// v1 quotes the container name for PaddleJob only.
		containerMsg: mustHaveContainer(strconv.Quote(kubeflowv1.PaddleJobDefaultContainerName)),
	}
)

// ValidatePaddleJob validates a defaulted PaddleJob; old is nil on create.
// Besides the rules shared by all kinds, an elastic policy must have
// minReplicas <= maxReplicas. Pods are named <job>-<type>-<index>, up to the
// elastic maxReplicas for Workers.
func ValidatePaddleJob(old, job *kubeflowv1.PaddleJob) (field.ErrorList, admission.Warnings) {
	return validateJob(old, job, validatePaddleJob)
}

func validatePaddleJob(job *kubeflowv1.PaddleJob) (field.ErrorList, admission.Warnings) {
	spec := &job.Spec
	errs := validateName(job.Name, lastChildNames(job.Name, spec.PaddleReplicaSpecs, func(rtype kubeflowv1.ReplicaType, rs *kubeflowv1.ReplicaSpec) int32 {
		n := replicasOrDefault(rs, 1)
		if _, maxR, ok := spec.ElasticReplicas(); rtype == kubeflowv1.PaddleJobReplicaTypeWorker && ok && maxR > n {
			n = maxR
		}
		return n
	}))
	errs = append(errs, validateRunPolicy(&spec.RunPolicy)...)
	errs = append(errs, forbidFailurePolicyWithElastic(&spec.RunPolicy, spec.ElasticPolicy != nil)...)
	if ep := spec.ElasticPolicy; ep != nil {
		errs = append(errs, validateElasticReplicas(specPath.Child("elasticPolicy"), ep.MinReplicas, ep.MaxReplicas)...)
	}
	errs = append(errs, paddleReplicaRules.validate(spec.PaddleReplicaSpecs)...)
	return errs, nil
}
