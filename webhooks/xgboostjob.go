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

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-xgboostjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=xgboostjobs,verbs=create;update,versions=v1,name=defaulter.xgboostjob.training-operator.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-xgboostjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=xgboostjobs,verbs=create;update,versions=v1,name=validator.xgboostjob.training-operator.kubeflow.org,admissionReviewVersions=v1

var (
	xgbSpecsPath    = specPath.Child("xgbReplicaSpecs")
	xgbReplicaRules = replicaRules{
		path:         xgbSpecsPath,
		types:        []kubeflowv1.ReplicaType{kubeflowv1.XGBoostJobReplicaTypeMaster, kubeflowv1.XGBoostJobReplicaTypeWorker},
		container:    kubeflowv1.XGBoostJobDefaultContainerName,
		containerMsg: mustHaveContainer(kubeflowv1.XGBoostJobDefaultContainerName),
		replicas: func(rtype kubeflowv1.ReplicaType, replicas *int32, p *field.Path) field.ErrorList {
			if rtype == kubeflowv1.XGBoostJobReplicaTypeMaster {
				return exactlyOneReplica(p, replicas)
			}
			return nonNegativeReplicas(rtype, replicas, p)
		},
	}
)

// ValidateXGBoostJob validates a defaulted XGBoostJob; old is nil on
// create. Besides the rules shared by all kinds, a Master is required and
// has exactly 1 replica.
func ValidateXGBoostJob(old, job *kubeflowv1.XGBoostJob) (field.ErrorList, admission.Warnings) {
	return validateJob(old, job, validateXGBoostJob)
}

func validateXGBoostJob(job *kubeflowv1.XGBoostJob) (field.ErrorList, admission.Warnings) {
	specs := job.Spec.XGBReplicaSpecs
	errs := validateName(job.Name, lastChildNames(job.Name, specs, func(_ kubeflowv1.ReplicaType, rs *kubeflowv1.ReplicaSpec) int32 {
		return replicasOrDefault(rs, 1)
	}))
	errs = append(errs, validateRunPolicy(&job.Spec.RunPolicy)...)
	errs = append(errs, xgbReplicaRules.validate(specs)...)
	if _, ok := specs[kubeflowv1.XGBoostJobReplicaTypeMaster]; len(specs) > 0 && !ok {
		errs = append(errs, field.Required(xgbSpecsPath.Key(string(kubeflowv1.XGBoostJobReplicaTypeMaster)), "must be present"))
	}
	return errs, nil
}
