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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/hack/chart/chartsync"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// TestSecurity runs one operator with the chart's RBAC and secure metrics,
// then checks metrics authentication, TLS versions and least privilege.
func TestSecurity(t *testing.T) {
	s := start(t, configv1alpha1.CertManagementSelfSigned)
	op := s.startOperator(t, nil)
	s.waitWebhooksReachable(t, testjobs.MakePyTorchJob("probe", "default").Master(1).Obj())

	t.Run("secure metrics require authentication and authorization", func(t *testing.T) {
		s.checkMetricsAuth(t, op)
	})
	t.Run("TLS below 1.2 is refused", func(t *testing.T) {
		for _, srv := range []struct{ name, addr string }{{"webhook server", op.WebhookAddr}, {"metrics server", op.MetricsAddr}} {
			for _, v := range []struct {
				name    string
				version uint16
				ok      bool
			}{{"TLS 1.0", tls.VersionTLS10, false}, {"TLS 1.1", tls.VersionTLS11, false}, {"TLS 1.2", tls.VersionTLS12, true}, {"TLS 1.3", tls.VersionTLS13, true}} {
				err := handshake(srv.addr, v.version)
				switch {
				case v.ok && err != nil:
					t.Errorf("%s: %s handshake failed: %v", srv.name, v.name, err)
				case !v.ok && err == nil:
					t.Errorf("%s: %s handshake succeeded, want refused", srv.name, v.name)
				}
				t.Logf("%s %s: handshake error %v", srv.name, v.name, err)
			}
		}
	})
	t.Run("RBAC grants exactly what the operator uses", func(t *testing.T) {
		s.checkLeastPrivilege(t, op)
	})
	// Last: it takes the API server down for about ten seconds, with an
	// operator of its own (the RBAC check stopped the first) that holds no
	// Lease it would lose meanwhile.
	t.Run("a TokenReview outage is 503, not 401", func(t *testing.T) {
		s.checkMetricsAuthOutage(t, s.startOperatorElected(t, nil, false))
	})
}

// TestSecurityCertManager installs the chart with certManagement
// cert-manager (what cert-manager and its CA injector write is written by
// the suite) and checks that the operator then touches neither Secrets nor
// webhook configurations and that the chart's RBAC for that mode is again
// exactly what the operator uses.
func TestSecurityCertManager(t *testing.T) {
	s := start(t, configv1alpha1.CertManagementCertManager)
	op := s.startOperator(t, nil)
	s.waitWebhooksReachable(t, testjobs.MakePyTorchJob("probe", "default").Master(1).Obj())
	t.Run("secure metrics require authentication and authorization", func(t *testing.T) {
		s.checkMetricsAuth(t, op)
	})
	t.Run("RBAC grants exactly what the operator uses", func(t *testing.T) {
		s.checkLeastPrivilege(t, op)
	})
}

// handshake dials addr speaking exactly one TLS version.
func handshake(addr string, version uint16) error {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{
		MinVersion:         version,
		MaxVersion:         version,
		InsecureSkipVerify: true, //nolint:gosec // only the protocol version is under test
	})
	if err != nil {
		return err
	}
	return conn.Close()
}

