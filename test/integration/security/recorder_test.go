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

package security_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// apiCall is an API request normalised to what RBAC authorizes.
type apiCall struct {
	group, resource, verb string // resource may carry /subresource
}

func (c apiCall) String() string {
	g := c.group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s %s", g, c.resource, c.verb)
}

// callScope is where a request went: its namespace ("" for a
// cluster-scoped object or a request across all namespaces) and the object's
// name ("" for a list or watch of all, or a create).
type callScope struct {
	namespace, name string
}

// recorder counts the operator's API requests by (group, resource, verb),
// with the namespaces and names each went to, and keeps non-resource
// requests (discovery) apart.
type recorder struct {
	mu          sync.Mutex
	calls       map[apiCall]int
	where       map[apiCall]map[callScope]bool
	nonResource map[string]int
}

func newRecorder() *recorder {
	return &recorder{calls: map[apiCall]int{}, where: map[apiCall]map[callScope]bool{}, nonResource: map[string]int{}}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wrap is a rest.Config transport wrapper.
func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		r.record(req)
		return rt.RoundTrip(req)
	})
}

func (r *recorder) record(req *http.Request) {
	q := req.URL.Query()
	call, scope, ok := parseRequest(req.Method, req.URL.Path, q)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.nonResource[strings.ToLower(req.Method)+" "+req.URL.Path]++
		return
	}
	r.add(call, scope)
	// client-go's informers list with a streaming watch
	// (sendInitialEvents=true) and fall back to a plain LIST where the
	// server does not support it: such a watch uses the list grant too.
	if call.verb == "watch" && q.Get("sendInitialEvents") == "true" {
		r.add(apiCall{call.group, call.resource, "list"}, scope)
	}
}

func (r *recorder) add(c apiCall, scope callScope) {
	r.calls[c]++
	if r.where[c] == nil {
		r.where[c] = map[callScope]bool{}
	}
	r.where[c][scope] = true
}

// scopes is where the calls c went.
func (r *recorder) scopes(c apiCall) []callScope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Keys(r.where[c]))
}

func (r *recorder) snapshot() map[apiCall]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[apiCall]int, len(r.calls))
	for k, v := range r.calls {
		out[k] = v
	}
	return out
}

// parseRequest maps a request to RBAC's attributes, as the API server's
// request-info resolver does: /api/v1/... is the core group,
// /apis/<group>/<version>/... the others; namespaces/<ns>/ prefixes
// namespaced resources; GET without a name is list (or watch), with one get.
//
// The scope is the request's namespace and the object's name; a list or
// watch selecting one object by metadata.name (as RBAC's resourceNames
// allow) names it too.
func parseRequest(method, path string, query url.Values) (apiCall, callScope, bool) {
	watchParam := query.Get("watch")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return apiCall{}, callScope{}, false
	}
	var namespace string
	if len(parts) >= 3 && parts[0] == "namespaces" {
		namespace, parts = parts[1], parts[2:]
	}
	resource, name := parts[0], ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	var verb string
	switch method {
	case http.MethodGet:
		switch {
		case watchParam == "true" || watchParam == "1":
			verb = "watch"
		case name == "":
			verb = "list"
		default:
			verb = "get"
		}
		if name == "" {
			name = selectedName(query.Get("fieldSelector"))
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if name == "" {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	if resource == "namespaces" && len(parts) == 2 {
		// GET /api/v1/namespaces/<name>: the namespace object itself.
		namespace = ""
	}
	return apiCall{group, resource, verb}, callScope{namespace, name}, true
}

// selectedName is the name a field selector "metadata.name=<name>" selects.
func selectedName(selector string) string {
	for _, term := range strings.Split(selector, ",") {
		if n, ok := strings.CutPrefix(term, "metadata.name="); ok {
			return n
		}
	}
	return ""
}

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		method, path, watch string
		want                apiCall
		scope               callScope
	}{
		{"GET", "/api/v1/namespaces/ns/pods", "", apiCall{"", "pods", "list"}, callScope{"ns", ""}},
		{"GET", "/api/v1/pods", "true", apiCall{"", "pods", "watch"}, callScope{"", ""}},
		{"GET", "/api/v1/namespaces/ns/pods/p", "", apiCall{"", "pods", "get"}, callScope{"ns", "p"}},
		{"POST", "/api/v1/namespaces/ns/pods/p/exec", "", apiCall{"", "pods/exec", "create"}, callScope{"ns", "p"}},
		{"GET", "/api/v1/namespaces/kubeflow", "", apiCall{"", "namespaces", "get"}, callScope{"", "kubeflow"}},
		{"PATCH", "/apis/kubeflow.org/v1/namespaces/ns/pytorchjobs/j/status", "", apiCall{"kubeflow.org", "pytorchjobs/status", "patch"}, callScope{"ns", "j"}},
		{"PUT", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v", "", apiCall{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"}, callScope{"", "v"}},
		{"GET", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?fieldSelector=metadata.name%3Dv&watch=true", "true", apiCall{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "watch"}, callScope{"", "v"}},
		{"DELETE", "/apis/autoscaling/v2/namespaces/ns/horizontalpodautoscalers/h", "", apiCall{"autoscaling", "horizontalpodautoscalers", "delete"}, callScope{"ns", "h"}},
		{"POST", "/apis/authentication.k8s.io/v1/tokenreviews", "", apiCall{"authentication.k8s.io", "tokenreviews", "create"}, callScope{}},
	} {
		u, err := url.Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("watch", tc.watch)
		got, scope, ok := parseRequest(tc.method, u.Path, q)
		if !ok || got != tc.want || scope != tc.scope {
			t.Errorf("%s %s: got %v %+v (%v), want %v %+v", tc.method, tc.path, got, scope, ok, tc.want, tc.scope)
		}
	}
	if _, _, ok := parseRequest("GET", "/apis/kubeflow.org/v1", url.Values{}); ok {
		t.Errorf("discovery parsed as a resource request")
	}
}

// grants expands RBAC rules into (group, resource, verb) triples.
func grants(rules []rbacv1.PolicyRule) map[apiCall]bool {
	out := map[apiCall]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out[apiCall{g, res, v}] = true
				}
			}
		}
	}
	return out
}

// roleYAML reads the ClusterRole rules of config/rbac/role.yaml.
func roleYAML(t *testing.T, path string) []rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	return role.Rules
}

func sortedCalls[V any](m map[apiCall]V) []apiCall {
	out := make([]apiCall, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// allowedBy reports whether a call is granted (exact, or * wildcards).
func allowedBy(g map[apiCall]bool, c apiCall) bool {
	return slices.ContainsFunc([]apiCall{c, {c.group, c.resource, "*"}, {c.group, "*", c.verb}, {"*", c.resource, c.verb}}, func(k apiCall) bool { return g[k] })
}
