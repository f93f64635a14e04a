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

func TestValidatePaddleJob(t *testing.T) {
	paddle := func(n int32) *kubeflowv1.ReplicaSpec { return rs(n, ctr("paddle")) }

	runValidationCases(t, ValidatePaddleJob, []validationCase[*kubeflowv1.PaddleJob]{
		{name: "master and workers", job: paddleJob("paddle", specs{master: paddle(1), worker: paddle(2)})},
		// v1 has no Master count rule for PaddleJob.
		{name: "master with 3 replicas", job: paddleJob("paddle", specs{master: paddle(3)})},
		{name: "workers only", job: paddleJob("paddle", specs{worker: paddle(2)})},
		{
			name:     "no paddle container (v1 quotes the name)",
			job:      paddleJob("paddle", specs{worker: rs(1, ctr("main"))}),
			wantErrs: field.ErrorList{field.Required(containersPath("paddleReplicaSpecs", worker), `must have at least one container with name "paddle"`)},
		},
		{
			name: "unknown replica type",
			job:  paddleJob("paddle", specs{worker: paddle(1), "Launcher": paddle(1)}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("paddleReplicaSpecs", "Launcher"), kubeflowv1.ReplicaType("Launcher"),
				[]kubeflowv1.ReplicaType{master, worker})},
		},
		{
			name: "elastic minReplicas above maxReplicas",
			job: paddleJob("paddle", specs{worker: paddle(2)}, func(j *kubeflowv1.PaddleJob) {
				j.Spec.ElasticPolicy = &kubeflowv1.PaddleElasticPolicy{MinReplicas: ptr.To[int32](3), MaxReplicas: ptr.To[int32](1)}
			}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("spec", "elasticPolicy", "minReplicas"), int32(3), "must be less than or equal to maxReplicas")},
		},
		{
			name: "elastic maxReplicas counts for child names",
			job: paddleJob(longName(54), specs{worker: paddle(2)}, func(j *kubeflowv1.PaddleJob) {
				j.Spec.ElasticPolicy = &kubeflowv1.PaddleElasticPolicy{MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](100)}
			}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(54),
				`must be no more than 53 characters: the child name "`+longName(54)+`-worker-99" would be 64 characters, more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`)},
		},
		{
			name:     "managedBy is immutable",
			old:      paddleJob("paddle", specs{worker: paddle(1)}),
			job:      paddleJob("paddle", specs{worker: paddle(1)}, func(j *kubeflowv1.PaddleJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.KubeflowJobsController) }),
			wantErrs: field.ErrorList{field.Invalid(managedByField, kubeflowv1.KubeflowJobsController, "field is immutable")},
		},
	})
}