// checkMetricsAuth checks the chart's secure metrics: no token is 401, a
// bad token 401, a ServiceAccount without the metrics-reader role 403, one
// bound to training-operator-metrics-reader 200. The chart ships the RBAC
// the operator needs for this (tokenreviews and subjectaccessreviews
// create) and the reader ClusterRole.
func (s *suite) checkMetricsAuth(t *testing.T, op *util.FullOperator) {
	ctx := t.Context()
	if op.MetricsAddr == "" {
		t.Fatal("secure metrics are not served")
	}
	// The chart's RBAC for it.
	auth := s.chartObject("ClusterRole", "training-operator-metrics-auth")
	reader := s.chartObject("ClusterRole", "training-operator-metrics-reader")
	if auth == nil || reader == nil {
		t.Fatalf("the chart with metrics.secure lacks the metrics ClusterRoles (auth %v, reader %v)", auth != nil, reader != nil)
	}
	for _, want := range []string{"tokenreviews", "subjectaccessreviews"} {
		rules, _, _ := unstructured.NestedSlice(auth.Object, "rules")
		if !strings.Contains(fmt.Sprint(rules), want) {
			t.Errorf("training-operator-metrics-auth does not grant %s: %v", want, rules)
		}
	}
	if rules, _, _ := unstructured.NestedSlice(reader.Object, "rules"); !strings.Contains(fmt.Sprint(rules), "/metrics") {
		t.Errorf("training-operator-metrics-reader does not grant /metrics: %v", rules)
	}
	// The default install: report whether metrics are secure out of the box.
	def, err := parseManifests(helm(t, "template", "training-operator", filepath.Join(util.RepoRoot(), "charts", "training-operator"), "--namespace", releaseNamespace))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range def {
		if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "training-operator-config") {
			data, _, _ := unstructured.NestedString(o.Object, "data", "config.yaml")
			t.Logf("chart defaults: metrics.secure in the rendered configuration: %v", strings.Contains(data, "secure: true"))
		}
	}

	cs, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "monitoring"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(sa string) string {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	prometheus, nobody := token("prometheus"), token("nobody")
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-training-operator-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "training-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prometheus"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The endpoint serves the webhook serving certificate: verified as the
	// chart's ServiceMonitor does, with ca.crt of the certificate Secret and
	// the Service's name.
	var certSecret corev1.Secret
	if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: s.config.Webhook.SecretName}, &certSecret); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(certSecret.Data["ca.crt"]) {
		t.Fatalf("no ca.crt in the certificate Secret")
	}
	serverName := fmt.Sprintf("%s.%s.svc", s.config.Webhook.ServiceName, releaseNamespace)
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}}
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"invalid token", "not-a-token", http.StatusUnauthorized},
		{"ServiceAccount without the reader role", nobody, http.StatusForbidden},
		{"ServiceAccount bound to training-operator-metrics-reader", prometheus, http.StatusOK},
	} {
		var code int
		var body string
		// RBAC bindings take a moment to reach the authorizer's cache.
		deadline := time.Now().Add(30 * time.Second)
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+op.MetricsAddr+"/metrics", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if code, body, err = httpStatus(httpc, req); err != nil {
				t.Fatal(err)
			}
			if code == tc.want || time.Now().After(deadline) {
				break
			}
			time.Sleep(poll)
		}
		if code != tc.want {
			t.Errorf("%s: GET /metrics = %d (%.200s), want %d", tc.name, code, body, tc.want)
		}
		if tc.want == http.StatusOK && !strings.Contains(body, "# HELP") {
			t.Errorf("%s: no metrics in the body: %.200s", tc.name, body)
		}
		t.Logf("GET /metrics, %s: %d %.80q", tc.name, code, strings.SplitN(body, "\n", 2)[0])
	}
	s.checkMetricsAuthUnderJunkTokens(t, op, httpc, prometheus)
}

