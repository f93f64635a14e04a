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
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

func pytorchWebhook() *jobWebhook[*kubeflowv1.PyTorchJob] {
	return &jobWebhook[*kubeflowv1.PyTorchJob]{kind: kubeflowv1.PyTorchJobKind, setDefaults: kubeflowv1.SetDefaults_PyTorchJob, validate: ValidatePyTorchJob}
}

func TestDefaultLeavesSuspendAndManagedByAlone(t *testing.T) {
	for _, tc := range []struct {
		suspend   *bool
		managedBy *string
	}{
		{},
		{suspend: ptr.To(true), managedBy: ptr.To(kubeflowv1.MultiKueueController)},
		{suspend: ptr.To(false), managedBy: ptr.To(kubeflowv1.KubeflowJobsController)},
	} {
		job := pytorchJob("job", specs{"master": rsUnset(ctr("pytorch"))}, func(j *kubeflowv1.PyTorchJob) {
			j.Spec.RunPolicy.Suspend = tc.suspend
			j.Spec.RunPolicy.ManagedBy = tc.managedBy
		})
		pytorchWebhook().setDefaults(job)
		rp := job.Spec.RunPolicy
		if !cmp.Equal(rp.Suspend, tc.suspend) || !cmp.Equal(rp.ManagedBy, tc.managedBy) {
			t.Errorf("suspend, managedBy = %v, %v; want %v, %v", rp.Suspend, rp.ManagedBy, tc.suspend, tc.managedBy)
		}
		m := job.Spec.PyTorchReplicaSpecs[master]
		if m == nil || m.Replicas == nil || *m.Replicas != 1 || m.RestartPolicy != kubeflowv1.RestartPolicyOnFailure {
			t.Errorf("Master not defaulted: %+v", m)
		}
	}
}

func TestValidateCreateUsesDefaults(t *testing.T) {
	ctx := context.Background()
	// Master replicas omitted and the type spelled in lower case: valid
	// once defaulted, even if the defaulting webhook did not run.
	job := pytorchJob("job", specs{"master": rsUnset(ctr("pytorch")), "worker": rs(2, ctr("pytorch"))})
	warnings, err := pytorchWebhook().ValidateCreate(ctx, job)
	if err != nil || len(warnings) > 0 {
		t.Errorf("ValidateCreate = %v, %v; want no warnings and no error", warnings, err)
	}
	if job.Spec.PyTorchReplicaSpecs["master"] == nil || job.Spec.PyTorchReplicaSpecs["master"].Replicas != nil {
		t.Errorf("ValidateCreate changed the request object: %+v", job.Spec.PyTorchReplicaSpecs)
	}

	// TF: "chief" becomes Chief, which then clashes with Master.
	tfWebhook := &jobWebhook[*kubeflowv1.TFJob]{kind: kubeflowv1.TFJobKind, setDefaults: kubeflowv1.SetDefaults_TFJob, validate: ValidateTFJob}
	_, err = tfWebhook.ValidateCreate(ctx, tfJob("tf", specs{"chief": rs(1, ctr("tensorflow")), "Master": rs(1, ctr("tensorflow"))}))
	if err == nil || err.Error() != "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role" {
		t.Errorf("TFJob with chief and Master: error %v", err)
	}
}

func TestValidationErrorIsInvalidStatus(t *testing.T) {
	job := pytorchJob("job", specs{master: rs(2, ctr("pytorch")), worker: rs(0, ctr("pytorch"))})
	_, err := pytorchWebhook().ValidateCreate(context.Background(), job)
	var statusErr *apierrors.StatusError
	if !errors.As(err, &statusErr) {
		t.Fatalf("error %T %v, want a StatusError", err, err)
	}
	st := statusErr.Status()
	// The message is v1's plain list; the API server prefixes it with
	// `admission webhook "<name>" denied the request: `.
	wantMsg := "[spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1, spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1]"
	if st.Message != wantMsg {
		t.Errorf("message = %q, want %q", st.Message, wantMsg)
	}
	if st.Code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid {
		t.Errorf("code, reason = %d, %s; want 422, Invalid", st.Code, st.Reason)
	}
	wantDetails := &metav1.StatusDetails{
		Name:  "job",
		Group: "kubeflow.org",
		Kind:  "PyTorchJob",
		Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeForbidden, Message: "Forbidden: must be 1", Field: "spec.pytorchReplicaSpecs[Master].replicas"},
			{Type: metav1.CauseTypeForbidden, Message: "Forbidden: must be at least 1", Field: "spec.pytorchReplicaSpecs[Worker].replicas"},
		},
	}
	if diff := cmp.Diff(wantDetails, st.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}

