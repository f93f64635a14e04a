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
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-pytorchjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=pytorchjobs,verbs=create;update,versions=v1,name=defaulter.pytorchjob.training-operator.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-pytorchjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=pytorchjobs,verbs=create;update,versions=v1,name=validator.pytorchjob.training-operator.kubeflow.org,admissionReviewVersions=v1

// NProcPerNodeDeprecationWarning is returned when a PyTorchJob sets
// spec.elasticPolicy.nProcPerNode (v1's text).
const NProcPerNodeDeprecationWarning = "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"

var (
	pytorchSpecsPath    = specPath.Child("pytorchReplicaSpecs")
	pytorchElastic      = specPath.Child("elasticPolicy")
	pytorchReplicaRules = replicaRules{
		path:         pytorchSpecsPath,
		types:        []kubeflowv1.ReplicaType{kubeflowv1.PyTorchJobReplicaTypeMaster, kubeflowv1.PyTorchJobReplicaTypeWorker},
		container:    kubeflowv1.PyTorchJobDefaultContainerName,
		containerMsg: mustHaveContainer(kubeflowv1.PyTorchJobDefaultContainerName),
		replicas: func(rtype kubeflowv1.ReplicaType, replicas *int32, p *field.Path) field.ErrorList {
			if rtype == kubeflowv1.PyTorchJobReplicaTypeMaster {
				return exactlyOneReplica(p, replicas)
			}
			if replicas != nil && *replicas < 1 {
				return field.ErrorList{field.Forbidden(p, "must be at least 1")}
			}
			return nil
		},
	}
)

// ValidatePyTorchJob validates a defaulted PyTorchJob; old is nil on create.
// Besides the rules shared by all kinds: a Master has exactly 1 replica,
// Workers at least 1; an elastic job needs Workers and min <= max replicas;
// spec.elasticPolicy.nProcPerNode is deprecated (a warning) and cannot be
// combined with spec.nprocPerNode. Pods are named <job>-<type>-<index>, up
// to the elastic maxReplicas for Workers.
func ValidatePyTorchJob(old, job *kubeflowv1.PyTorchJob) (field.ErrorList, admission.Warnings) {
	return validateJob(old, job, validatePyTorchJob)
}

func validatePyTorchJob(job *kubeflowv1.PyTorchJob) (field.ErrorList, admission.Warnings) {
	spec := &job.Spec
	var warnings admission.Warnings
	errs := validateName(job.Name, lastChildNames(job.Name, spec.PyTorchReplicaSpecs, func(rtype kubeflowv1.ReplicaType, rs *kubeflowv1.ReplicaSpec) int32 {
		n := replicasOrDefault(rs, 1)
		if _, maxR, ok := spec.ElasticReplicas(); rtype == kubeflowv1.PyTorchJobReplicaTypeWorker && ok && maxR > n {
			n = maxR
		}
		return n
	}))
	errs = append(errs, validateRunPolicy(&spec.RunPolicy)...)
	errs = append(errs, forbidFailurePolicyWithElastic(&spec.RunPolicy, spec.ElasticPolicy != nil)...)
	if ep := spec.ElasticPolicy; ep != nil {
		if _, ok := spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker]; !ok {
			errs = append(errs, field.Required(pytorchSpecsPath.Key(string(kubeflowv1.PyTorchJobReplicaTypeWorker)), "must be configured if elastic policy is used"))
		}
		if ep.NProcPerNode != nil {
			warnings = append(warnings, NProcPerNodeDeprecationWarning)
			if spec.NprocPerNode != nil {
				errs = append(errs, field.Forbidden(pytorchElastic.Child("nProcPerNode"), "must not be used with spec.nprocPerNode"))
			}
		}
		errs = append(errs, validateElasticReplicas(pytorchElastic, ep.MinReplicas, ep.MaxReplicas)...)
	}
	errs = append(errs, pytorchReplicaRules.validate(spec.PyTorchReplicaSpecs)...)
	return errs, warnings
}
