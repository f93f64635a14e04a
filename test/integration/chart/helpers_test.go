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

// Package chart_test tests the packaging: the Helm chart
// (charts/training-operator), the kustomize configuration (config/default,
// config/overlays) and the RBAC derived from config/rbac/role.yaml. Rendered
// manifests are parsed into objects and asserted (no golden files); the
// install tests run helm and kubectl against a real local API server
// (harness/cluster) and run the operator in-process as the installed
// ServiceAccount to prove the RBAC is sufficient.
package chart_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/hack/chart/chartsync"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

var (
	repoRoot = util.RepoRoot()
	chartDir = filepath.Join(repoRoot, chartsync.ChartDir)
)

// binDir is where hack/controlplane.sh puts helm and the control plane.
var binDir = sync.OnceValues(func() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "helm")); err == nil {
			return d, nil
		}
	}
	out, err := exec.Command(filepath.Join(repoRoot, "hack", "controlplane.sh"), "--print-dir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/controlplane.sh --print-dir: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// helmPath returns the helm binary built by `make controlplane`.
func helmPath(t *testing.T) string {
	t.Helper()
	dir, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "helm")
	if _, err := os.Stat(filepath.Join(dir, ".helm.ok")); err != nil {
		t.Fatalf("helm is not built in %s (run make controlplane): %v", dir, err)
	}
	return p
}

// kubectlPath returns kubectl from PATH; without one the test fails (make
// test puts the control plane's kubectl first in PATH): a skipped check
// would leave make test green without it.
func kubectlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl not found in PATH; the kustomize checks need it (make test puts the control plane's, built by hack/controlplane.sh, first)")
	}
	return p
}

// helmHome holds helm's cache, config and data, away from $HOME (TestMain).
var helmHome string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chart-test-helm-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	helmHome = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func helmEnv() []string {
	return append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(helmHome, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(helmHome, "config"),
		"HELM_DATA_HOME="+filepath.Join(helmHome, "data"),
	)
}

// run runs a command and returns its stdout; the error includes stderr.
func run(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return run(helmEnv(), helmPath(t), args...)
}

// writeValues writes values as a YAML file for helm -f.
func writeValues(t *testing.T, values map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// templateArgs are the helm template arguments for a release in ns.
func templateArgs(t *testing.T, release, ns string, values map[string]any) []string {
	args := []string{"template", release, chartDir, "--namespace", ns}
	if values != nil {
		args = append(args, "-f", writeValues(t, values))
	}
	return args
}

// manifests is a rendered set of objects.
type manifests []*unstructured.Unstructured

// parseManifests splits a multi-document YAML stream into objects.
func parseManifests(data string) (manifests, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(data), 4096)
	var out manifests
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// render runs helm template and parses the result.
func render(t *testing.T, ns string, values map[string]any, extra ...string) manifests {
	t.Helper()
	out, err := helm(t, append(templateArgs(t, "training-operator", ns, values), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := parseManifests(out)
	if err != nil {
		t.Fatalf("parsing helm template output: %v", err)
	}
	return objs
}

// find returns the object of the kind, namespace and name, or nil.
func (m manifests) find(kind, ns, name string) *unstructured.Unstructured {
	for _, o := range m {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

func (m manifests) ofKind(kind string) manifests {
	var out manifests
	for _, o := range m {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// keys lists "Kind ns/name" of every object, sorted.
// withoutHooks leaves out Helm hooks (objects that exist only while a hook runs).
func (m manifests) withoutHooks() manifests {
	var out manifests
	for _, o := range m {
		if o.GetAnnotations()["helm.sh/hook"] == "" {
			out = append(out, o)
		}
	}
	return out
}

func (m manifests) keys() []string {
	var out []string
	for _, o := range m {
		out = append(out, fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName()))
	}
	sort.Strings(out)
	return out
}

// typed converts an object strictly: unknown fields are errors.
func typed[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	if u == nil {
		t.Fatalf("object of type %T not rendered", new(T))
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out
}

// mustFind is find that fails the test if the object is missing.
func (m manifests) mustFind(t *testing.T, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	o := m.find(kind, ns, name)
	if o == nil {
		t.Fatalf("%s %s/%s not rendered; have:\n  %s", kind, ns, name, strings.Join(m.keys(), "\n  "))
	}
	return o
}

func deployment(t *testing.T, m manifests, ns string) *appsv1.Deployment {
	t.Helper()
	return typed[appsv1.Deployment](t, m.mustFind(t, "Deployment", ns, "training-operator"))
}

func configMap(t *testing.T, m manifests, ns, name string) *corev1.ConfigMap {
	t.Helper()
	return typed[corev1.ConfigMap](t, m.mustFind(t, "ConfigMap", ns, name))
}

// findConfigMapByPrefix finds a kustomize-generated ConfigMap (name hash suffix).
func (m manifests) findConfigMapByPrefix(t *testing.T, prefix string) *corev1.ConfigMap {
	t.Helper()
	for _, o := range m.ofKind("ConfigMap") {
		if strings.HasPrefix(o.GetName(), prefix) {
			return typed[corev1.ConfigMap](t, o)
		}
	}
	t.Fatalf("no ConfigMap %s*", prefix)
	return nil
}

func webhookConfigurations(t *testing.T, m manifests) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	return typed[admissionregistrationv1.MutatingWebhookConfiguration](t, m.mustFind(t, "MutatingWebhookConfiguration", "", "defaulter.training-operator.kubeflow.org")),
		typed[admissionregistrationv1.ValidatingWebhookConfiguration](t, m.mustFind(t, "ValidatingWebhookConfiguration", "", "validator.training-operator.kubeflow.org"))
}

// operatorConfiguration loads a rendered config.yaml and the container
// arguments exactly as the operator binary does: the real flag set (v1
// flags and zap flags), strict decoding, defaults, flag overrides,
// validation.
func operatorConfiguration(t *testing.T, configYAML string, args []string) *configv1alpha1.Configuration {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var zo zap.Options
	zo.BindFlags(fs)
	var f config.Flags
	f.Bind(fs)
	fs.String("kubeconfig", "", "registered by controller-runtime")
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the operator rejects its arguments %q: %v", args, err)
	}
	if fs.NArg() > 0 {
		t.Fatalf("stray arguments %q", fs.Args())
	}
	const want = "/etc/training-operator/config.yaml"
	if f.ConfigFile != want {
		t.Fatalf("--config=%q, want %q", f.ConfigFile, want)
	}
	cfg, err := config.Build(path, &f, config.ExplicitFlags(fs))
	if err != nil {
		t.Fatalf("the operator rejects its configuration: %v\n%s", err, configYAML)
	}
	return cfg
}

// ruleKey is one permission: apiGroup, resource and verb (or a
// non-resource URL and verb), optionally restricted to resourceNames.
type ruleKey struct {
	Group, Resource, Verb, URL, Names string
}

// expand flattens rules into permissions.
func expand(rules []rbacv1.PolicyRule) map[ruleKey]bool {
	out := map[ruleKey]bool{}
	for _, r := range rules {
		names := strings.Join(r.ResourceNames, ",")
		for _, v := range r.Verbs {
			for _, u := range r.NonResourceURLs {
				out[ruleKey{URL: u, Verb: v}] = true
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					out[ruleKey{Group: g, Resource: res, Verb: v, Names: names}] = true
				}
			}
		}
	}
	return out
}

func sortedKeys(m map[ruleKey]bool) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprintf("%+v", k))
	}
	slices.Sort(out)
	return out
}

// wildcards reports rules that use "*".
func wildcards(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.Verbs, "*") ||
			slices.Contains(r.NonResourceURLs, "*") || slices.ContainsFunc(r.Resources, func(s string) bool { return strings.HasSuffix(s, "/*") }) {
			out = append(out, fmt.Sprintf("%+v", r))
		}
	}
	return out
}

