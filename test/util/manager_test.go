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

package util

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The harnesses build the operator's own wiring, so the configured client
// settings reach their managers.
func TestHarnessesApplyClientConnection(t *testing.T) {
	cfg := DefaultConfiguration()
	qps, burst := float32(77), int32(99)
	cfg.ClientConnection.QPS, cfg.ClientConnection.Burst = &qps, &burst
	restCfg := discoveryOnly(t)

	op, err := newOperator(restCfg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "StartOperator", op.Manager)
	if op.Certs != nil {
		t.Error("StartOperator: webhook certificates set up")
	}

	full, mgr, err := newFullOperator(FullOperatorOptions{RESTConfig: restCfg, Config: cfg, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(full.certDir) })
	check(t, "StartFullOperator", mgr)
	if full.Readyz == nil {
		t.Error("StartFullOperator: no webhook ready check")
	}

	if restCfg.QPS != 0 || restCfg.Burst != 0 {
		t.Errorf("the caller's config was changed: QPS %v, burst %d", restCfg.QPS, restCfg.Burst)
	}
}

func check(t *testing.T, harness string, mgr ctrl.Manager) {
	t.Helper()
	if got := mgr.GetConfig(); got.QPS != 77 || got.Burst != 99 {
		t.Errorf("%s: manager QPS %v, burst %d; want 77, 99", harness, got.QPS, got.Burst)
	}
}

// discoveryOnly is an API server that answers discovery alone, listing
// every kind of the operator's scheme: wiring a manager maps the types it
// watches and makes no other request.
func discoveryOnly(t *testing.T) *rest.Config {
	t.Helper()
	resources := map[schema.GroupVersion][]metav1.APIResource{}
	for gvk := range Scheme().AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		resources[gvk.GroupVersion()] = append(resources[gvk.GroupVersion()], metav1.APIResource{
			Name: strings.ToLower(gvk.Kind) + "s", Kind: gvk.Kind, Namespaced: true,
			Verbs: metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"},
		})
	}
	groups := &metav1.APIGroupList{}
	for gv := range resources {
		if gv.Group == "" || gv.Version == runtime.APIVersionInternal {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		groups.Groups = append(groups.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		switch p := strings.Trim(r.URL.Path, "/"); {
		case p == "api":
			body = &metav1.APIVersions{Versions: []string{"v1"}}
		case p == "apis":
			body = groups
		case p == "api/v1":
			body = &metav1.APIResourceList{GroupVersion: "v1", APIResources: resources[schema.GroupVersion{Version: "v1"}]}
		case strings.HasPrefix(p, "apis/"):
			gv, err := schema.ParseGroupVersion(strings.TrimPrefix(p, "apis/"))
			if err != nil || resources[gv] == nil {
				http.NotFound(w, r)
				return
			}
			body = &metav1.APIResourceList{GroupVersion: gv.String(), APIResources: resources[gv]}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}
