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

package webhooks_test

// The tests of this file run the webhooks of every kind of the operator's
// table (package kinds).

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

func TestSetupRegistersEnabledKinds(t *testing.T) {
	mgr := webhooks.NewTestManager(t)
	if err := webhooks.Setup(mgr, kinds.Webhooks(), []string{"pytorchjob", "MPIJob"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range kinds.Names() {
		want := name == kubeflowv1.PyTorchJobKind || name == kubeflowv1.MPIJobKind
		for _, path := range []string{webhooks.MutatingPath(name), webhooks.ValidatingPath(name)} {
			if got := webhooks.Registered(mgr, path); got != want {
				t.Errorf("%s registered = %v, want %v", path, got, want)
			}
		}
	}
	if err := webhooks.Setup(webhooks.NewTestManager(t), kinds.Webhooks(), []string{"PyTorchJob", "FooJob"}); err == nil || err.Error() != "scheme foojob is not supported yet" {
		t.Errorf("Setup with an unknown scheme: %v", err)
	}
}

// TestWebhookConfigurationsMatchManifests checks that the webhooks described
// in code are those controller-gen generates from the markers.
func TestWebhookConfigurationsMatchManifests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "MutatingWebhookConfiguration":
			err = yaml.UnmarshalStrict([]byte(doc), &mutating)
		case "ValidatingWebhookConfiguration":
			err = yaml.UnmarshalStrict([]byte(doc), &validating)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The generated service is a placeholder that kustomize replaces.
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig.Service.Name, mutating.Webhooks[i].ClientConfig.Service.Namespace = "", ""
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig.Service.Name, validating.Webhooks[i].ClientConfig.Service.Namespace = "", ""
	}
	got, err := webhooks.WebhookConfigurations(kinds.Webhooks(), kinds.Names())
	if err != nil {
		t.Fatal(err)
	}
	byName := func(a, b string) int { return strings.Compare(a, b) }
	slices.SortFunc(got.Mutating, func(a, b admissionregistrationv1.MutatingWebhook) int { return byName(a.Name, b.Name) })
	slices.SortFunc(got.Validating, func(a, b admissionregistrationv1.ValidatingWebhook) int { return byName(a.Name, b.Name) })
	if diff := cmp.Diff(mutating.Webhooks, got.Mutating); diff != "" {
		t.Errorf("mutating webhooks (-manifests.yaml +code):\n%s", diff)
	}
	if diff := cmp.Diff(validating.Webhooks, got.Validating); diff != "" {
		t.Errorf("validating webhooks (-manifests.yaml +code):\n%s", diff)
	}
	if len(got.Managed) != 12 {
		t.Errorf("managed webhooks %v, want 12", got.Managed)
	}
}

func TestWebhookConfigurationsOnlyEnabledKinds(t *testing.T) {
	got, err := webhooks.WebhookConfigurations(kinds.Webhooks(), []string{"tfjob", "JAXJob"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range got.Mutating {
		names = append(names, w.Name+" "+*w.ClientConfig.Service.Path)
	}
	for _, w := range got.Validating {
		names = append(names, w.Name+" "+*w.ClientConfig.Service.Path)
	}
	want := []string{
		"defaulter.tfjob.training-operator.kubeflow.org /mutate-kubeflow-org-v1-tfjob",
		"defaulter.jaxjob.training-operator.kubeflow.org /mutate-kubeflow-org-v1-jaxjob",
		"validator.tfjob.training-operator.kubeflow.org /validate-kubeflow-org-v1-tfjob",
		"validator.jaxjob.training-operator.kubeflow.org /validate-kubeflow-org-v1-jaxjob",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}
	if got.MutatingName != "defaulter.training-operator.kubeflow.org" || got.ValidatingName != "validator.training-operator.kubeflow.org" {
		t.Errorf("configuration names %q, %q", got.MutatingName, got.ValidatingName)
	}
}

// The defaulting patch of a job without replica specs must not write them
// as null: the API server's schema validation would then answer
// `Invalid value: "null": must be of type object` instead of v1's
// `spec.<x>ReplicaSpecs: Required value`.
func TestDefaultingPatchHasNoNulls(t *testing.T) {
	mgr := webhooks.NewTestManager(t)
	names := kinds.Names()
	if err := webhooks.Setup(mgr, kinds.Webhooks(), names); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mgr.GetWebhookServer().WebhookMux())
	defer srv.Close()

	for _, kind := range names {
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
				resp, err := http.Post(srv.URL+webhooks.MutatingPath(kind), "application/json", bytes.NewReader(body))
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
