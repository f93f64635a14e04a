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
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Rules that keep input the API server would accept but no pod could be
// created from (or that would swamp the operator) out of the cluster.

// withPorts is a container with ports.
func withPorts(name string, ports ...corev1.ContainerPort) corev1.Container {
	c := ctr(name)
	c.Ports = ports
	return c
}

// withTemplateMeta sets pod-template labels and annotations on a replica spec.
func withTemplateMeta(s *kubeflowv1.ReplicaSpec, labels, annotations map[string]string) *kubeflowv1.ReplicaSpec {
	s.Template.Labels, s.Template.Annotations = labels, annotations
	return s
}

func TestReplicaCap(t *testing.T) {
	tooMany := func(specsField string, rtype kubeflowv1.ReplicaType, n int32) field.ErrorList {
		return field.ErrorList{field.Invalid(rolePath(specsField, rtype).Child("replicas"), n, "must be less than or equal to 10000")}
	}
	t.Run("PyTorchJob", func(t *testing.T) {
		runValidationCases(t, ValidatePyTorchJob, []validationCase[*kubeflowv1.PyTorchJob]{
			{name: "at the cap", job: pytorchJob("p", specs{worker: rs(MaxReplicas, ctr("pytorch"))})},
			{name: "100000 workers", job: pytorchJob("p", specs{worker: rs(100000, ctr("pytorch"))}), wantErrs: tooMany("pytorchReplicaSpecs", worker, 100000)},
			{name: "max int32 workers", job: pytorchJob("p", specs{worker: rs(2147483647, ctr("pytorch"))}), wantErrs: tooMany("pytorchReplicaSpecs", worker, 2147483647)},
			{
				name: "elastic maxReplicas above the cap",
				job: pytorchJob("p", specs{worker: rs(1, ctr("pytorch"))}, func(j *kubeflowv1.PyTorchJob) {
					j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](20000)}
				}),
				wantErrs: field.ErrorList{field.Invalid(field.NewPath("spec", "elasticPolicy", "maxReplicas"), int32(20000), "must be less than or equal to 10000")},
			},
			{
				// Defaulting no longer copies minReplicas into maxReplicas.
				name: "elastic minReplicas above the cap, maxReplicas unset",
				job: pytorchJob("p", specs{worker: rs(1, ctr("pytorch"))}, func(j *kubeflowv1.PyTorchJob) {
					j.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{MinReplicas: ptr.To[int32](20000)}
				}),
				wantErrs: field.ErrorList{field.Invalid(field.NewPath("spec", "elasticPolicy", "minReplicas"), int32(20000), "must be less than or equal to 10000")},
			},
			{
				// Admitted before the cap existed: other changes still go through.
				name: "update of a job already above the cap",
				old:  pytorchJob("p", specs{worker: rs(20000, ctr("pytorch"))}),
				job: pytorchJob("p", specs{worker: rs(20000, ctr("pytorch"))}, func(j *kubeflowv1.PyTorchJob) {
					j.Spec.RunPolicy.Suspend = ptr.To(true)
				}),
			},
		})
	})
	t.Run("TFJob", func(t *testing.T) {
		runValidationCases(t, ValidateTFJob, []validationCase[*kubeflowv1.TFJob]{
			{name: "100000 PS", job: tfJob("t", specs{"PS": rs(100000, ctr("tensorflow"))}), wantErrs: tooMany("tfReplicaSpecs", "PS", 100000)},
		})
	})
	t.Run("MPIJob", func(t *testing.T) {
		runValidationCases(t, ValidateMPIJob, []validationCase[*kubeflowv1.MPIJob]{
			{
				name:     "100000 workers",
				job:      mpiJob("m", specs{"Launcher": rs(1, ctr("mpi")), "Worker": rs(100000, ctr("mpi"))}),
				wantErrs: tooMany("mpiReplicaSpecs", "Worker", 100000),
			},
		})
	})
	t.Run("XGBoostJob", func(t *testing.T) {
		runValidationCases(t, ValidateXGBoostJob, []validationCase[*kubeflowv1.XGBoostJob]{
			{
				name:     "100000 workers",
				job:      xgboostJob("x", specs{master: rs(1, ctr("xgboost")), worker: rs(100000, ctr("xgboost"))}),
				wantErrs: tooMany("xgbReplicaSpecs", worker, 100000),
			},
		})
	})
	t.Run("PaddleJob", func(t *testing.T) {
		runValidationCases(t, ValidatePaddleJob, []validationCase[*kubeflowv1.PaddleJob]{
			{name: "100000 workers", job: paddleJob("p", specs{worker: rs(100000, ctr("paddle"))}), wantErrs: tooMany("paddleReplicaSpecs", worker, 100000)},
		})
	})
	t.Run("JAXJob", func(t *testing.T) {
		runValidationCases(t, ValidateJAXJob, []validationCase[*kubeflowv1.JAXJob]{
			{name: "100000 workers", job: jaxJob("j", specs{worker: rs(100000, ctr("jax"))}), wantErrs: tooMany("jaxReplicaSpecs", worker, 100000)},
		})
	})
}

