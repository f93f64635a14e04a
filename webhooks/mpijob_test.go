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

func TestValidateMPIJob(t *testing.T) {
	const (
		launcher = kubeflowv1.MPIJobReplicaTypeLauncher
		worker   = kubeflowv1.MPIJobReplicaTypeWorker
	)
	types := []kubeflowv1.ReplicaType{launcher, worker}

	runValidationCases(t, ValidateMPIJob, []validationCase[*kubeflowv1.MPIJob]{
		{name: "launcher and workers", job: mpiJob("mpi", specs{launcher: rs(1, ctr("launcher")), worker: rs(2, ctr("worker"))})},
		{name: "launcher only", job: mpiJob("mpi", specs{launcher: rs(1, ctr("mpi"))})},
		{name: "zero workers", job: mpiJob("mpi", specs{launcher: rs(1, ctr("mpi")), worker: rs(0, ctr("mpi"))})},
		{
			name:     "no launcher",
			job:      mpiJob("mpi", specs{worker: rs(2, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.Required(rolePath("mpiReplicaSpecs", launcher), "must be present")},
		},
		{
			name:     "two launchers",
			job:      mpiJob("mpi", specs{launcher: rs(2, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.Forbidden(rolePath("mpiReplicaSpecs", launcher).Child("replicas"), "must be 1")},
		},
		{
			name:     "negative workers",
			job:      mpiJob("mpi", specs{launcher: rs(1, ctr("mpi")), worker: rs(-1, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.Invalid(rolePath("mpiReplicaSpecs", worker).Child("replicas"), int64(-1), "must be greater than or equal to 0")},
		},
		{
			name:     "unknown replica type",
			job:      mpiJob("mpi", specs{launcher: rs(1, ctr("mpi")), "Master": rs(1, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.NotSupported(rolePath("mpiReplicaSpecs", "Master"), kubeflowv1.ReplicaType("Master"), types)},
		},
		{
			name: "no replica specs",
			job:  mpiJob("mpi", nil),
			wantErrs: field.ErrorList{
				field.Required(field.NewPath("spec", "mpiReplicaSpecs"), "must be required"),
			},
		},
		{
			name: "nil launcher and worker without containers",
			job:  mpiJob("mpi", specs{launcher: nil, worker: rs(1)}),
			wantErrs: field.ErrorList{
				field.Required(field.NewPath("spec", "mpiReplicaSpecs").Key(string(launcher)), "must be specified"),
				field.Required(containersPath("mpiReplicaSpecs", worker), "must be specified"),
			},
		},
		{
			name: "containers without image or name",
			job:  mpiJob("mpi", specs{launcher: rs(1, noImage("mpi")), worker: rs(1, ctr(""))}),
			wantErrs: field.ErrorList{
				field.Required(containersPath("mpiReplicaSpecs", launcher).Index(0).Child("image"), "must be required"),
				field.Required(containersPath("mpiReplicaSpecs", worker).Index(0).Child("name"), "must be required"),
			},
		},
		{
			name: "launcher child name too long",
			job:  mpiJob(longName(55), specs{launcher: rs(1, ctr("mpi")), worker: rs(2, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(55),
				`must be no more than 54 characters: the child name "`+longName(55)+`-launcher" would be 64 characters, more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`)},
		},
		{
			name: "worker child name too long",
			job:  mpiJob(longName(54), specs{launcher: rs(1, ctr("mpi")), worker: rs(100, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), longName(54),
				`must be no more than 53 characters: the child name "`+longName(54)+`-worker-99" would be 64 characters, more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`)},
		},
		{
			name:     "managedBy is immutable",
			old:      mpiJob("mpi", specs{launcher: rs(1, ctr("mpi"))}, func(j *kubeflowv1.MPIJob) { j.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController) }),
			job:      mpiJob("mpi", specs{launcher: rs(1, ctr("mpi"))}),
			wantErrs: field.ErrorList{field.Invalid(managedByField, nil, "field is immutable")},
		},
		{
			name:     "managedBy is validated",
			job:      mpiJob("mpi", specs{launcher: rs(1, ctr("mpi"))}, func(j *kubeflowv1.MPIJob) { j.Spec.RunPolicy.ManagedBy = ptr.To("kueue") }),
			wantErrs: field.ErrorList{field.NotSupported(managedByField, "kueue", supportedManagedBy)},
		},
	})
}
