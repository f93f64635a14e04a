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

package chart_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/seed-d8a409e9/training-operator/hack/chart/chartsync"
)

// TestChartSyncUpToDate fails when config/ changed (make manifests) without
// make chart-sync: the chart CRDs, RBAC rules, webhooks and the kustomize
// RBAC must be what hack/chart derives from config/ now.
func TestChartSyncUpToDate(t *testing.T) {
	stale, err := chartsync.Stale(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("stale files, run `make chart-sync`:\n  %s", strings.Join(stale, "\n  "))
	}
}

// TestChartCRDsEqualConfig: the chart installs the CRDs of
// config/crd/bases: the same schemas, only without the descriptions of the
// embedded Kubernetes types (see chartsync.SlimCRD), and small enough for
// Helm's release Secret.
func TestChartCRDsEqualConfig(t *testing.T) {
	src, err := filepath.Glob(filepath.Join(repoRoot, chartsync.CRDSourceDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dst, err := filepath.Glob(filepath.Join(repoRoot, chartsync.ChartCRDDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	base := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	if diff := cmp.Diff(base(src), base(dst)); diff != "" {
		t.Fatalf("chart CRD files differ from %s (-config +chart):\n%s", chartsync.CRDSourceDir, diff)
	}
	if len(src) != 6 {
		t.Errorf("%d CRDs, want the six kinds", len(src))
	}
	total := 0
	for _, f := range src {
		var full, chart map[string]any
		readYAML(t, f, &full)
		readYAML(t, filepath.Join(repoRoot, chartsync.ChartCRDDir, filepath.Base(f)), &chart)
		// Job-level documentation is kept (kubectl explain pytorchjob.spec.runPolicy).
		spec := dig(chart, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "runPolicy")
		if d, _ := spec.(map[string]any)["description"].(string); d == "" {
			t.Errorf("%s: spec.runPolicy lost its description", filepath.Base(f))
		}
		chartsync.StripDescriptions(full)
		chartsync.StripDescriptions(chart)
		if diff := cmp.Diff(full, chart); diff != "" {
			t.Errorf("%s: schema differs from config/crd/bases (-config +chart):\n%s", filepath.Base(f), diff)
		}
		st, err := os.Stat(filepath.Join(repoRoot, chartsync.ChartCRDDir, filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		total += int(st.Size())
	}
	// Helm keeps the chart (gzip, base64) in a Secret of at most 1 MiB;
	// the full CRDs (about 4 MB) do not fit.
	if total > 2<<20 {
		t.Errorf("chart CRDs total %d bytes; the Helm release Secret would exceed 1 MiB", total)
	}
}

// dig walks decoded YAML by map keys and list indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[p]
		case int:
			l, _ := v.([]any)
			if p >= len(l) {
				return nil
			}
			v = l[p]
		}
	}
	return v
}

// TestRuleGroupsPartitionTheRole: every permission of config/rbac/role.yaml
// is in exactly one group, nothing is added.
func TestRuleGroupsPartitionTheRole(t *testing.T) {
	role := generatedRole(t)
	g := chartsync.GroupRules(role.Rules)
	if diff := cmp.Diff(sortedKeys(expand(role.Rules)), sortedKeys(expand(g.All()))); diff != "" {
		t.Errorf("groups differ from the role (-role +groups):\n%s", diff)
	}
	seen := map[ruleKey]string{}
	for name, rules := range map[string][]rbacv1.PolicyRule{
		"jobNamespaces": g.JobNamespaces, "cluster": g.Cluster, "webhookConfigurations": g.WebhookConfigurations,
		"certificateSecret": g.CertificateSecret, "operatorNamespace": g.OperatorNamespace,
	} {
		for k := range expand(rules) {
			if other, dup := seen[k]; dup {
				t.Errorf("%+v in both %s and %s", k, other, name)
			}
			seen[k] = name
		}
	}
	if w := wildcards(role.Rules); len(w) > 0 {
		t.Errorf("config/rbac/role.yaml has wildcard rules: %v", w)
	}

	// A merged rule (controller-gen merges resources with equal verbs) is split.
	mixed := chartsync.GroupRules([]rbacv1.PolicyRule{{
		APIGroups: []string{"", "coordination.k8s.io"},
		Resources: []string{"pods", "secrets", "leases", "namespaces"},
		Verbs:     []string{"get"},
	}})
	got := map[string][]string{
		"jobNamespaces": resources(mixed.JobNamespaces), "certificateSecret": resources(mixed.CertificateSecret),
		"operatorNamespace": resources(mixed.OperatorNamespace), "cluster": resources(mixed.Cluster),
	}
	want := map[string][]string{
		"jobNamespaces": {"pods"}, "certificateSecret": {"secrets"}, "operatorNamespace": {"leases"}, "cluster": {"namespaces"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("split of a merged rule (-want +got):\n%s", diff)
	}
}

func resources(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, r.Resources...)
	}
	return out
}

// TestClusterRoleLeastPrivilege: the default install's ClusterRole has no
// wildcards, no verb the code does not need (config/rbac/role.yaml, from
// the +kubebuilder:rbac markers) and none of the namespace-local rules.
func TestClusterRoleLeastPrivilege(t *testing.T) {
	m := render(t, "kubeflow", nil)
	cr := typed[rbacv1.ClusterRole](t, m.mustFind(t, "ClusterRole", "", "training-operator"))
	if w := wildcards(cr.Rules); len(w) > 0 {
		t.Errorf("wildcards: %v", w)
	}
	needed := expand(generatedRole(t).Rules)
	for k := range expand(cr.Rules) {
		if !needed[k] {
			t.Errorf("ClusterRole grants %+v, which the code does not ask for", k)
		}
		if k.Resource == "secrets" || k.Resource == "leases" {
			t.Errorf("ClusterRole grants %+v cluster-wide; only the operator namespace needs it", k)
		}
	}
	// Everything else the code needs is in the ClusterRole.
	local := expand(append(ruleGroups(t).CertificateSecret, ruleGroups(t).OperatorNamespace...))
	for k := range needed {
		if !local[k] && !expand(cr.Rules)[k] {
			t.Errorf("ClusterRole lacks %+v", k)
		}
	}
	// The ClusterRole is exactly what the kustomize install uses.
	var kust rbacv1.ClusterRole
	readYAML(t, filepath.Join(repoRoot, chartsync.KustomizeClusterRB), &kust)
	if diff := cmp.Diff(kust.Rules, cr.Rules); diff != "" {
		t.Errorf("chart and kustomize ClusterRoles differ (-kustomize +chart):\n%s", diff)
	}
	// Pods' logs, exec into anything but what the MPI launcher Role needs,
	// and cluster RBAC are never granted; of nodes only get (a restart
	// blocked by a pod stuck terminating reads that pod's node before it
	// force-deletes it), never a list or watch of every node.
	for k := range needed {
		if slices.Contains([]string{"clusterroles", "clusterrolebindings", "pods/log", "customresourcedefinitions"}, k.Resource) ||
			(k.Resource == "nodes" && k.Verb != "get") {
			t.Errorf("unexpected permission %+v", k)
		}
	}
}