// generatedRole is config/rbac/role.yaml.
func generatedRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	r, err := chartsync.ReadRole(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// grants collects the rules a ServiceAccount gets from rendered RBAC
// objects, split into cluster-wide and per-namespace grants.
type grants struct {
	cluster     []rbacv1.PolicyRule
	namespaces  map[string][]rbacv1.PolicyRule
	clusterRole []string // names of bound ClusterRoles
}

func saGrants(t *testing.T, m manifests, saNS, saName string) grants {
	t.Helper()
	g := grants{namespaces: map[string][]rbacv1.PolicyRule{}}
	isSubject := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == saName && s.Namespace == saNS
		})
	}
	clusterRoles := map[string]*rbacv1.ClusterRole{}
	for _, o := range m.ofKind("ClusterRole") {
		clusterRoles[o.GetName()] = typed[rbacv1.ClusterRole](t, o)
	}
	for _, o := range m.ofKind("ClusterRoleBinding") {
		b := typed[rbacv1.ClusterRoleBinding](t, o)
		if !isSubject(b.Subjects) {
			continue
		}
		cr := clusterRoles[b.RoleRef.Name]
		if cr == nil {
			t.Fatalf("ClusterRoleBinding %s refers to ClusterRole %s, which is not rendered", b.Name, b.RoleRef.Name)
		}
		g.cluster = append(g.cluster, cr.Rules...)
		g.clusterRole = append(g.clusterRole, cr.Name)
	}
	for _, o := range m.ofKind("RoleBinding") {
		b := typed[rbacv1.RoleBinding](t, o)
		if !isSubject(b.Subjects) {
			continue
		}
		if b.RoleRef.Kind != "Role" {
			t.Fatalf("RoleBinding %s/%s binds a %s", b.Namespace, b.Name, b.RoleRef.Kind)
		}
		r := typed[rbacv1.Role](t, m.mustFind(t, "Role", b.Namespace, b.RoleRef.Name))
		g.namespaces[b.Namespace] = append(g.namespaces[b.Namespace], r.Rules...)
	}
	return g
}

// all returns every rule granted anywhere.
func (g grants) all() []rbacv1.PolicyRule {
	out := slices.Clone(g.cluster)
	for _, ns := range slices.Sorted(maps.Keys(g.namespaces)) {
		out = append(out, g.namespaces[ns]...)
	}
	return out
}

// readYAML reads a single YAML document into obj.
func readYAML(t *testing.T, path string, obj any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
