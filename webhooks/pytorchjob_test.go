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
	"strings"
	"testing"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

const (
	master = kubeflowv1.PyTorchJobReplicaTypeMaster
	worker = kubeflowv1.PyTorchJobReplicaTypeWorker
)

func TestValidatePyTorchJob(t *testing.T) {
	valid := func(mutate ...func(*kubeflowv1.PyTorchJob)) *kubeflowv1.PyTorchJob {
		return pytorchJob("job", specs{master: rs(1, ctr("pytorch")), worker: rs(3, ctr("pytorch"))}, mutate...)
	}
	elastic := func(j *kubeflowv1.PyTorchJob) { j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{} }
	specsPath := field.NewPath("spec", "pytorchReplicaSpecs")
	masterReplicas := rolePath("pytorchReplicaSpecs", master).Child("replicas")
	workerReplicas := rolePath("pytorchReplicaSpecs", worker).Child("replicas")
	types := []kubeflowv1.ReplicaType{master, worker}

	runValidationCases(t, ValidatePyTorchJob, []validationCase[*kubeflowv1.PyTorchJob]{
		{name: "master and workers", job: valid()},
		{name: "workers only", job: pytorchJob("job", specs{worker: rs(2, ctr("pytorch"))})},
		{name: "extra containers next to pytorch", job: pytorchJob("job", specs{worker: rs(1, ctr("sidecar"), ctr("pytorch"))})},
		{
			name:     "master with 2 replicas",
			job:      pytorchJob("job", specs{master: rs(2, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Forbidden(masterReplicas, "must be 1")},
		},
		{
			// The webhook defaults before validating, so this only happens
			// when the function is called on an undefaulted object.
			name:     "master without replicas (undefaulted)",
			job:      pytorchJob("job", specs{master: rsUnset(ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Forbidden(masterReplicas, "must be 1")},
		},
		{
			name:     "zero workers",
			job:      pytorchJob("job", specs{master: rs(1, ctr("pytorch")), worker: rs(0, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Forbidden(workerReplicas, "must be at least 1")},
		},
		{
			name:     "no replica specs",
			job:      pytorchJob("job", nil),
			wantErrs: field.ErrorList{field.Required(specsPath, "must be required")},
		},
		{
			name:     "empty replica specs",
			job:      pytorchJob("job", specs{}),
			wantErrs: field.ErrorList{field.Required(specsPath, "must be required")},
		},
		{
			name:     "unknown replica type",
			job:      pytorchJob("job", specs{"Chief": rs(1, ctr("pytorch")), worker: rs(1, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("pytorchReplicaSpecs", "Chief"), kubeflowv1.ReplicaType("Chief"), types)},
		},
		{
			// Defaulting moves "worker" to "Worker" unless both exist.
			name:     "second spelling of a replica type",
			job:      pytorchJob("job", specs{worker: rs(1, ctr("pytorch")), "worker": rs(1, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("pytorchReplicaSpecs", "worker"), kubeflowv1.ReplicaType("worker"), types)},
		},
		{
			name:     "nil replica spec does not panic",
			job:      pytorchJob("job", specs{master: rs(1, ctr("pytorch")), worker: nil}),
			wantErrs: field.ErrorList{field.Required(field.NewPath("spec", "pytorchReplicaSpecs").Key(string(worker)), "must be specified")},
		},
		{
			name:     "no containers",
			job:      pytorchJob("job", specs{worker: rs(1)}),
			wantErrs: field.ErrorList{field.Required(containersPath("pytorchReplicaSpecs", worker), "must be specified")},
		},
		{
			name: "containers without image",
			job:  pytorchJob("job", specs{worker: rs(1, noImage("pytorch"), noImage("sidecar"))}),
			wantErrs: field.ErrorList{
				field.Required(containersPath("pytorchReplicaSpecs", worker).Index(0).Child("image"), "must be required"),
				field.Required(containersPath("pytorchReplicaSpecs", worker).Index(1).Child("image"), "must be required"),
			},
		},
		{
			name:     "no pytorch container",
			job:      pytorchJob("job", specs{worker: rs(1, ctr("trainer"))}),
			wantErrs: field.ErrorList{field.Required(containersPath("pytorchReplicaSpecs", worker), "must have at least one container with name pytorch")},
		},
		{
			name:     "unnamed container (undefaulted)",
			job:      pytorchJob("job", specs{worker: rs(1, ctr(""), ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Required(containersPath("pytorchReplicaSpecs", worker).Index(0).Child("name"), "must be required")},
		},
		{
			name: "errors of several replica types in sorted order",
			job:  pytorchJob("job", specs{worker: rs(0, ctr("x")), master: rs(3, noImage("pytorch"))}),
			wantErrs: field.ErrorList{
				field.Required(containersPath("pytorchReplicaSpecs", master).Index(0).Child("image"), "must be required"),
				field.Forbidden(masterReplicas, "must be 1"),
				field.Required(containersPath("pytorchReplicaSpecs", worker), "must have at least one container with name pytorch"),
				field.Forbidden(workerReplicas, "must be at least 1"),
			},
		},
		{
			name: "elastic without workers",
			job:  pytorchJob("job", specs{master: rs(1, ctr("pytorch"))}, elastic),
			wantErrs: field.ErrorList{
				field.Required(rolePath("pytorchReplicaSpecs", worker), "must be configured if elastic policy is used"),
			},
		},
		{
			name: "elastic nProcPerNode is deprecated",
			job: valid(func(j *kubeflowv1.PyTorchJob) {
				j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{NProcPerNode: ptr.To[int32](4)}
			}),
			wantWarnings: admission.Warnings{"spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"},
		},
		{
			name: "elastic nProcPerNode together with nprocPerNode",
			job: valid(func(j *kubeflowv1.PyTorchJob) {
				j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{NProcPerNode: ptr.To[int32](4)}
				j.Spec.NprocPerNode = ptr.To("4")
			}),
			wantErrs:     field.ErrorList{field.Forbidden(field.NewPath("spec", "elasticPolicy", "nProcPerNode"), "must not be used with spec.nprocPerNode")},
			wantWarnings: admission.Warnings{"spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"},
		},
		{
			name: "elastic minReplicas above maxReplicas",
			job: valid(func(j *kubeflowv1.PyTorchJob) {
				j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{MinReplicas: ptr.To[int32](4), MaxReplicas: ptr.To[int32](2)}
			}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("spec", "elasticPolicy", "minReplicas"), int32(4), "must be less than or equal to maxReplicas")},
		},
		{
			name: "name is not a DNS-1035 label",
			job:  pytorchJob("1job", specs{worker: rs(1, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "1job",
				"should match: "+strings.Join(apimachineryvalidation.NameIsDNS1035Label("1job", false), ","))},
		},
		{
			name: "name longer than 63 characters",
			job:  pytorchJob(longName(64), specs{worker: rs(1, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(64),
				"should match: must be no more than 63 characters")},
		},
		{
			name: "longest child name fits",
			// jxxx...-worker-9: 54 + 9 = 63 characters.
			job: pytorchJob(longName(54), specs{master: rs(1, ctr("pytorch")), worker: rs(10, ctr("pytorch"))}),
		},
		{
			name: "longest child name too long",
			job:  pytorchJob(longName(55), specs{master: rs(1, ctr("pytorch")), worker: rs(100, ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(55),
				`must be no more than 53 characters: the child name "`+longName(55)+`-worker-99" would be 65 characters, more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`)},
		},
		{
			name: "elastic maxReplicas counts for child names",
			job: pytorchJob(longName(54), specs{worker: rs(2, ctr("pytorch"))}, func(j *kubeflowv1.PyTorchJob) {
				j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](100)}
			}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(54),
				`must be no more than 53 characters: the child name "`+longName(54)+`-worker-99" would be 64 characters, more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`)},
		},
		{
			name:     "managedBy must be a known controller",
			job:      valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("example.com/other") }),
			wantErrs: field.ErrorList{field.NotSupported(managedByField, "example.com/other", supportedManagedBy)},
		},
		{
			name:     "managedBy must not be empty",
			job:      valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("") }),
			wantErrs: field.ErrorList{field.NotSupported(managedByField, "", supportedManagedBy)},
		},
		{
			name: "managedBy MultiKueue",
			job:  valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
		},
		{
			name: "negative run policy values",
			job: valid(func(j *kubeflowv1.PyTorchJob) {
				j.Spec.RunPolicy.BackoffLimit = ptr.To[int32](-1)
				j.Spec.RunPolicy.ActiveDeadlineSeconds = ptr.To[int64](-2)
				j.Spec.RunPolicy.TTLSecondsAfterFinished = ptr.To[int32](-3)
				j.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{MinAvailable: ptr.To[int32](-4), ScheduleTimeoutSeconds: ptr.To[int32](-5)}
			}),
			wantErrs: field.ErrorList{
				field.Invalid(field.NewPath("spec", "runPolicy", "ttlSecondsAfterFinished"), int64(-3), "must be greater than or equal to 0"),
				field.Invalid(field.NewPath("spec", "runPolicy", "activeDeadlineSeconds"), int64(-2), "must be greater than or equal to 0"),
				field.Invalid(field.NewPath("spec", "runPolicy", "backoffLimit"), int64(-1), "must be greater than or equal to 0"),
				field.Invalid(field.NewPath("spec", "runPolicy", "schedulingPolicy", "minAvailable"), int64(-4), "must be greater than or equal to 0"),
				field.Invalid(field.NewPath("spec", "runPolicy", "schedulingPolicy", "scheduleTimeoutSeconds"), int64(-5), "must be greater than or equal to 0"),
			},
		},
		{
			name: "update keeping managedBy",
			old:  valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			job: valid(func(j *kubeflowv1.PyTorchJob) {
				j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController)
				j.Spec.RunPolicy.Suspend = ptr.To(true)
			}),
		},
		{
			name:     "update changing managedBy",
			old:      valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			job:      valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.KubeflowJobsController) }),
			wantErrs: field.ErrorList{field.Invalid(managedByField, kubeflowv1.KubeflowJobsController, "field is immutable")},
		},
		{
			name:     "update setting managedBy",
			old:      valid(),
			job:      valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			wantErrs: field.ErrorList{field.Invalid(managedByField, kubeflowv1.MultiKueueController, "field is immutable")},
		},
		{
			name:     "update clearing managedBy",
			old:      valid(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			job:      valid(),
			wantErrs: field.ErrorList{field.Invalid(managedByField, nil, "field is immutable")},
		},
		{
			// A job admitted by v1 (Master replicas 2 was never allowed, but
			// e.g. a too-long name was) can still be updated, e.g. suspended.
			name: "update keeps problems the old object had",
			old:  pytorchJob(longName(60), specs{worker: rs(10, ctr("pytorch"))}),
			job: pytorchJob(longName(60), specs{worker: rs(10, ctr("pytorch"))}, func(j *kubeflowv1.PyTorchJob) {
				j.Spec.RunPolicy.Suspend = ptr.To(true)
			}),
		},
		{
			name: "update reports new problems",
			old:  pytorchJob(longName(60), specs{worker: rs(10, ctr("pytorch"))}),
			job:  pytorchJob(longName(60), specs{worker: rs(0, ctr("pytorch"))}),
			wantErrs: field.ErrorList{
				field.Forbidden(workerReplicas, "must be at least 1"),
			},
		},
	})
}