// checkMetricsAuthUnderJunkTokens: a client sending thousands of distinct
// junk tokens (each twice, concurrently) costs well under one TokenReview
// per request (reviews of one token are shared and their answer cached), and a
// valid scraper keeps getting 200 meanwhile.
func (s *suite) checkMetricsAuthUnderJunkTokens(t *testing.T, op *util.FullOperator, httpc *http.Client, valid string) {
	ctx := t.Context()
	const tokens, workers = 2000, 16
	get := func(token string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+op.MetricsAddr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		code, _, err := httpStatus(httpc, req)
		if err != nil {
			t.Errorf("GET /metrics: %v", err)
		}
		return code
	}
	before := s.tokenReviews(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	next := make(chan string)
	for range workers {
		wg.Go(func() {
			for tok := range next {
				c := get(tok)
				mu.Lock()
				codes[c]++
				mu.Unlock()
			}
		})
	}
	scraper := map[int]int{}
	for i := range tokens {
		junk := fmt.Sprintf("junk-%d-%s", i, strings.Repeat("x", 32))
		next <- junk
		next <- junk
		if i%200 == 0 {
			scraper[get(valid)]++
		}
	}
	close(next)
	wg.Wait()
	reviews := s.tokenReviews(t) - before
	t.Logf("%d junk tokens sent twice: answers %v, %.0f TokenReviews; the valid scraper's answers meanwhile %v", tokens, codes, reviews, scraper)
	if codes[http.StatusUnauthorized] != 2*tokens {
		t.Errorf("junk tokens answered %v, want %d x 401", codes, 2*tokens)
	}
	// Measured: 2,384 reviews for the 4,000 requests (a review per request
	// would be 4,000; concurrent copies of a token are not always joined).
	if reviews > 1.5*tokens+float64(len(scraper)) {
		t.Errorf("%.0f TokenReviews for %d distinct junk tokens sent twice: their answers are not shared", reviews, tokens)
	}
	if len(scraper) != 1 || scraper[http.StatusOK] == 0 {
		t.Errorf("the valid scraper got %v during the junk, want only 200", scraper)
	}
}

// tokenReviews is how many TokenReviews the API server has answered.
func (s *suite) tokenReviews(t *testing.T) float64 {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["resource"] == "tokenreviews" && labels["verb"] == "POST" {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// delegated are grants the operator holds without calling them itself,
// with the reason, checked against the cluster by the workload.
type delegated struct {
	call   apiCall
	reason string
}

// checkLeastPrivilege runs a workload that exercises every feature with the
// operator impersonating the chart's ServiceAccount, normalises every API
// request it made to (group, resource, verb), and compares the set with
// config/rbac/role.yaml in both directions.
func (s *suite) checkLeastPrivilege(t *testing.T, op *util.FullOperator) {
	w := &workload{s: s, t: t, ctx: t.Context()}
	w.run(op)
	// The native Workload/PodGroup API is a separate operator setting:
	// restart with it (which also hands the Lease over) for one job.
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	w.runNativeGang()

	// With impersonation, a missing permission is an API error the
	// operator logs ("... is forbidden: User ... cannot ...").
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, "is forbidden") {
			t.Errorf("the chart's RBAC refused an operator call: %.400s", line)
		}
	}
	observed := s.recorder.snapshot()
	// What the chart installed for this mode grants the ServiceAccount,
	// role by role: the rules from config/rbac/role.yaml, without the
	// certificate ones unless the operator manages its certificates, and
	// the secure metrics filter's reviews.
	byRole := s.chartGrants(t)
	granted := map[apiCall]bool{}
	for _, g := range byRole {
		maps.Copy(granted, g)
	}
	if len(granted) == 0 {
		t.Fatal("the chart grants its ServiceAccount nothing")
	}
	if s.mode == configv1alpha1.CertManagementSelfSigned {
		// The chart's roles are generated from config/rbac/role.yaml; in
		// this mode they grant all of it.
		for c := range grants(roleYAML(t, filepath.Join(util.RepoRoot(), "config", "rbac", "role.yaml"))) {
			if !allowedBy(granted, c) {
				t.Errorf("config/rbac/role.yaml grants %s, the chart does not", c)
			}
		}
	}
	certCalls := 0
	for c := range observed {
		if c.resource == "secrets" || strings.HasSuffix(c.resource, "webhookconfigurations") {
			certCalls++
		}
	}
	if s.mode != configv1alpha1.CertManagementSelfSigned && certCalls > 0 {
		t.Errorf("with certManagement %s the operator called Secrets or webhook configurations %d times", s.mode, certCalls)
	}

	var lines, notAllowed []string
	for _, c := range sortedCalls(observed) {
		where := "NOT GRANTED"
		for _, name := range slices.Sorted(maps.Keys(byRole)) {
			if allowedBy(byRole[name], c) {
				where = name
				break
			}
		}
		if where == "NOT GRANTED" {
			notAllowed = append(notAllowed, c.String())
		}
		lines = append(lines, fmt.Sprintf("%-62s x%-5d %s", c, observed[c], where))
	}
	t.Logf("observed API calls (group resource verb, count, granted by):\n%s", strings.Join(lines, "\n"))
	s.recorder.mu.Lock()
	var nr []string
	for k, v := range s.recorder.nonResource {
		nr = append(nr, fmt.Sprintf("%s x%d", k, v))
	}
	s.recorder.mu.Unlock()
	slices.Sort(nr)
	t.Logf("non-resource requests (discovery, allowed to every authenticated user): %s", strings.Join(nr, ", "))
	if len(notAllowed) > 0 {
		t.Errorf("calls not granted by the chart (certManagement %s):\n  %s", s.mode, strings.Join(notAllowed, "\n  "))
	}

	used := map[apiCall]string{}
	for c := range observed {
		used[c] = "called"
	}
	for _, d := range w.delegated {
		if _, ok := used[d.call]; !ok {
			used[d.call] = d.reason
		}
	}
	var unused, justified []string
	for _, g := range sortedCalls(granted) {
		switch why, ok := used[g]; {
		case !ok:
			unused = append(unused, g.String())
		case why != "called":
			justified = append(justified, fmt.Sprintf("%s: %s", g, why))
		}
	}
	t.Logf("granted and not called, but needed:\n  %s", strings.Join(justified, "\n  "))
	delegatedCalls := map[apiCall]bool{}
	for _, d := range w.delegated {
		delegatedCalls[d.call] = true
	}
	s.checkNamesAndScope(t, delegatedCalls)
	if len(unused) > 0 {
		t.Errorf("the chart (certManagement %s) grants what the operator never used (remove the kubebuilder:rbac markers' verbs, or the chart's rule):\n  %s", s.mode, strings.Join(unused, "\n  "))
	}
}

// chartGrants expands the rules of every (Cluster)Role the rendered chart
// binds to the operator's ServiceAccount, by role.
func (s *suite) chartGrants(t *testing.T) map[string]map[apiCall]bool {
	t.Helper()
	out := map[string]map[apiCall]bool{}
	for _, b := range s.chartBindings(t) {
		if out[b.role] == nil {
			out[b.role] = map[apiCall]bool{}
		}
		maps.Copy(out[b.role], grants(b.rules))
	}
	return out
}

// boundRules are the rules of one (Cluster)Role the chart binds to the
// operator's ServiceAccount, and whether the binding is cluster-wide (a
// ClusterRoleBinding) or in the release namespace only.
type boundRules struct {
	role        string
	clusterWide bool
	rules       []rbacv1.PolicyRule
}

// chartBindings are the chart's grants to the operator's ServiceAccount,
// binding by binding.
func (s *suite) chartBindings(t *testing.T) []boundRules {
	t.Helper()
	var out []boundRules
	for _, o := range s.chart {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding // same fields as a ClusterRoleBinding
		if err := runtimeConvert(o, &b); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(b.Subjects, func(sub rbacv1.Subject) bool {
			return sub.Kind == rbacv1.ServiceAccountKind && sub.Name == serviceAccount && sub.Namespace == releaseNamespace
		}) {
			continue
		}
		role := s.chartObject(b.RoleRef.Kind, b.RoleRef.Name)
		if role == nil {
			t.Fatalf("%s %s binds %s %s, which the chart does not render", o.GetKind(), o.GetName(), b.RoleRef.Kind, b.RoleRef.Name)
		}
		var r rbacv1.ClusterRole
		if err := runtimeConvert(role, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, boundRules{role: "chart " + b.RoleRef.Kind + " " + b.RoleRef.Name,
			clusterWide: o.GetKind() == "ClusterRoleBinding", rules: r.Rules})
	}
	return out
}

// checkNamesAndScope checks the chart's grants against where the operator's
// calls went, beyond their verbs: a rule limited to resourceNames grants
// nothing the operator did not call by each of those names, and a
// cluster-wide grant is used outside the release namespace (else it
// belongs in a Role there). justified are the grants the run could not
// exercise (the workload's delegated ones), left to the verb check.
func (s *suite) checkNamesAndScope(t *testing.T, justified map[apiCall]bool) {
	t.Helper()
	var unnamed, wide []string
	for _, b := range s.chartBindings(t) {
		for _, rule := range b.rules {
			for c := range grants([]rbacv1.PolicyRule{rule}) {
				if justified[c] {
					continue
				}
				scopes := s.recorder.scopes(c)
				for _, n := range rule.ResourceNames {
					if !slices.ContainsFunc(scopes, func(sc callScope) bool { return sc.name == n }) {
						unnamed = append(unnamed, fmt.Sprintf("%s: %s named %q (called by names %v)", b.role, c, n, scopes))
					}
				}
				if b.clusterWide && len(scopes) > 0 && !slices.ContainsFunc(scopes, func(sc callScope) bool { return sc.namespace != releaseNamespace }) {
					wide = append(wide, fmt.Sprintf("%s: %s (called only in %s)", b.role, c, releaseNamespace))
				}
			}
		}
	}
	slices.Sort(unnamed)
	slices.Sort(wide)
	if len(unnamed) > 0 {
		t.Errorf("the chart (certManagement %s) grants by name what the operator never called by that name:\n  %s", s.mode, strings.Join(unnamed, "\n  "))
	}
	if len(wide) > 0 {
		t.Errorf("the chart (certManagement %s) grants cluster-wide what the operator uses only in its own namespace (a Role there would do):\n  %s", s.mode, strings.Join(wide, "\n  "))
	}
}

// jobCondition reports whether a job (any kind, via unstructured) has a
// True condition of the type.
func (s *suite) jobCondition(ctx context.Context, kind, ns, name, condType string) bool {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("kubeflow.org/v1")
	u.SetKind(kind)
	if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == condType && m["status"] == "True" {
			return true
		}
	}
	return false
}

