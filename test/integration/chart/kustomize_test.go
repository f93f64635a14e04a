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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/hack/chart/chartsync"
)

// kustomize renders a kustomization with the system kubectl.
func kustomize(t *testing.T, dir string) manifests {
	t.Helper()
	out, err := run(os.Environ(), kubectlPath(t), "kustomize", filepath.Join(repoRoot, dir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifests(out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// kustomizeConfiguration returns the rendered Configuration as the binary loads it.
func kustomizeConfiguration(t *testing.T, m manifests) (*configv1alpha1.Configuration, *corev1.ConfigMap) {
	t.Helper()
	d := deployment(t, m, "kubeflow")
	cm := m.findConfigMapByPrefix(t, "training-operator-config-")
	if v := volume(t, d.Spec.Template.Spec, "config"); v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("config volume %+v, want ConfigMap %s", v.VolumeSource, cm.Name)
	}
	return operatorConfiguration(t, cm.Data["config.yaml"], d.Spec.Template.Spec.Containers[0].Args), cm
}

func TestKustomizeDefault(t *testing.T) {
	m := kustomize(t, "config/default")
	ns := typed[corev1.Namespace](t, m.mustFind(t, "Namespace", "", "kubeflow"))
	_ = ns
	for _, o := range m {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		default:
			if o.GetNamespace() != "kubeflow" {
				t.Errorf("%s %s in namespace %q", o.GetKind(), o.GetName(), o.GetNamespace())
			}
		}
	}
	// CRDs: config/crd/bases.
	var crds []string
	for _, o := range m.ofKind("CustomResourceDefinition") {
		crds = append(crds, o.GetName())
	}
	slices.Sort(crds)
	if diff := cmp.Diff([]string{"jaxjobs.kubeflow.org", "mpijobs.kubeflow.org", "paddlejobs.kubeflow.org", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org", "xgboostjobs.kubeflow.org"}, crds); diff != "" {
		t.Errorf("CRDs (-want +got):\n%s", diff)
	}

	cfg, _ := kustomizeConfiguration(t, m)
	if cfg.Webhook.CertManagement != configv1alpha1.CertManagementSelfSigned || cfg.Namespace != "" {
		t.Errorf("configuration %+v", cfg)
	}
	// The same Configuration as the chart's defaults.
	chart := render(t, "kubeflow", nil)
	chartCM := configMap(t, chart, "kubeflow", "training-operator-config")
	chartCfg := operatorConfiguration(t, chartCM.Data["config.yaml"], deployment(t, chart, "kubeflow").Spec.Template.Spec.Containers[0].Args)
	if diff := cmp.Diff(chartCfg, cfg); diff != "" {
		t.Errorf("kustomize and chart Configurations differ (-chart +kustomize):\n%s", diff)
	}

	// The same pod as the chart's defaults (but for the image tag and the
	// generated ConfigMap name).
	kd, cd := deployment(t, m, "kubeflow"), deployment(t, chart, "kubeflow")
	if kd.Spec.Selector.MatchLabels["control-plane"] != "kubeflow-training-operator" || len(kd.Spec.Selector.MatchLabels) != 1 {
		t.Errorf("selector %v, want v1's", kd.Spec.Selector.MatchLabels)
	}
	kp, cp := kd.Spec.Template.Spec.DeepCopy(), cd.Spec.Template.Spec.DeepCopy()
	for _, p := range []*corev1.PodSpec{kp, cp} {
		p.Containers[0].Image = ""
		for i := range p.Volumes {
			if p.Volumes[i].ConfigMap != nil {
				p.Volumes[i].ConfigMap.Name = ""
			}
		}
		slices.SortFunc(p.Volumes, func(a, b corev1.Volume) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(p.Containers[0].VolumeMounts, func(a, b corev1.VolumeMount) int { return strings.Compare(a.Name, b.Name) })
	}
	cp.Containers[0].VolumeMounts[0].ReadOnly = false // the chart renders readOnly: false explicitly
	for i := range cp.Containers[0].VolumeMounts {
		if cp.Containers[0].VolumeMounts[i].Name == "config" {
			cp.Containers[0].VolumeMounts[i].ReadOnly = true
		}
	}
	if diff := cmp.Diff(cp, kp); diff != "" {
		t.Errorf("kustomize and chart pods differ (-chart +kustomize):\n%s", diff)
	}
	if kd.Spec.Template.Annotations["sidecar.istio.io/inject"] != "false" {
		t.Errorf("pod annotations %v", kd.Spec.Template.Annotations)
	}
	if !strings.HasPrefix(kd.Spec.Template.Spec.Containers[0].Image, "ghcr.io/seed-d8a409e9/training-operator:") {
		t.Errorf("image %s", kd.Spec.Template.Spec.Containers[0].Image)
	}
	// Service: same as the chart's.
	ks := typed[corev1.Service](t, m.mustFind(t, "Service", "kubeflow", "training-operator"))
	cs := typed[corev1.Service](t, chart.mustFind(t, "Service", "kubeflow", "training-operator"))
	if diff := cmp.Diff(cs.Spec, ks.Spec); diff != "" {
		t.Errorf("Services differ (-chart +kustomize):\n%s", diff)
	}
	// The empty certificate Secret, as in v1.
	m.mustFind(t, "Secret", "kubeflow", "training-operator-webhook-cert")

	// Webhooks: the operator's, at the Service.
	checkWebhooks(t, m, "kubeflow", cfg)

	// RBAC: exactly the generated permissions, least-privilege split.
	g := saGrants(t, m, "kubeflow", "training-operator")
	if diff := cmp.Diff(sortedKeys(expand(generatedRole(t).Rules)), sortedKeys(expand(g.all()))); diff != "" {
		t.Errorf("granted permissions differ from config/rbac/role.yaml (-want +got):\n%s", diff)
	}
	if w := wildcards(g.all()); len(w) > 0 {
		t.Errorf("wildcards: %v", w)
	}
	cg := saGrants(t, chart, "kubeflow", "training-operator")
	if diff := cmp.Diff(cg.namespaces, g.namespaces); diff != "" {
		t.Errorf("Roles differ from the chart's (-chart +kustomize):\n%s", diff)
	}
}

func TestKustomizeOverlays(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		m := kustomize(t, "config/overlays/standalone")
		// v1's standalone overlay: namespace kubeflow created, the empty
		// certificate Secret without a name hash, v1's object names.
		m.mustFind(t, "Namespace", "", "kubeflow")
		m.mustFind(t, "Secret", "kubeflow", "training-operator-webhook-cert")
		for _, k := range [][3]string{
			{"Deployment", "kubeflow", "training-operator"}, {"Service", "kubeflow", "training-operator"},
			{"ServiceAccount", "kubeflow", "training-operator"}, {"ClusterRole", "", "training-operator"},
			{"ClusterRoleBinding", "", "training-operator"},
			{"ValidatingWebhookConfiguration", "", "validator.training-operator.kubeflow.org"},
		} {
			m.mustFind(t, k[0], k[1], k[2])
		}
		if diff := cmp.Diff(kustomize(t, "config/default").keys(), m.keys()); diff != "" {
			t.Errorf("standalone differs from config/default (-default +standalone):\n%s", diff)
		}
	})
	t.Run("kubeflow", func(t *testing.T) {
		m := kustomize(t, "config/overlays/kubeflow")
		chart := render(t, "kubeflow", map[string]any{"rbac": map[string]any{"userRoles": true}})
		for _, name := range []string{"kubeflow-training-admin", "kubeflow-training-edit", "kubeflow-training-view"} {
			k := typed[rbacv1.ClusterRole](t, m.mustFind(t, "ClusterRole", "", name))
			c := typed[rbacv1.ClusterRole](t, chart.mustFind(t, "ClusterRole", "", name))
			if diff := cmp.Diff(k.Rules, c.Rules); diff != "" {
				t.Errorf("%s rules differ (-kustomize +chart):\n%s", name, diff)
			}
			if diff := cmp.Diff(k.AggregationRule, c.AggregationRule); diff != "" {
				t.Errorf("%s aggregation differs (-kustomize +chart):\n%s", name, diff)
			}
			for key, v := range k.Labels {
				if c.Labels[key] != v {
					t.Errorf("%s: chart lacks label %s=%s", name, key, v)
				}
			}
		}
		admin := typed[rbacv1.ClusterRole](t, m.mustFind(t, "ClusterRole", "", "kubeflow-training-admin"))
		if admin.Labels["rbac.authorization.kubeflow.org/aggregate-to-kubeflow-admin"] != "true" {
			t.Errorf("admin labels %v", admin.Labels)
		}
	})
	t.Run("cert-manager", func(t *testing.T) {
		m := kustomize(t, "config/overlays/cert-manager")
		cfg, _ := kustomizeConfiguration(t, m)
		if cfg.Webhook.CertManagement != configv1alpha1.CertManagementCertManager {
			t.Errorf("certManagement %q", cfg.Webhook.CertManagement)
		}
		c := m.mustFind(t, "Certificate", "kubeflow", "training-operator-serving-cert")
		spec := c.Object["spec"].(map[string]any)
		if spec["secretName"] != "training-operator-webhook-cert" || !slices.Contains(spec["dnsNames"].([]any), any("training-operator.kubeflow.svc")) {
			t.Errorf("Certificate spec %v", spec)
		}
		m.mustFind(t, "Issuer", "kubeflow", "training-operator-selfsigned-issuer")
		if m.find("Secret", "kubeflow", "training-operator-webhook-cert") != nil {
			t.Errorf("the Secret cert-manager owns is applied")
		}
		mwc, vwc := webhookConfigurations(t, m)
		for _, a := range []map[string]string{mwc.Annotations, vwc.Annotations} {
			if a["cert-manager.io/inject-ca-from"] != "kubeflow/training-operator-serving-cert" {
				t.Errorf("annotations %v", a)
			}
		}
		d := deployment(t, m, "kubeflow")
		v := volume(t, d.Spec.Template.Spec, "cert")
		if v.Secret == nil || v.Secret.SecretName != "training-operator-webhook-cert" || v.EmptyDir != nil {
			t.Errorf("cert volume %+v", v.VolumeSource)
		}
		if !mount(t, d.Spec.Template.Spec.Containers[0], "cert").ReadOnly {
			t.Errorf("cert Secret mounted read-write")
		}
		// The same cert-manager objects as the chart renders.
		chart := render(t, "kubeflow", map[string]any{"webhook": map[string]any{"certManagement": "cert-manager"}})
		for _, k := range [][2]string{{"Certificate", "training-operator-serving-cert"}, {"Issuer", "training-operator-selfsigned-issuer"}} {
			if diff := cmp.Diff(m.mustFind(t, k[0], "kubeflow", k[1]).Object["spec"], chart.mustFind(t, k[0], "kubeflow", k[1]).Object["spec"]); diff != "" {
				t.Errorf("%s spec differs (-kustomize +chart):\n%s", k[0], diff)
			}
		}
	})
	t.Run("prometheus", func(t *testing.T) {
		m := kustomize(t, "config/prometheus")
		sm := m.mustFind(t, "ServiceMonitor", "kubeflow", "training-operator")
		spec := sm.Object["spec"].(map[string]any)
		sel := spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
		ep := spec["endpoints"].([]any)[0].(map[string]any)
		if sel["control-plane"] != "kubeflow-training-operator" || ep["port"] != "monitoring-port" || ep["path"] != "/metrics" {
			t.Errorf("ServiceMonitor spec %v", spec)
		}
	})
}

// TestKustomizeRBACGenerated: config/default/rbac holds what make chart-sync writes.
// TestKustomizeRBACPerOverlay: with the operator's own certificates
// (standalone, kubeflow) it may update its one Secret and its two webhook
// configurations; with cert-manager's (cert-manager overlay), which owns
// them, it may touch neither. The chart grants the same in each mode.
func TestKustomizeRBACPerOverlay(t *testing.T) {
	sensitive := func(m manifests) (secret, webhooks bool) {
		for _, o := range append(m.ofKind("ClusterRole"), m.ofKind("Role")...) {
			if o.GetName() != chartsync.RoleName {
				continue
			}
			for _, r := range typed[rbacv1.ClusterRole](t, o).Rules {
				secret = secret || slices.Contains(r.Resources, "secrets")
				webhooks = webhooks || slices.Contains(r.Resources, "mutatingwebhookconfigurations") ||
					slices.Contains(r.Resources, "validatingwebhookconfigurations")
			}
		}
		return secret, webhooks
	}
	for _, tc := range []struct {
		overlay, certManagement string
		grants                  bool
	}{
		{"config/overlays/standalone", "self-signed", true},
		{"config/overlays/kubeflow", "self-signed", true},
		{"config/overlays/cert-manager", "cert-manager", false},
	} {
		t.Run(tc.overlay, func(t *testing.T) {
			secret, webhooks := sensitive(kustomize(t, tc.overlay))
			if secret != tc.grants || webhooks != tc.grants {
				t.Errorf("grants on the Secret %v, on webhook configurations %v; want %v", secret, webhooks, tc.grants)
			}
			cs, cw := sensitive(render(t, "kubeflow", map[string]any{"webhook": map[string]any{"certManagement": tc.certManagement}}))
			if cs != secret || cw != webhooks {
				t.Errorf("the chart (certManagement %s) grants Secret %v, webhook configurations %v; kustomize %v, %v", tc.certManagement, cs, cw, secret, webhooks)
			}
		})
	}
}

func TestKustomizeRBACGenerated(t *testing.T) {
	files, err := chartsync.Generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{chartsync.KustomizeClusterRB, chartsync.KustomizeRole, chartsync.CertManagerClusterRolePatch, chartsync.CertManagerRolePatch} {
		got, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(files[p]) {
			t.Errorf("%s is stale; run make chart-sync", p)
		}
	}
	var cr rbacv1.ClusterRole
	readYAML(t, filepath.Join(repoRoot, chartsync.KustomizeClusterRB), &cr)
	if cr.Name != chartsync.RoleName || ptr.Deref(cr.AggregationRule, rbacv1.AggregationRule{}).ClusterRoleSelectors != nil {
		t.Errorf("ClusterRole %s", cr.Name)
	}
}

// TestCAKeyKeptOnRenewal: in both the chart and the kustomize cert-manager
// overlay, the CA Certificate keeps its private key on renewal (see
// TestCARotationCertManager in the security suite for what a new key does
// to admission).
func TestCAKeyKeptOnRenewal(t *testing.T) {
	for name, m := range map[string]manifests{
		"chart":                        render(t, "kubeflow", map[string]any{"webhook": map[string]any{"certManagement": "cert-manager"}}),
		"config/overlays/cert-manager": kustomize(t, "config/overlays/cert-manager"),
	} {
		ca := m.mustFind(t, "Certificate", "kubeflow", "training-operator-ca")
		if policy, _, _ := unstructured.NestedString(ca.Object, "spec", "privateKey", "rotationPolicy"); policy != "Never" {
			t.Errorf("%s: the CA Certificate's privateKey.rotationPolicy is %q, want Never", name, policy)
		}
	}
}

// TestRBACFollowsEnabledSchemes: the chart grants a kind's own rules (its
// adapter package's RBAC markers) only when the kind is enabled, in a
// cluster-wide and in a namespace-scoped install; with every kind (the
// default) it grants every rule of config/rbac/role.yaml.
func TestRBACFollowsEnabledSchemes(t *testing.T) {
	type perm struct{ group, resource string }
	granted := func(m manifests) map[perm]bool {
		out := map[perm]bool{}
		for k := range expand(saGrants(t, m, "kubeflow", "training-operator").all()) {
			out[perm{k.Group, k.Resource}] = true
		}
		return out
	}
	own := map[string][]perm{
		"PyTorchJob": {{"kubeflow.org", "pytorchjobs"}, {"kubeflow.org", "pytorchjobs/status"}, {"autoscaling", "horizontalpodautoscalers"}},
		"TFJob":      {{"kubeflow.org", "tfjobs"}, {"kubeflow.org", "tfjobs/finalizers"}},
		"MPIJob": {{"kubeflow.org", "mpijobs"}, {"", "pods/exec"}, {"", "serviceaccounts"}, {"", "configmaps"},
			{"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "rolebindings"}},
		"XGBoostJob": {{"kubeflow.org", "xgboostjobs"}},
		"PaddleJob":  {{"kubeflow.org", "paddlejobs"}},
		"JAXJob":     {{"kubeflow.org", "jaxjobs"}},
	}
	common := []perm{{"", "pods"}, {"", "services"}, {"", "events"}, {"scheduling.volcano.sh", "podgroups"}, {"scheduling.k8s.io", "priorityclasses"}}
	for _, tc := range []struct {
		name    string
		enabled []any
		watch   string
	}{
		{"PyTorchJob and TFJob", []any{"PyTorchJob", "TFJob"}, ""},
		{"MPIJob in lower case", []any{"mpijob"}, ""},
		{"XGBoostJob namespace-scoped", []any{"XGBoostJob"}, "team-a"},
		{"every kind (default)", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := map[string]any{}
			if tc.enabled != nil {
				values["enabledSchemes"] = tc.enabled
			}
			if tc.watch != "" {
				values["watchNamespace"] = tc.watch
			}
			g := granted(render(t, "kubeflow", values))
			for _, p := range common {
				if !g[p] {
					t.Errorf("%v not granted", p)
				}
			}
			for kind, perms := range own {
				on := tc.enabled == nil || slices.ContainsFunc(tc.enabled, func(e any) bool { return strings.EqualFold(e.(string), kind) })
				for _, p := range perms {
					if g[p] != on {
						t.Errorf("%s enabled %v: %v granted %v", kind, on, p, g[p])
					}
				}
			}
		})
	}
	// Gang backends: each one's PodGroups (and Workloads) only when
	// gangScheduling.podGroupAPIs enables it, every one when it is empty.
	backendOwn := map[string][]perm{
		"volcano":           {{"scheduling.volcano.sh", "podgroups"}},
		"scheduler-plugins": {{"scheduling.x-k8s.io", "podgroups"}},
		"kubernetes":        {{"scheduling.k8s.io", "podgroups"}, {"scheduling.k8s.io", "workloads"}},
	}
	if len(backendOwn) != len(configv1alpha1.PodGroupAPIs()) {
		t.Fatalf("the test knows %d gang backends, the operator has %v", len(backendOwn), configv1alpha1.PodGroupAPIs())
	}
	for _, tc := range []struct {
		name    string
		enabled []any
		watch   string
	}{
		{"volcano", []any{"volcano"}, ""},
		{"scheduler-plugins namespace-scoped", []any{"scheduler-plugins"}, "team-a"},
		{"kubernetes and volcano", []any{"kubernetes", "volcano"}, ""},
		{"every backend (default)", nil, ""},
	} {
		t.Run("gang "+tc.name, func(t *testing.T) {
			values := map[string]any{}
			if tc.enabled != nil {
				values["gangScheduling"] = map[string]any{"podGroupAPIs": tc.enabled}
			}
			if tc.watch != "" {
				values["watchNamespace"] = tc.watch
			}
			g := granted(render(t, "kubeflow", values))
			for _, p := range []perm{{"", "pods"}, {"scheduling.k8s.io", "priorityclasses"}, {"kubeflow.org", "mpijobs"}} {
				if !g[p] {
					t.Errorf("%v not granted", p)
				}
			}
			for api, perms := range backendOwn {
				on := tc.enabled == nil || slices.Contains(tc.enabled, any(api))
				for _, p := range perms {
					if g[p] != on {
						t.Errorf("backend %s enabled %v: %v granted %v", api, on, p, g[p])
					}
				}
			}
		})
	}
	// Every kind: the chart's grants are config/rbac/role.yaml's.
	role, err := chartsync.ReadRole(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	chart := map[ruleKey]bool{}
	for k := range expand(saGrants(t, render(t, "kubeflow", map[string]any{}), "kubeflow", "training-operator").all()) {
		k.Names = ""
		chart[k] = true
	}
	for k := range expand(role.Rules) {
		k.Names = ""
		if !chart[k] {
			t.Errorf("role.yaml grants %+v, the chart with every kind does not", k)
		}
	}
}
