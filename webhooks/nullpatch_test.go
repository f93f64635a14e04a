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

	"github.com/google/go-cmp/cmp"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The defaulting patch of a job without replica specs must not write them
// as null: the API server's schema validation would then answer
// `Invalid value: "null": must be of type object` instead of v1's
// `spec.<x>ReplicaSpecs: Required value`.
func TestDefaultingPatchHasNoNulls(t *testing.T) {
	mgr := newTestManager(t)
	kinds := []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"}
	if err := Setup(mgr, kinds); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mgr.GetWebhookServer().WebhookMux())
	defer srv.Close()

	for _, kind := range kinds {
		for name, spec := range map[string]string{"empty spec": `,"spec":{}`, "no spec": ``} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				raw := `{"apiVersion":"kubeflow.org/v1","kind":"` + kind + `","metadata":{"name":"j","namespace":"ns"}` + spec + `}`
				body, err := json.Marshal(&admissionv1.AdmissionReview{
					TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
					Request: &admissionv1.AdmissionRequest{
						UID:       "uid-1",
						Kind:      metav1.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: kind},
						Resource:  metav1.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: strings.ToLower(kind) + "s"},
						Name:      "j",
						Namespace: "ns",
						Operation: admissionv1.Create,
						Object:    runtime.RawExtension{Raw: []byte(raw)},
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.Post(srv.URL+MutatingPath(kind), "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close() //nolint:errcheck
				var out admissionv1.AdmissionReview
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
					t.Fatal(err)
				}
				if !out.Response.Allowed {
					t.Fatalf("defaulter denied: %+v", out.Response.Result)
				}
				var ops []map[string]any
				if len(out.Response.Patch) > 0 {
					if err := json.Unmarshal(out.Response.Patch, &ops); err != nil {
						t.Fatal(err)
					}
				}
				var nulls []string
				for _, op := range ops {
					if v, ok := op["value"]; ok {
						nulls = append(nulls, nullPaths(op["path"].(string), v)...)
					}
				}
				if diff := cmp.Diff([]string(nil), nulls); diff != "" {
					t.Errorf("patch %s writes nulls (-want +got):\n%s", out.Response.Patch, diff)
				}
			})
		}
	}
}

// nullPaths lists the JSON pointers under path whose value is null.
func nullPaths(path string, v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{path}
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(out, nullPaths(path+"/"+k, e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, nullPaths(path+"/-", e)...)
		}
		return out
	}
	return nil
}

func TestDropNulls(t *testing.T) {
	op := func(operation, path string, value any) jsonpatch.JsonPatchOperation {
		return jsonpatch.JsonPatchOperation{Operation: operation, Path: path, Value: value}
	}
	cases := map[string]struct {
		in, want []jsonpatch.JsonPatchOperation
	}{
		"an added null is dropped": {
			in:   []jsonpatch.JsonPatchOperation{op("add", "/spec/pytorchReplicaSpecs", nil), op("add", "/spec/nprocPerNode", "auto")},
			want: []jsonpatch.JsonPatchOperation{op("add", "/spec/nprocPerNode", "auto")},
		},
		"null members of an added object are dropped at any depth": {
			in: []jsonpatch.JsonPatchOperation{op("add", "/spec", map[string]any{
				"tfReplicaSpecs": nil,
				"runPolicy":      map[string]any{"cleanPodPolicy": "None", "suspend": nil},
				"list":           []any{map[string]any{"a": nil, "b": 1.0}, nil},
			})},
			want: []jsonpatch.JsonPatchOperation{op("add", "/spec", map[string]any{
				"runPolicy": map[string]any{"cleanPodPolicy": "None"},
				"list":      []any{map[string]any{"b": 1.0}, nil},
			})},
		},
		"replaced objects lose their null members": {
			in:   []jsonpatch.JsonPatchOperation{op("replace", "/spec/runPolicy", map[string]any{"cleanPodPolicy": "None", "x": nil})},
			want: []jsonpatch.JsonPatchOperation{op("replace", "/spec/runPolicy", map[string]any{"cleanPodPolicy": "None"})},
		},
		"removes are kept": {
			in:   []jsonpatch.JsonPatchOperation{op("remove", "/spec/x", nil)},
			want: []jsonpatch.JsonPatchOperation{op("remove", "/spec/x", nil)},
		},
		"only nulls leave no ops": {
			in:   []jsonpatch.JsonPatchOperation{op("add", "/spec/mpiReplicaSpecs", nil)},
			want: []jsonpatch.JsonPatchOperation{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, dropNulls(tc.in)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
		})
	}
}
