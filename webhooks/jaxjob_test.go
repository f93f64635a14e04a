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
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

func TestValidateJAXJob(t *testing.T) {
	jax := func(n int32) *kubeflowv1.ReplicaSpec { return rs(n, ctr("jax")) }

	runValidationCases(t, ValidateJAXJob, []validationCase[*kubeflowv1.JAXJob]{
		{name: "workers", job: jaxJob("jax", specs{worker: jax(4)})},
		{
			name:     "master is not a JAX replica type",
			job:      jaxJob("jax", specs{master: jax(1), worker: jax(1)}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("jaxReplicaSpecs", master), master, []kubeflowv1.ReplicaType{worker})},
		},
		{
			name:     "no jax container",
			job:      jaxJob("jax", specs{worker: rs(1, ctr("main"))}),
			wantErrs: field.ErrorList{field.Required(containersPath("jaxReplicaSpecs", worker), "must have at least one container with name jax")},
		},
		{
			// v1 did not validate managedBy for JAXJob, so "" slipped through
			// and the job was never reconciled.
			name:     "empty managedBy",
			job:      jaxJob("jax", specs{worker: jax(1)}, func(j *kubeflowv1.JAXJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("") }),
			wantErrs: field.ErrorList{field.NotSupported(managedByField, "", supportedManagedBy)},
		},
		{
			name:     "managedBy is immutable",
			old:      jaxJob("jax", specs{worker: jax(1)}, func(j *kubeflowv1.JAXJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			job:      jaxJob("jax", specs{worker: jax(1)}, func(j *kubeflowv1.JAXJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.KubeflowJobsController) }),
			wantErrs: field.ErrorList{field.Invalid(managedByField, kubeflowv1.KubeflowJobsController, "field is immutable")},
		},
		{
			name: "name is not a DNS-1035 label",
			job:  jaxJob("JAX", specs{worker: jax(1)}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "JAX",
				"should match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")},
		},
	})
}
