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

// +kubebuilder:webhook:path=/mutate-kubeflow-org-v1-mpijob,mutating=true,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=mpijobs,verbs=create;update,versions=v1,name=defaulter.mpijob.training-operator.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-kubeflow-org-v1-mpijob,mutating=false,failurePolicy=fail,sideEffects=None,groups=kubeflow.org,resources=mpijobs,verbs=create;update,versions=v1,name=validator.mpijob.training-operator.kubeflow.org,admissionReviewVersions=v1

var (
	mpiSpecsPath    = specPath.Child("mpiReplicaSpecs")
	mpiReplicaRules = replicaRules{
		path:  mpiSpecsPath,
		types: []kubeflowv1.ReplicaType{kubeflowv1.MPIJobReplicaTypeLauncher, kubeflowv1.MPIJobReplicaTypeWorker},
		// MPIJob containers may have any name (spec.mainContainer picks one).
		replicas: func(rtype kubeflowv1.ReplicaType, replicas *int32, p *field.Path) field.ErrorList {
			if rtype == kubeflowv1.MPIJobReplicaTypeLauncher {
				return exactlyOneReplica(p, replicas)
			}
			return nonNegativeReplicas(rtype, replicas, p)
		},
	}
)

// ValidateMPIJob validates a defaulted MPIJob; old is nil on create. v1 had
// no MPIJob webhook; these rules replace its in-controller checks: replica
// types are Launcher and Worker, a Launcher with exactly 1 replica is
// required, Workers are not negative, every template has containers with
// images and names, plus the rules shared by all kinds. The launcher pod is
// <job>-launcher and the workers <job>-worker-<index>.
func ValidateMPIJob(old, job *kubeflowv1.MPIJob) (field.ErrorList, admission.Warnings) {
	return validateJob(old, job, validateMPIJob)
}

func validateMPIJob(job *kubeflowv1.MPIJob) (field.ErrorList, admission.Warnings) {
	specs := job.Spec.MPIReplicaSpecs
	var children []string
	if _, ok := specs[kubeflowv1.MPIJobReplicaTypeLauncher]; ok {
		children = append(children, kubeflowv1.MPIJobLauncherName(job.Name))
	}
	if n := replicasOrDefault(specs[kubeflowv1.MPIJobReplicaTypeWorker], 0); n > 0 {
		children = append(children, kubeflowv1.ReplicaName(job.Name, kubeflowv1.MPIJobReplicaTypeWorker, int(n-1)))
	}
	errs := validateName(job.Name, children)
	errs = append(errs, validateRunPolicy(&job.Spec.RunPolicy)...)
	errs = append(errs, mpiReplicaRules.validate(specs)...)
	if _, ok := specs[kubeflowv1.MPIJobReplicaTypeLauncher]; len(specs) > 0 && !ok {
		errs = append(errs, field.Required(mpiSpecsPath.Key(string(kubeflowv1.MPIJobReplicaTypeLauncher)), "must be present"))
	}
	return errs, nil
}