// checkMetricsAuthOutage: while the API server is down, a scrape with a
// valid token the operator has not reviewed yet is 503 with Retry-After
// (the review could not be made), not 401 (a bad token); once it is back,
// the same token is 200.
func (s *suite) checkMetricsAuthOutage(t *testing.T, op *util.FullOperator) {
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	// A scraper of its own, so the check runs alone too; each new token is
	// in no cache of the operator's. The first waits for the operator's
	// metrics, the second meets the outage unreviewed.
	const ns, sa = "monitoring-outage", "scraper"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "outage-scraper-training-operator-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "training-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	newToken := func() string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	ready, fresh := newToken(), newToken()
	var certSecret corev1.Secret
	if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: s.config.Webhook.SecretName}, &certSecret); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certSecret.Data["ca.crt"])
	serverName := fmt.Sprintf("%s.%s.svc", s.config.Webhook.ServiceName, releaseNamespace)
	// The review's retries take a few seconds before it gives up.
	httpc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}}
	scrape := func(token string) (int, http.Header, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+op.MetricsAddr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, nil, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.StatusCode, resp.Header, string(body), nil
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(context.Context) (bool, error) {
		code, _, _, err := scrape(ready)
		return err == nil && code == http.StatusOK, nil
	}); err != nil {
		t.Fatalf("the operator's metrics never answered 200: %v", err)
	}

	if err := s.env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	code, header, body, err := scrape(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /metrics with the API server down: %d Retry-After %q %.80q", code, header.Get("Retry-After"), body)
	if code != http.StatusServiceUnavailable || header.Get("Retry-After") == "" {
		t.Errorf("GET /metrics with the API server down = %d (Retry-After %q, %.200s), want 503 with Retry-After", code, header.Get("Retry-After"), body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for code != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(poll)
		code, _, body, _ = scrape(fresh)
	}
	if code != http.StatusOK {
		t.Errorf("GET /metrics once the API server is back = %d (%.200s), want 200", code, body)
	}
}

// TestSecuritySubsetOfKinds installs the chart with enabledSchemes
// XGBoostJob, whose RBAC holds none of the other kinds' rules (no
// pods/exec, no HPA, no other job kind), and runs an XGBoostJob to success
// and one to failure: every call the operator makes is granted, and it
// calls nothing of the disabled kinds; its named and cluster-wide grants
// are used by those names and outside its namespace.
func TestSecuritySubsetOfKinds(t *testing.T) {
	s := startWith(t, configv1alpha1.CertManagementSelfSigned, "--set", "enabledSchemes={XGBoostJob}")
	if got := s.config.EnabledSchemes; len(got) != 1 || !strings.EqualFold(got[0], "XGBoostJob") {
		t.Fatalf("the chart's configuration enables %v", got)
	}
	byRole := s.chartGrants(t)
	granted := map[apiCall]bool{}
	for _, g := range byRole {
		maps.Copy(granted, g)
	}
	for _, c := range []apiCall{{"", "pods/exec", "create"}, {"autoscaling", "horizontalpodautoscalers", "create"},
		{"kubeflow.org", "mpijobs", "list"}, {"kubeflow.org", "pytorchjobs", "list"}, {"rbac.authorization.k8s.io", "roles", "create"}} {
		if allowedBy(granted, c) {
			t.Errorf("with only XGBoostJob enabled the chart grants %s", c)
		}
	}
	s.startOperator(t, nil)
	s.waitWebhooksReachable(t, testjobs.MakeXGBoostJob("probe", "default").Master(1).Obj())

	w := &workload{s: s, t: t, ctx: t.Context()}
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workloadNS}})
	w.create(ttl(withExit(testjobs.MakeXGBoostJob("xgb-ok", workloadNS).Master(1).Workers(1).Obj(), "0")))
	w.create(withExit(testjobs.MakeXGBoostJob("xgb-fail", workloadNS).Master(1).Workers(1).
		RestartPolicy(kubeflowv1.RestartPolicyNever).Obj(), "1"))
	w.gone(&kubeflowv1.XGBoostJob{ObjectMeta: metav1.ObjectMeta{Namespace: workloadNS, Name: "xgb-ok"}})
	w.condition(kubeflowv1.XGBoostJobKind, "xgb-fail", string(kubeflowv1.JobFailed))

	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, "is forbidden") {
			t.Errorf("the chart's RBAC refused an operator call: %.400s", line)
		}
	}
	var lines []string
	for _, c := range sortedCalls(s.recorder.snapshot()) {
		lines = append(lines, c.String())
		if !allowedBy(granted, c) {
			t.Errorf("call not granted by the chart with only XGBoostJob enabled: %s", c)
		}
		if c.group == "kubeflow.org" && !strings.HasPrefix(c.resource, "xgboostjobs") {
			t.Errorf("with only XGBoostJob enabled the operator called %s", c)
		}
	}
	t.Logf("observed API calls:\n  %s", strings.Join(lines, "\n  "))
	s.checkNamesAndScope(t, nil)

	// Exactly what it uses: the install differs from the every-kind one
	// (whose every grant TestSecurity shows used) by the other kinds' own
	// rules alone (TestRBACFollowsEnabledSchemes), and each grant of
	// XGBoostJob's own rules is called here.
	observed := s.recorder.snapshot()
	var rules chartsync.RuleGroups
	data, err := os.ReadFile(filepath.Join(util.RepoRoot(), chartsync.ChartRBACRules))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	own := rules.Kinds[kubeflowv1.XGBoostJobKind]
	delegated := map[apiCall]string{
		// Children carry blockOwnerDeletion (OwnerReferencesPermissionEnforcement checks it).
		{"kubeflow.org", "xgboostjobs/finalizers", "update"}: "blockOwnerDeletion",
	}
	ownGrants := grants(slices.Concat(own.JobNamespaces, own.Cluster))
	if len(ownGrants) == 0 {
		t.Fatal("XGBoostJob has no rules of its own in the chart")
	}
	for _, c := range sortedCalls(ownGrants) {
		if observed[c] == 0 && delegated[c] == "" {
			t.Errorf("XGBoostJob's own rules grant %s, which the operator never called", c)
		}
	}
}
