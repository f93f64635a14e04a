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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Small builders for the validation tables: a replica spec is
// rs(replicas, containers...) and a container ctr(name) with an image.

const testImage = "example.com/train:v1"

type specs = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec

// ctr is a container with an image.
func ctr(name string) corev1.Container { return corev1.Container{Name: name, Image: testImage} }

// noImage is a container without an image.
func noImage(name string) corev1.Container { return corev1.Container{Name: name} }

// rs is a replica spec with replicas set.
func rs(replicas int32, containers ...corev1.Container) *kubeflowv1.ReplicaSpec {
	s := rsUnset(containers...)
	s.Replicas = ptr.To(replicas)
	return s
}

// rsUnset is a replica spec whose replicas are left to defaulting.
func rsUnset(containers ...corev1.Container) *kubeflowv1.ReplicaSpec {
	return &kubeflowv1.ReplicaSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}}}
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }

func pytorchJob(name string, s specs, mutate ...func(*kubeflowv1.PyTorchJob)) *kubeflowv1.PyTorchJob {
	j := &kubeflowv1.PyTorchJob{ObjectMeta: objectMeta(name), Spec: kubeflowv1.PyTorchJobSpec{PyTorchReplicaSpecs: s}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func tfJob(name string, s specs, mutate ...func(*kubeflowv1.TFJob)) *kubeflowv1.TFJob {
	j := &kubeflowv1.TFJob{ObjectMeta: objectMeta(name), Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: s}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func mpiJob(name string, s specs, mutate ...func(*kubeflowv1.MPIJob)) *kubeflowv1.MPIJob {
	j := &kubeflowv1.MPIJob{ObjectMeta: objectMeta(name), Spec: kubeflowv1.MPIJobSpec{MPIReplicaSpecs: s}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func xgboostJob(name string, s specs, mutate ...func(*kubeflowv1.XGBoostJob)) *kubeflowv1.XGBoostJob {
	j := &kubeflowv1.XGBoostJob{ObjectMeta: objectMeta(name), Spec: kubeflowv1.XGBoostJobSpec{XGBReplicaSpecs: s}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func paddleJob(name string, s specs, mutate ...func(*kubeflowv1.PaddleJob)) *kubeflowv1.PaddleJob {
	j := &kubeflowv1.PaddleJob{ObjectMeta: objectMeta(name), Spec: kubeflowv1.PaddleJobSpec{PaddleReplicaSpecs: s}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

func jaxJob(name string, s specs, mutate ...func(*kubeflowv1.JAXJob)) *kubeflowv1.JAXJob {
	j := &kubeflowv1.JAXJob{ObjectMeta: objectMeta(name), Spec: kubeflowv1.JAXJobSpec{JAXReplicaSpecs: s}}
	for _, m := range mutate {
		m(j)
	}
	return j
}

// longName returns a valid job name of n characters.
func longName(n int) string { return "j" + strings.Repeat("x", n-1) }

// rolePath is spec.<specsField>[<rtype>].
func rolePath(specsField string, rtype kubeflowv1.ReplicaType) *field.Path {
	return field.NewPath("spec", specsField).Key(string(rtype))
}

// containersPath is spec.<specsField>[<rtype>].template.spec.containers.
func containersPath(specsField string, rtype kubeflowv1.ReplicaType) *field.Path {
	return rolePath(specsField, rtype).Child("template", "spec", "containers")
}

var managedByField = field.NewPath("spec", "runPolicy", "managedBy")

// validationCase is one row of a ValidateXJob table.
type validationCase[T any] struct {
	name         string
	old, job     T
	wantErrs     field.ErrorList
	wantWarnings admission.Warnings
}

// runValidationCases runs a ValidateXJob table, comparing error lists with
// cmp.Diff (Origin, which tags errors for declarative validation, ignored).
func runValidationCases[T any](t *testing.T, validate func(old, job T) (field.ErrorList, admission.Warnings), cases []validationCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs, warnings := validate(tc.old, tc.job)
			if diff := cmp.Diff(tc.wantErrs, errs, cmpopts.IgnoreFields(field.Error{}, "Origin"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
