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

func TestValidateXGBoostJob(t *testing.T) {
	xgb := func(n int32) *kubeflowv1.ReplicaSpec { return rs(n, ctr("xgboost")) }
	masterReplicas := rolePath("xgbReplicaSpecs", master).Child("replicas")

	runValidationCases(t, ValidateXGBoostJob, []validationCase[*kubeflowv1.XGBoostJob]{
		{name: "master and workers", job: xgboostJob("xgb", specs{master: xgb(1), worker: xgb(3)})},
		{name: "master only", job: xgboostJob("xgb", specs{master: xgb(1)})},
		{
			name:     "no master",
			job:      xgboostJob("xgb", specs{worker: xgb(3)}),
			wantErrs: field.ErrorList{field.Required(rolePath("xgbReplicaSpecs", master), "must be present")},
		},
		{
			name:     "master with 2 replicas",
			job:      xgboostJob("xgb", specs{master: xgb(2), worker: xgb(3)}),
			wantErrs: field.ErrorList{field.Forbidden(masterReplicas, "must be 1")},
		},
		{
			name:     "negative workers",
			job:      xgboostJob("xgb", specs{master: xgb(1), worker: xgb(-2)}),
			wantErrs: field.ErrorList{field.Invalid(rolePath("xgbReplicaSpecs", worker).Child("replicas"), int64(-2), "must be greater than or equal to 0")},
		},
		{
			name: "unknown replica type",
			job:  xgboostJob("xgb", specs{master: xgb(1), "PS": xgb(1)}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("xgbReplicaSpecs", "PS"), kubeflowv1.ReplicaType("PS"),
				[]kubeflowv1.ReplicaType{master, worker})},
		},
		{
			name:     "no xgboost container",
			job:      xgboostJob("xgb", specs{master: rs(1, ctr("main"))}),
			wantErrs: field.ErrorList{field.Required(containersPath("xgbReplicaSpecs", master), "must have at least one container with name xgboost")},
		},
		{
			name:     "no replica specs",
			job:      xgboostJob("xgb", specs{}),
			wantErrs: field.ErrorList{field.Required(field.NewPath("spec", "xgbReplicaSpecs"), "must be required")},
		},
		{
			name:     "managedBy is immutable",
			old:      xgboostJob("xgb", specs{master: xgb(1)}, func(j *kubeflowv1.XGBoostJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.KubeflowJobsController) }),
			job:      xgboostJob("xgb", specs{master: xgb(1)}, func(j *kubeflowv1.XGBoostJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			wantErrs: field.ErrorList{field.Invalid(managedByField, kubeflowv1.MultiKueueController, "field is immutable")},
		},
	})
}
