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

func TestValidateTFJob(t *testing.T) {
	tf := func(n int32) *kubeflowv1.ReplicaSpec { return rs(n, ctr("tensorflow")) }
	types := []kubeflowv1.ReplicaType{"PS", "Worker", "Chief", "Master", "Evaluator"}
	specsPath := field.NewPath("spec", "tfReplicaSpecs")

	runValidationCases(t, ValidateTFJob, []validationCase[*kubeflowv1.TFJob]{
		{name: "chief, workers and PS", job: tfJob("tf", specs{"Chief": tf(1), "Worker": tf(2), "PS": tf(1)})},
		{name: "every replica type but Master", job: tfJob("tf", specs{"Chief": tf(1), "Worker": tf(2), "PS": tf(1), "Evaluator": tf(1)})},
		{name: "master instead of chief", job: tfJob("tf", specs{"Master": tf(1), "Worker": tf(2)})},
		{name: "workers only", job: tfJob("tf", specs{"Worker": tf(4)})},
		{name: "zero workers", job: tfJob("tf", specs{"Worker": tf(0)})},
		{
			name:     "chief and master",
			job:      tfJob("tf", specs{"Chief": tf(1), "Master": tf(1), "Worker": tf(1)}),
			wantErrs: field.ErrorList{field.Forbidden(specsPath, "must not have more than 1 Chief or Master role")},
		},
		{
			name:     "unknown replica type",
			job:      tfJob("tf", specs{"Worker": tf(1), "Launcher": tf(1)}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("tfReplicaSpecs", "Launcher"), kubeflowv1.ReplicaType("Launcher"), types)},
		},
		{
			name:     "second spelling of a replica type",
			job:      tfJob("tf", specs{"Worker": tf(1), "WORKER": tf(1)}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("tfReplicaSpecs", "WORKER"), kubeflowv1.ReplicaType("WORKER"), types)},
		},
		{
			name:     "negative replicas",
			job:      tfJob("tf", specs{"Worker": tf(-1)}),
			wantErrs: field.ErrorList{field.Invalid(rolePath("tfReplicaSpecs", "Worker").Child("replicas"), int64(-1), "must be greater than or equal to 0")},
		},
		{
			name:     "no tensorflow container",
			job:      tfJob("tf", specs{"Worker": rs(1, ctr("tf"))}),
			wantErrs: field.ErrorList{field.Required(containersPath("tfReplicaSpecs", "Worker"), "must have at least one container with name tensorflow")},
		},
		{
			name:     "nil replica spec",
			job:      tfJob("tf", specs{"PS": nil}),
			wantErrs: field.ErrorList{field.Required(field.NewPath("spec", "tfReplicaSpecs").Key("PS"), "must be specified")},
		},
		{
			name:     "no replica specs",
			job:      tfJob("tf", nil),
			wantErrs: field.ErrorList{field.Required(specsPath, "must be required")},
		},
		{
			name: "evaluator child name too long",
			job:  tfJob(longName(52), specs{"Worker": tf(1), "Evaluator": tf(1)}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(52),
				`must be no more than 51 characters: the child name "`+longName(52)+`-evaluator-0" would be 64 characters, more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`)},
		},
		{
			name:     "managedBy is validated",
			job:      tfJob("tf", specs{"Worker": tf(1)}, func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("x") }),
			wantErrs: field.ErrorList{field.NotSupported(managedByField, "x", supportedManagedBy)},
		},
		{
			name:     "managedBy is immutable",
			old:      tfJob("tf", specs{"Worker": tf(1)}),
			job:      tfJob("tf", specs{"Worker": tf(1)}, func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			wantErrs: field.ErrorList{field.Invalid(managedByField, kubeflowv1.MultiKueueController, "field is immutable")},
		},
		{
			// v1 did not check TF replica types, so such jobs may exist.
			name: "update of a job with an unknown replica type admitted by v1",
			old:  tfJob("tf", specs{"Worker": tf(1), "Foo": tf(1)}),
			job:  tfJob("tf", specs{"Worker": tf(1), "Foo": tf(1)}, func(j *kubeflowv1.TFJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) }),
		},
	})
}