func TestPodTemplateRules(t *testing.T) {
	containers := containersPath("pytorchReplicaSpecs", worker)
	template := rolePath("pytorchReplicaSpecs", worker).Child("template")
	port := func(name string, n int32) corev1.ContainerPort {
		return corev1.ContainerPort{Name: name, ContainerPort: n}
	}
	runValidationCases(t, ValidatePyTorchJob, []validationCase[*kubeflowv1.PyTorchJob]{
		{
			name: "valid ports, labels and annotations",
			job: pytorchJob("p", specs{worker: withTemplateMeta(rs(1, withPorts("pytorch", port("pytorchjob-port", 23456), port("metrics", 9090))),
				map[string]string{"team": "ml"}, map[string]string{"note": "ünïcode values are fine in annotations"})}),
		},
		{
			name: "container port out of range",
			job:  pytorchJob("p", specs{worker: rs(1, withPorts("pytorch", port("pytorchjob-port", 70000)))}),
			wantErrs: field.ErrorList{field.Invalid(containers.Index(0).Child("ports").Index(0).Child("containerPort"), int32(70000),
				"must be between 1 and 65535, inclusive")},
		},
		{
			name: "container port zero and negative host port",
			job:  pytorchJob("p", specs{worker: rs(1, withPorts("pytorch", corev1.ContainerPort{Name: "p", ContainerPort: 0, HostPort: -1}))}),
			wantErrs: field.ErrorList{
				field.Invalid(containers.Index(0).Child("ports").Index(0).Child("containerPort"), int32(0), "must be between 1 and 65535, inclusive"),
				field.Invalid(containers.Index(0).Child("ports").Index(0).Child("hostPort"), int32(-1), "must be between 1 and 65535, inclusive"),
			},
		},
		{
			name: "duplicate port names across containers",
			job: pytorchJob("p", specs{worker: rs(1,
				withPorts("pytorch", port("pytorchjob-port", 23456)), withPorts("sidecar", port("pytorchjob-port", 23457)))}),
			wantErrs: field.ErrorList{field.Duplicate(containers.Index(1).Child("ports").Index(0).Child("name"), "pytorchjob-port")},
		},
		{
			name: "port name longer than 15 characters",
			job:  pytorchJob("p", specs{worker: rs(1, withPorts("pytorch", port("a-very-long-port-name", 23456)))}),
			wantErrs: field.ErrorList{field.Invalid(containers.Index(0).Child("ports").Index(0).Child("name"), "a-very-long-port-name",
				"must be no more than 15 characters")},
		},
		{
			name:     "duplicate container names",
			job:      pytorchJob("p", specs{worker: rs(1, ctr("pytorch"), ctr("pytorch"))}),
			wantErrs: field.ErrorList{field.Duplicate(containers.Index(1).Child("name"), "pytorch")},
		},
		{
			name: "unicode template label value",
			job:  pytorchJob("p", specs{worker: withTemplateMeta(rs(1, ctr("pytorch")), map[string]string{"team": "maschinelles-lernen-ü"}, nil)}),
			wantErrs: field.ErrorList{field.Invalid(template.Child("metadata", "labels"), "maschinelles-lernen-ü",
				"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")},
		},
		{
			name:     "template annotations over 256 KiB",
			job:      pytorchJob("p", specs{worker: withTemplateMeta(rs(1, ctr("pytorch")), nil, map[string]string{"big": strings.Repeat("x", 300*1024)})}),
			wantErrs: field.ErrorList{field.TooLong(template.Child("metadata", "annotations"), "", 256*1024)},
		},
	})
}

// TestUndecodableObjectsReachSchemaValidation checks that the defaulting
// webhook lets an object with a wrong JSON type through unchanged (the API
// server's schema validation then names the field), while the validating
// webhook, which runs after schema validation, still rejects it.
func TestUndecodableObjectsReachSchemaValidation(t *testing.T) {
	mgr := newTestManager(t)
	if err := Setup(mgr, []Hooks{For(ValidatePyTorchJob)}, []string{"PyTorchJob"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mgr.GetWebhookServer().WebhookMux())
	defer srv.Close()

	for _, tc := range []struct {
		name, raw string
	}{
		{"string replicas", `{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"j","namespace":"ns"},` +
			`"spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":"three","template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}}}}`},
		{"replicas beyond int32", `{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"j","namespace":"ns"},` +
			`"spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":3000000000,"template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			review := func(path string) *admissionv1.AdmissionResponse {
				t.Helper()
				body, err := json.Marshal(&admissionv1.AdmissionReview{
					TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
					Request: &admissionv1.AdmissionRequest{
						UID:       types.UID("uid-1"),
						Kind:      metav1.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"},
						Resource:  metav1.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"},
						Name:      "j",
						Namespace: "ns",
						Operation: admissionv1.Create,
						Object:    runtime.RawExtension{Raw: []byte(tc.raw)},
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close() //nolint:errcheck
				var out admissionv1.AdmissionReview
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
					t.Fatal(err)
				}
				return out.Response
			}
			if got := review(MutatingPath(kubeflowv1.PyTorchJobKind)); !got.Allowed || len(got.Patch) > 0 {
				t.Errorf("defaulter: %+v, want allowed without a patch", got)
			}
			if got := review(ValidatingPath(kubeflowv1.PyTorchJobKind)); got.Allowed {
				t.Errorf("validator allowed an undecodable object")
			}
		})
	}
}
