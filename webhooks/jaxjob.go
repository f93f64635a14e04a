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

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-jaxjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=jaxjobs,verbs=create;update,versions=v1,name=defaulter.jaxjob.training-operator.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-jaxjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=jaxjobs,verbs=create;update,versions=v1,name=validator.jaxjob.training-operator.kubeflow.org,admissionReviewVersions=v1

var jaxReplicaRules = replicaRules{
	path:         specPath.Child("jaxReplicaSpecs"),
	types:        []kubeflowv1.ReplicaType{kubeflowv1.JAXJobReplicaTypeWorker},
	container:    kubeflowv1.JAXJobDefaultContainerName,
	containerMsg: mustHaveContainer(kubeflowv1.JAXJobDefaultContainerName),
}

// ValidateJAXJob validates a defaulted JAXJob; old is nil on create. It
// applies the rules shared by all kinds (unlike v1, managedBy included)
// with Worker as the only replica type.
func ValidateJAXJob(old, job *kubeflowv1.JAXJob) (field.ErrorList, admission.Warnings) {
	return validateJob(old, job, validateJAXJob)
}

func validateJAXJob(job *kubeflowv1.JAXJob) (field.ErrorList, admission.Warnings) {
	specs := job.Spec.JAXReplicaSpecs
	errs := validateName(job.Name, lastChildNames(job.Name, specs, func(_ kubeflowv1.ReplicaType, rs *kubeflowv1.ReplicaSpec) int32 {
		return replicasOrDefault(rs, 1)
	}))
	errs = append(errs, validateRunPolicy(&job.Spec.RunPolicy)...)
	errs = append(errs, jaxReplicaRules.validate(specs)...)
	return errs, nil
}