func TestValidateUpdateManagedBy(t *testing.T) {
	old := pytorchJob("job", specs{worker: rs(1, ctr("pytorch"))})
	updated := old.DeepCopy()
	updated.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController)
	_, err := pytorchWebhook().ValidateUpdate(context.Background(), old, updated)
	want := `spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is immutable`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if warnings, err := pytorchWebhook().ValidateDelete(context.Background(), old); err != nil || warnings != nil {
		t.Errorf("ValidateDelete = %v, %v", warnings, err)
	}
}

func newTestManager(t *testing.T) ctrl.Manager {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := kubeflowv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 s,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Port: 0}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

func registered(mgr ctrl.Manager, path string) bool {
	_, pattern := mgr.GetWebhookServer().WebhookMux().Handler(&http.Request{Method: http.MethodPost, URL: mustParseURL(path)})
	return pattern == path
}

// TestServeAdmissionReview sends AdmissionReviews through the registered
// handlers, as the API server does.
func TestServeAdmissionReview(t *testing.T) {
	mgr := newTestManager(t)
	if err := Setup(mgr, []Hooks{For(ValidatePyTorchJob)}, []string{"PyTorchJob"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mgr.GetWebhookServer().WebhookMux())
	defer srv.Close()

	review := func(path string, job *kubeflowv1.PyTorchJob) *admissionv1.AdmissionResponse {
		t.Helper()
		raw, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(&admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID:       types.UID("uid-1"),
				Kind:      metav1.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"},
				Resource:  metav1.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"},
				Name:      job.Name,
				Namespace: job.Namespace,
				Operation: admissionv1.Create,
				Object:    runtime.RawExtension{Raw: raw},
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

	job := pytorchJob("job", specs{master: rsUnset(ctr("pytorch")), worker: rs(2, ctr("pytorch"))})
	job.TypeMeta = metav1.TypeMeta{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob"}

	mutated := review(MutatingPath(kubeflowv1.PyTorchJobKind), job)
	if !mutated.Allowed || mutated.PatchType == nil {
		t.Fatalf("defaulter response %+v", mutated)
	}
	var patch []map[string]any
	if err := json.Unmarshal(mutated.Patch, &patch); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, op := range patch {
		paths = append(paths, op["op"].(string)+" "+op["path"].(string))
	}
	for _, want := range []string{
		"add /spec/pytorchReplicaSpecs/Master/replicas",
		"add /spec/pytorchReplicaSpecs/Master/restartPolicy",
		"add /spec/runPolicy/cleanPodPolicy",
		"add /spec/nprocPerNode",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("patch %v lacks %q", paths, want)
		}
	}
	for _, p := range paths {
		if strings.HasPrefix(p, "remove") || strings.Contains(p, "suspend") || strings.Contains(p, "managedBy") {
			t.Errorf("unexpected patch operation %q", p)
		}
	}

	if got := review(ValidatingPath(kubeflowv1.PyTorchJobKind), job); !got.Allowed {
		t.Errorf("validator denied a job with Master replicas omitted: %+v", got.Result)
	}
	job.Spec.PyTorchReplicaSpecs[master].Replicas = ptr.To[int32](2)
	denied := review(ValidatingPath(kubeflowv1.PyTorchJobKind), job)
	if denied.Allowed || denied.Result == nil || denied.Result.Code != http.StatusUnprocessableEntity ||
		denied.Result.Message != "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1" {
		t.Errorf("validator response %+v, want a 422 with the field error", denied.Result)
	}
}

func mustParseURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// The defaulting patch keeps the removals defaulting makes (a replica type
// renamed to its canonical case), drops those only decoding makes (a field
// the Go type lacks), and an object that is already defaulted or does not
// decode gets no patch.
func TestDefaultingPatch(t *testing.T) {
	s := runtime.NewScheme()
	if err := kubeflowv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	h := mutatingWebhook(s, &kubeflowv1.PyTorchJob{}, pytorchWebhook()).Handler
	const head = `{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"j","namespace":"ns"},`
	defaulted := pytorchJob("j", specs{master: rs(1, ctr("pytorch")), worker: rs(2, ctr("pytorch"))})
	defaulted.TypeMeta = metav1.TypeMeta{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob"}
	kubeflowv1.SetDefaults_PyTorchJob(defaulted)
	defaultedRaw, err := json.Marshal(defaulted)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		raw  string
		want []string // "op path" of every operation, in any order; nil: no patch
		not  []string // operations the patch must not have
	}{
		"lower-case type renamed": {
			raw:  head + `"spec":{"pytorchReplicaSpecs":{"worker":{"replicas":2,"restartPolicy":"OnFailure","template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}}}}`,
			want: []string{"remove /spec/pytorchReplicaSpecs/worker", "add /spec/pytorchReplicaSpecs/Worker"},
		},
		"field the type lacks kept": {
			raw: head + `"spec":{"futureField":{"a":1},"pytorchReplicaSpecs":{"Worker":{"replicas":2,"template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}}}}`,
			not: []string{"remove /spec/futureField"},
		},
		"already defaulted": {raw: string(defaultedRaw)},
		"not decodable":     {raw: head + `"spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":"2"}}}}`},
	} {
		t.Run(name, func(t *testing.T) {
			resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(tc.raw)}}})
			if !resp.Allowed {
				t.Fatalf("not allowed: %+v", resp.Result)
			}
			var ops []string
			for _, op := range resp.Patches {
				ops = append(ops, op.Operation+" "+op.Path)
			}
			if (tc.want == nil && tc.not == nil) != (len(ops) == 0) || (len(ops) == 0) != (resp.PatchType == nil) {
				t.Fatalf("patch %v, patch type %v", ops, resp.PatchType)
			}
			for _, w := range tc.want {
				if !slices.Contains(ops, w) {
					t.Errorf("patch %v lacks %q", ops, w)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(ops, n) {
					t.Errorf("patch %v has %q", ops, n)
				}
			}
		})
	}
}

// BenchmarkDefaulting is the defaulting webhook's cost for a 1+3
// PyTorchJob as kubectl sends it, which every job pays once.
func BenchmarkDefaulting(b *testing.B) {
	s := runtime.NewScheme()
	if err := kubeflowv1.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	h := mutatingWebhook(s, &kubeflowv1.PyTorchJob{}, pytorchWebhook()).Handler
	raw := []byte(`{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"bench","namespace":"ns"},"spec":{"pytorchReplicaSpecs":{` +
		`"Master":{"replicas":1,"restartPolicy":"OnFailure","template":{"spec":{"containers":[{"name":"pytorch","image":"docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727","command":["python3","/opt/pytorch-mnist/mnist.py","--epochs=1"],"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}},` +
		`"Worker":{"replicas":3,"restartPolicy":"OnFailure","template":{"spec":{"containers":[{"name":"pytorch","image":"docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727","command":["python3","/opt/pytorch-mnist/mnist.py","--epochs=1"],"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}}}`)
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}}
	b.ReportAllocs()
	for b.Loop() {
		if resp := h.Handle(context.Background(), req); !resp.Allowed || len(resp.Patches) == 0 {
			b.Fatalf("response %+v", resp)
		}
	}
}
