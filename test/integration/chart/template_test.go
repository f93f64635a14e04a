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
	"crypto/sha256"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/hack/chart/chartsync"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

const (
	selectorKey   = "control-plane"
	selectorValue = "kubeflow-training-operator"
	certDir       = "/tmp/k8s-webhook-server/serving-certs"
)

// valueSet is one helm values file and what it must produce.
type valueSet struct {
	name   string
	ns     string
	values map[string]any
	check  func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration)
}

var valueSets = []valueSet{
	{
		name: "defaults",
		ns:   "kubeflow",
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if diff := cmp.Diff(configv1alpha1.AllSchemes(), cfg.EnabledSchemes); diff != "" {
				t.Errorf("enabled schemes (-want +got):\n%s", diff)
			}
			if cfg.Namespace != "" || cfg.LeaderElection.LeaderElect || cfg.Webhook.CertManagement != configv1alpha1.CertManagementSelfSigned {
				t.Errorf("namespace %q, leaderElect %v, certManagement %q", cfg.Namespace, cfg.LeaderElection.LeaderElect, cfg.Webhook.CertManagement)
			}
			d := deployment(t, m, "kubeflow")
			if *d.Spec.Replicas != 1 {
				t.Errorf("replicas %d", *d.Spec.Replicas)
			}
			// The Go runtime is left to the platform; the chart makes the
			// container's memory limit Go's soft limit, visibly.
			var goEnv []corev1.EnvVar
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if strings.HasPrefix(e.Name, "GO") {
					goEnv = append(goEnv, e)
				}
			}
			wantEnv := []corev1.EnvVar{{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{
				ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "training-operator", Resource: "limits.memory"}}}}
			if diff := cmp.Diff(wantEnv, goEnv); diff != "" {
				t.Errorf("Go runtime environment (-want +got):\n%s", diff)
			}
			// Self-signed: the operator writes the files, so an emptyDir.
			v := volume(t, d.Spec.Template.Spec, "cert")
			if v.EmptyDir == nil || v.Secret != nil {
				t.Errorf("cert volume %+v, want an emptyDir", v.VolumeSource)
			}
			if mnt := mount(t, d.Spec.Template.Spec.Containers[0], "cert"); mnt.ReadOnly {
				t.Errorf("cert mount is read-only")
			}
			// The (empty) certificate Secret the operator fills, as in v1.
			s := typed[corev1.Secret](t, m.mustFind(t, "Secret", "kubeflow", "training-operator-webhook-cert"))
			if len(s.Data) != 0 || len(s.StringData) != 0 {
				t.Errorf("certificate Secret has data")
			}
			for _, kind := range []string{"ServiceMonitor", "PodDisruptionBudget", "Certificate", "Issuer"} {
				if len(m.ofKind(kind)) != 0 {
					t.Errorf("%s rendered by default", kind)
				}
			}
			svc := typed[corev1.Service](t, m.mustFind(t, "Service", "kubeflow", "training-operator"))
			if svc.Annotations["prometheus.io/scrape"] != "true" || svc.Annotations["prometheus.io/port"] != "8080" || svc.Annotations["prometheus.io/path"] != "/metrics" {
				t.Errorf("Service scrape annotations %v", svc.Annotations)
			}
			// Cluster-wide: exactly the generated rules, split between the
			// ClusterRole and a Role in the operator namespace.
			g := saGrants(t, m, "kubeflow", "training-operator")
			if diff := cmp.Diff(sortedKeys(expand(generatedRole(t).Rules)), sortedKeys(expand(g.all()))); diff != "" {
				t.Errorf("granted permissions differ from config/rbac/role.yaml (-want +got):\n%s", diff)
			}
			if got := slices.Sorted(mapsKeysOf(g.namespaces)); !slices.Equal(got, []string{"kubeflow"}) {
				t.Errorf("Roles in namespaces %v, want [kubeflow]", got)
			}
			for k := range expand(g.cluster) {
				if k.Resource == "secrets" || k.Resource == "leases" {
					t.Errorf("the ClusterRole grants %+v; Secrets and Leases belong in the operator namespace only", k)
				}
			}
			if !hasPermission(g.namespaces["kubeflow"], "", "secrets", "update") || !hasPermission(g.namespaces["kubeflow"], "coordination.k8s.io", "leases", "update") {
				t.Errorf("the operator namespace Role lacks the Secret or Lease rules: %+v", g.namespaces["kubeflow"])
			}
		},
	},
	{
		name: "cert-manager",
		ns:   "ml-system",
		values: map[string]any{
			"webhook": map[string]any{"certManagement": "cert-manager"},
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if cfg.Webhook.CertManagement != configv1alpha1.CertManagementCertManager {
				t.Errorf("certManagement %q", cfg.Webhook.CertManagement)
			}
			issuer := m.mustFind(t, "Issuer", "ml-system", "training-operator-selfsigned-issuer")
			if _, ok := issuer.Object["spec"].(map[string]any)["selfSigned"]; !ok {
				t.Errorf("Issuer is not self-signed: %v", issuer.Object["spec"])
			}
			c := m.mustFind(t, "Certificate", "ml-system", "training-operator-serving-cert")
			spec := c.Object["spec"].(map[string]any)
			if spec["secretName"] != "training-operator-webhook-cert" {
				t.Errorf("Certificate secretName %v", spec["secretName"])
			}
			if diff := cmp.Diff([]any{"training-operator.ml-system.svc", "training-operator.ml-system.svc.cluster.local"}, spec["dnsNames"]); diff != "" {
				t.Errorf("dnsNames (-want +got):\n%s", diff)
			}
			if ref := spec["issuerRef"].(map[string]any); ref["name"] != "training-operator-ca-issuer" || ref["kind"] != "Issuer" {
				t.Errorf("issuerRef %v", ref)
			}
			mwc, vwc := webhookConfigurations(t, m)
			for _, a := range []map[string]string{mwc.Annotations, vwc.Annotations} {
				if a["cert-manager.io/inject-ca-from"] != "ml-system/training-operator-serving-cert" {
					t.Errorf("inject-ca-from annotation %v", a)
				}
			}
			d := deployment(t, m, "ml-system")
			v := volume(t, d.Spec.Template.Spec, "cert")
			if v.Secret == nil || v.Secret.SecretName != "training-operator-webhook-cert" || v.EmptyDir != nil {
				t.Errorf("cert volume %+v, want the Secret", v.VolumeSource)
			}
			if mnt := mount(t, d.Spec.Template.Spec.Containers[0], "cert"); !mnt.ReadOnly {
				t.Errorf("cert Secret mounted read-write")
			}
			if m.find("Secret", "ml-system", "training-operator-webhook-cert") != nil {
				t.Errorf("the chart renders the Secret cert-manager owns")
			}
			// The operator touches neither Secrets nor webhook configurations.
			g := saGrants(t, m, "ml-system", "training-operator")
			for k := range expand(g.all()) {
				if k.Resource == "secrets" || strings.HasSuffix(k.Resource, "webhookconfigurations") {
					t.Errorf("cert-manager install grants %+v", k)
				}
			}
			want := expand(generatedRole(t).Rules)
			for k := range want {
				if k.Resource == "secrets" || strings.HasSuffix(k.Resource, "webhookconfigurations") {
					delete(want, k)
				}
			}
			if diff := cmp.Diff(sortedKeys(want), sortedKeys(expand(g.all()))); diff != "" {
				t.Errorf("granted permissions (-want +got):\n%s", diff)
			}
		},
	},
	{
		name: "cert-manager with a ClusterIssuer",
		ns:   "kubeflow",
		values: map[string]any{
			"webhook": map[string]any{
				"certManagement": "cert-manager",
				"certManager":    map[string]any{"issuerRef": map[string]any{"name": "corp-ca", "kind": "ClusterIssuer"}},
			},
		},
		check: func(t *testing.T, m manifests, _ *configv1alpha1.Configuration) {
			if len(m.ofKind("Issuer")) != 0 {
				t.Errorf("an Issuer is rendered although issuerRef is given")
			}
			ref := m.mustFind(t, "Certificate", "kubeflow", "training-operator-serving-cert").Object["spec"].(map[string]any)["issuerRef"]
			if diff := cmp.Diff(map[string]any{"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}, ref); diff != "" {
				t.Errorf("issuerRef (-want +got):\n%s", diff)
			}
		},
	},
	{
		name: "certificates provided by hand",
		ns:   "kubeflow",
		values: map[string]any{
			"webhook": map[string]any{"certManagement": "none", "secretName": "my-cert", "caBundle": "Y2E="},
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if cfg.Webhook.CertManagement != configv1alpha1.CertManagementNone || cfg.Webhook.SecretName != "my-cert" {
				t.Errorf("webhook config %+v", cfg.Webhook)
			}
			v := volume(t, deployment(t, m, "kubeflow").Spec.Template.Spec, "cert")
			if v.Secret == nil || v.Secret.SecretName != "my-cert" {
				t.Errorf("cert volume %+v", v.VolumeSource)
			}
			mwc, vwc := webhookConfigurations(t, m)
			for _, w := range mwc.Webhooks {
				if string(w.ClientConfig.CABundle) != "ca" {
					t.Errorf("%s caBundle %q", w.Name, w.ClientConfig.CABundle)
				}
			}
			for _, w := range vwc.Webhooks {
				if string(w.ClientConfig.CABundle) != "ca" {
					t.Errorf("%s caBundle %q", w.Name, w.ClientConfig.CABundle)
				}
			}
			if len(m.ofKind("Secret"))+len(m.ofKind("Certificate")) != 0 {
				t.Errorf("Secret or Certificate rendered")
			}
		},
	},
	{
		name: "namespace-scoped",
		ns:   "ml-system",
		values: map[string]any{
			"watchNamespace": "team-a",
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if cfg.Namespace != "team-a" {
				t.Errorf("configuration namespace %q, want team-a", cfg.Namespace)
			}
			g := saGrants(t, m, "ml-system", "training-operator")
			// Only cluster-scoped resources (webhook configurations,
			// PriorityClasses, ...) stay in a ClusterRole.
			groups := ruleGroups(t)
			if diff := cmp.Diff(sortedKeys(expand(append(groups.Cluster, groups.WebhookConfigurations...))), sortedKeys(expand(g.cluster))); diff != "" {
				t.Errorf("cluster-wide grants of a namespace-scoped install (-want +got):\n%s", diff)
			}
			if got := slices.Sorted(mapsKeysOf(g.namespaces)); !slices.Equal(got, []string{"ml-system", "team-a"}) {
				t.Fatalf("Roles in %v, want [ml-system team-a]", got)
			}
			for _, want := range [][3]string{{"kubeflow.org", "pytorchjobs", "watch"}, {"", "pods", "create"}, {"kubeflow.org", "pytorchjobs/status", "patch"}} {
				if !hasPermission(g.namespaces["team-a"], want[0], want[1], want[2]) {
					t.Errorf("team-a Role lacks %v", want)
				}
			}
			for _, want := range [][3]string{{"", "secrets", "update"}, {"coordination.k8s.io", "leases", "update"}, {"", "events", "create"}} {
				if !hasPermission(g.namespaces["ml-system"], want[0], want[1], want[2]) {
					t.Errorf("operator namespace Role lacks %v", want)
				}
			}
			if hasPermission(g.namespaces["ml-system"], "", "pods", "create") {
				t.Errorf("operator namespace Role grants pod creation")
			}
			if diff := cmp.Diff(sortedKeys(expand(generatedRole(t).Rules)), sortedKeys(expand(g.all()))); diff != "" {
				t.Errorf("granted permissions differ from config/rbac/role.yaml (-want +got):\n%s", diff)
			}
			// The webhooks admit only the watched namespace.
			mwc, vwc := webhookConfigurations(t, m)
			want := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "team-a"}}
			for _, w := range mwc.Webhooks {
				if diff := cmp.Diff(want, w.NamespaceSelector); diff != "" {
					t.Errorf("%s namespaceSelector (-want +got):\n%s", w.Name, diff)
				}
			}
			for _, w := range vwc.Webhooks {
				if diff := cmp.Diff(want, w.NamespaceSelector); diff != "" {
					t.Errorf("%s namespaceSelector (-want +got):\n%s", w.Name, diff)
				}
			}
		},
	},
	{
		name: "namespace-scoped in the release namespace",
		ns:   "team-b",
		values: map[string]any{
			"watchNamespace": "team-b",
			"webhook":        map[string]any{"certManagement": "cert-manager"},
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			g := saGrants(t, m, "team-b", "training-operator")
			// cert-manager: not even the webhook configurations are cluster-wide.
			if diff := cmp.Diff(sortedKeys(expand(ruleGroups(t).Cluster)), sortedKeys(expand(g.cluster))); diff != "" {
				t.Errorf("cluster-wide grants (-want +got):\n%s", diff)
			}
			if got := slices.Sorted(mapsKeysOf(g.namespaces)); !slices.Equal(got, []string{"team-b"}) {
				t.Errorf("Roles in %v, want one in team-b", got)
			}
			if roles := m.ofKind("Role").withoutHooks(); len(roles) != 1 {
				t.Errorf("%d Roles besides hooks, want 1: %v", len(roles), roles.keys())
			}
		},
	},
	{
		name: "gang scheduling with volcano",
		ns:   "kubeflow",
		values: map[string]any{
			"gangScheduling": map[string]any{"schedulerName": "volcano", "schedulerPluginsSchedulerName": "coscheduler"},
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if cfg.GangScheduling.SchedulerName != "volcano" || cfg.GangScheduling.SchedulerPluginsSchedulerName != "coscheduler" {
				t.Errorf("gangScheduling %+v", cfg.GangScheduling)
			}
			// PodGroup RBAC comes from the generated role, whatever the default backend.
			g := saGrants(t, m, "kubeflow", "training-operator")
			if diff := cmp.Diff(sortedKeys(expand(generatedRole(t).Rules)), sortedKeys(expand(g.all()))); diff != "" {
				t.Errorf("granted permissions differ from config/rbac/role.yaml (-want +got):\n%s", diff)
			}
		},
	},
	{
		name: "subset of enabled schemes",
		ns:   "kubeflow",
		values: map[string]any{
			"enabledSchemes": []any{"PyTorchJob", "tfjob"},
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if diff := cmp.Diff([]string{"PyTorchJob", "TFJob"}, cfg.EnabledSchemes); diff != "" {
				t.Errorf("enabled schemes (-want +got):\n%s", diff)
			}
			mwc, vwc := webhookConfigurations(t, m)
			if got := webhookNames(mwc, vwc); !slices.Equal(got, []string{
				"defaulter.pytorchjob.training-operator.kubeflow.org", "defaulter.tfjob.training-operator.kubeflow.org",
				"validator.pytorchjob.training-operator.kubeflow.org", "validator.tfjob.training-operator.kubeflow.org",
			}) {
				t.Errorf("webhooks %v", got)
			}
		},
	},
	{
		name: "high availability and monitoring",
		ns:   "kubeflow",
		values: map[string]any{
			"replicas":            3,
			"image":               map[string]any{"repository": "registry.example.com/to", "digest": "sha256:" + strings.Repeat("ab", 32)},
			"podDisruptionBudget": map[string]any{"enabled": true, "minAvailable": 2},
			"metrics": map[string]any{
				"port": 9090, "secure": true,
				"serviceMonitor": map[string]any{"enabled": true, "interval": "15s", "labels": map[string]any{"release": "prom"}},
			},
			"controller":       map[string]any{"defaultConcurrency": 8, "concurrency": map[string]any{"PyTorchJob": 16}, "cacheSyncTimeout": "20m", "podTracking": false},
			"clientConnection": map[string]any{"qps": 200.5, "burst": 400, "disableCompression": false},
			"pytorchInitContainer": map[string]any{
				"image": "registry.example.com/alpine:3.20", "maxTries": 50,
			},
			"mpi":               map[string]any{"kubectlDeliveryImage": "registry.example.com/kubectl-delivery:v1"},
			"extraArgs":         []any{"--zap-log-level=debug", "--kube-api-qps=300"},
			"extraEnv":          []any{map[string]any{"name": "CUSTOM_CLUSTER_DOMAIN", "value": "example.local"}},
			"priorityClassName": "system-cluster-critical",
			"rbac":              map[string]any{"userRoles": true},
		},
		check: func(t *testing.T, m manifests, cfg *configv1alpha1.Configuration) {
			if !cfg.LeaderElection.LeaderElect {
				t.Errorf("leader election off with 3 replicas")
			}
			if cfg.Controller.CacheSyncTimeout.Duration != 20*time.Minute {
				t.Errorf("controller.cacheSyncTimeout = %v, want 20m", cfg.Controller.CacheSyncTimeout)
			}
			if *cfg.Controller.PodTracking {
				t.Errorf("controller.podTracking = true, want false")
			}
			if *cfg.Controller.DefaultConcurrency != 8 || cfg.Controller.Concurrency["PyTorchJob"] != 16 {
				t.Errorf("controller %+v", cfg.Controller)
			}
			// --kube-api-qps in extraArgs overrides the file, as for v1 flags.
			if *cfg.ClientConnection.QPS != 300 || *cfg.ClientConnection.Burst != 400 || *cfg.ClientConnection.DisableCompression {
				t.Errorf("clientConnection qps %v burst %v disableCompression %v", *cfg.ClientConnection.QPS, *cfg.ClientConnection.Burst, *cfg.ClientConnection.DisableCompression)
			}
			if cfg.PyTorchInitContainer.Image != "registry.example.com/alpine:3.20" || *cfg.PyTorchInitContainer.MaxTries != 50 ||
				cfg.MPI.KubectlDeliveryImage != "registry.example.com/kubectl-delivery:v1" {
				t.Errorf("images %+v %+v", cfg.PyTorchInitContainer, cfg.MPI)
			}
			if cfg.Metrics.BindAddress != ":9090" || !cfg.Metrics.Secure {
				t.Errorf("metrics %+v", cfg.Metrics)
			}
			d := deployment(t, m, "kubeflow")
			c := d.Spec.Template.Spec.Containers[0]
			if *d.Spec.Replicas != 3 || c.Image != "registry.example.com/to@sha256:"+strings.Repeat("ab", 32) {
				t.Errorf("replicas %d image %s", *d.Spec.Replicas, c.Image)
			}
			if d.Spec.Template.Spec.PriorityClassName != "system-cluster-critical" {
				t.Errorf("priorityClassName %q", d.Spec.Template.Spec.PriorityClassName)
			}
			if port(t, c, "monitoring-port") != 9090 || !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "CUSTOM_CLUSTER_DOMAIN" && e.Value == "example.local" }) {
				t.Errorf("ports %v env %v", c.Ports, c.Env)
			}
			pdb := typed[policyv1.PodDisruptionBudget](t, m.mustFind(t, "PodDisruptionBudget", "kubeflow", "training-operator"))
			if pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable != intstr.FromInt32(2) || pdb.Spec.Selector.MatchLabels[selectorKey] != selectorValue {
				t.Errorf("PDB %+v", pdb.Spec)
			}
			sm := m.mustFind(t, "ServiceMonitor", "kubeflow", "training-operator")
			if sm.GetLabels()["release"] != "prom" {
				t.Errorf("ServiceMonitor labels %v", sm.GetLabels())
			}
			ep := sm.Object["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
			if ep["port"] != "monitoring-port" || ep["scheme"] != "https" || ep["interval"] != "15s" || ep["path"] != "/metrics" {
				t.Errorf("ServiceMonitor endpoint %v", ep)
			}
			// Prometheus verifies the operator before it sends its token.
			wantTLS := map[string]any{
				"ca":         map[string]any{"secret": map[string]any{"name": "training-operator-webhook-cert", "key": "ca.crt"}},
				"serverName": "training-operator.kubeflow.svc",
			}
			if diff := cmp.Diff(wantTLS, ep["tlsConfig"]); diff != "" {
				t.Errorf("ServiceMonitor tlsConfig (-want +got):\n%s", diff)
			}
			svc := typed[corev1.Service](t, m.mustFind(t, "Service", "kubeflow", "training-operator"))
			if svc.Spec.Ports[0].Port != 9090 || svc.Annotations["prometheus.io/scrape"] != "" {
				t.Errorf("Service %+v %v", svc.Spec.Ports, svc.Annotations)
			}
			// Secure metrics: TokenReviews and SubjectAccessReviews, and a reader role.
			g := saGrants(t, m, "kubeflow", "training-operator")
			for _, want := range [][3]string{{"authentication.k8s.io", "tokenreviews", "create"}, {"authorization.k8s.io", "subjectaccessreviews", "create"}} {
				if !hasPermission(g.cluster, want[0], want[1], want[2]) {
					t.Errorf("secure metrics need %v", want)
				}
			}
			reader := typed[rbacv1.ClusterRole](t, m.mustFind(t, "ClusterRole", "", "training-operator-metrics-reader"))
			if !expand(reader.Rules)[ruleKey{URL: "/metrics", Verb: "get"}] {
				t.Errorf("metrics reader rules %+v", reader.Rules)
			}
			for _, name := range []string{"kubeflow-training-admin", "kubeflow-training-edit", "kubeflow-training-view"} {
				m.mustFind(t, "ClusterRole", "", name)
			}
		},
	},
}

func TestHelmLint(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			args := []string{"lint", chartDir, "--strict", "--namespace", vs.ns}
			if vs.values != nil {
				args = append(args, "-f", writeValues(t, vs.values))
			}
			out, err := helm(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "0 chart(s) failed") {
				t.Errorf("helm lint:\n%s", out)
			}
		})
	}
}

func TestHelmTemplate(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			m := render(t, vs.ns, vs.values)
			cfg := checkCommon(t, vs, m)
			vs.check(t, m, cfg)
		})
	}
}

// checkCommon asserts what every value set must render and returns the
// operator Configuration as the binary would load it.
func checkCommon(t *testing.T, vs valueSet, m manifests) *configv1alpha1.Configuration {
	t.Helper()
	ns := vs.ns
	// Every namespaced object is in the release namespace, except Roles and
	// RoleBindings of a namespace-scoped install.
	for _, o := range m {
		switch o.GetKind() {
		case "Role", "RoleBinding":
			if o.GetNamespace() != ns && o.GetNamespace() != vs.stringValue("watchNamespace") {
				t.Errorf("%s %s/%s outside the release and watched namespaces", o.GetKind(), o.GetNamespace(), o.GetName())
			}
		case "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			if o.GetNamespace() != "" {
				t.Errorf("cluster-scoped %s %s has a namespace", o.GetKind(), o.GetName())
			}
		default:
			if o.GetNamespace() != ns {
				t.Errorf("%s %s in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), ns)
			}
		}
	}

	typed[corev1.ServiceAccount](t, m.mustFind(t, "ServiceAccount", ns, "training-operator"))

	d := deployment(t, m, ns)
	if d.Labels[selectorKey] != selectorValue || d.Spec.Selector.MatchLabels[selectorKey] != selectorValue || len(d.Spec.Selector.MatchLabels) != 1 {
		t.Errorf("Deployment labels %v selector %v (v1's selector: %s=%s)", d.Labels, d.Spec.Selector.MatchLabels, selectorKey, selectorValue)
	}
	pod := d.Spec.Template
	if pod.Labels[selectorKey] != selectorValue {
		t.Errorf("pod labels %v", pod.Labels)
	}
	if pod.Annotations["sidecar.istio.io/inject"] != "false" {
		t.Errorf("pod annotations %v lack sidecar.istio.io/inject: \"false\"", pod.Annotations)
	}
	if pod.Spec.ServiceAccountName != "training-operator" || pod.Spec.TerminationGracePeriodSeconds == nil || *pod.Spec.TerminationGracePeriodSeconds != 10 {
		t.Errorf("serviceAccountName %q terminationGracePeriodSeconds %v", pod.Spec.ServiceAccountName, pod.Spec.TerminationGracePeriodSeconds)
	}
	psc := pod.Spec.SecurityContext
	if psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v", psc)
	}
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		t.Errorf("no topologySpreadConstraints")
	}
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.LabelSelector == nil || tsc.LabelSelector.MatchLabels[selectorKey] != selectorValue {
			t.Errorf("topology spread constraint without the pod selector: %+v", tsc)
		}
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if c.Name != "training-operator" || !slices.Equal(c.Command, []string{"/manager"}) {
		t.Errorf("container %q command %v", c.Name, c.Command)
	}
	sc := c.SecurityContext
	if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
		ptr.Deref(sc.AllowPrivilegeEscalation, true) || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container securityContext %+v", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["MY_POD_NAMESPACE"] != "metadata.namespace" || env["MY_POD_NAME"] != "metadata.name" {
		t.Errorf("env %v", c.Env)
	}
	if port(t, c, "webhook-server") != vs.intValue(9443, "webhook", "port") || port(t, c, "health") != 8081 {
		t.Errorf("ports %+v", c.Ports)
	}
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != intstr.FromString("health") {
			t.Errorf("probe %s: %+v", p.path, p.probe)
		}
	}
	if mnt := mount(t, c, "cert"); mnt.MountPath != certDir {
		t.Errorf("cert mounted at %s", mnt.MountPath)
	}
	if mnt := mount(t, c, "config"); mnt.MountPath != "/etc/training-operator" || !mnt.ReadOnly {
		t.Errorf("config mount %+v", mnt)
	}
	if v := volume(t, pod.Spec, "config"); v.ConfigMap == nil || v.ConfigMap.Name != "training-operator-config" {
		t.Errorf("config volume %+v", v.VolumeSource)
	}

	// The Configuration, exactly as the binary loads it with these arguments.
	cm := configMap(t, m, ns, "training-operator-config")
	cfg := operatorConfiguration(t, cm.Data["config.yaml"], c.Args)
	if cfg.Webhook.ServiceName != "training-operator" || cfg.Webhook.CertDir != certDir || *cfg.Webhook.Port != port(t, c, "webhook-server") {
		t.Errorf("webhook config %+v does not match the Deployment", cfg.Webhook)
	}
	if cfg.Health.ProbeBindAddress != ":8081" || cfg.Metrics.BindAddress != fmt.Sprintf(":%d", port(t, c, "monitoring-port")) {
		t.Errorf("bind addresses %q %q", cfg.Health.ProbeBindAddress, cfg.Metrics.BindAddress)
	}
	if cfg.Webhook.ClientURL != "" {
		t.Errorf("clientURL %q set in a cluster install", cfg.Webhook.ClientURL)
	}
	if cfg.LeaderElection.LeaderElect != (*d.Spec.Replicas > 1) {
		t.Errorf("leaderElect %v with %d replicas", cfg.LeaderElection.LeaderElect, *d.Spec.Replicas)
	}
	// Configuration changes roll the pods.
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte(strings.TrimSuffix(cm.Data["config.yaml"], "\n")))); pod.Annotations["checksum/config"] != want {
		t.Errorf("checksum/config annotation %q, want %q", pod.Annotations["checksum/config"], want)
	}

	// Service: v1's ports, selecting the pods.
	svc := typed[corev1.Service](t, m.mustFind(t, "Service", ns, "training-operator"))
	wantPorts := map[string][2]any{
		"monitoring-port": {vs.intValue(8080, "metrics", "port"), intstr.FromString("monitoring-port")},
		"webhook-server":  {int32(443), intstr.FromString("webhook-server")},
	}
	if len(svc.Spec.Ports) != 2 {
		t.Errorf("Service ports %+v", svc.Spec.Ports)
	}
	for _, p := range svc.Spec.Ports {
		w, ok := wantPorts[p.Name]
		if !ok || p.Port != w[0].(int32) || p.TargetPort != w[1].(intstr.IntOrString) {
			t.Errorf("Service port %+v", p)
		}
	}
	if svc.Spec.Selector[selectorKey] != selectorValue || len(svc.Spec.Selector) != 1 {
		t.Errorf("Service selector %v", svc.Spec.Selector)
	}

	// Webhook configurations: v1's names, the operator's code's webhooks for
	// the enabled kinds, pointing at the Service.
	checkWebhooks(t, m, ns, cfg)

	// RBAC: no wildcards, nothing beyond config/rbac/role.yaml (plus the
	// secure-metrics review APIs when enabled).
	g := saGrants(t, m, ns, "training-operator")
	if w := wildcards(g.all()); len(w) > 0 {
		t.Errorf("wildcard rules: %v", w)
	}
	allowed := expand(generatedRole(t).Rules)
	if cfg.Metrics.Secure {
		allowed[ruleKey{Group: "authentication.k8s.io", Resource: "tokenreviews", Verb: "create"}] = true
		allowed[ruleKey{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create"}] = true
	}
	for k := range expand(g.all()) {
		if !allowed[k] {
			t.Errorf("granted %+v, which config/rbac/role.yaml does not have", k)
		}
	}
	for _, o := range append(m.ofKind("ClusterRole"), m.ofKind("Role")...) {
		if o.GetKind() == "ClusterRole" && strings.HasPrefix(o.GetName(), "kubeflow-training-") {
			continue // user roles, bound by nobody here
		}
		var rules []rbacv1.PolicyRule
		if o.GetKind() == "Role" {
			rules = typed[rbacv1.Role](t, o).Rules
		} else {
			rules = typed[rbacv1.ClusterRole](t, o).Rules
		}
		if w := wildcards(rules); len(w) > 0 {
			t.Errorf("%s %s has wildcard rules: %v", o.GetKind(), o.GetName(), w)
		}
	}
	return cfg
}

// checkWebhooks compares the rendered webhook configurations with what the
// operator's code serves and manages (webhooks.WebhookConfigurations).
func checkWebhooks(t *testing.T, m manifests, ns string, cfg *configv1alpha1.Configuration) {
	t.Helper()
	mwc, vwc := webhookConfigurations(t, m)
	if mwc.Name != webhooks.MutatingWebhookConfigurationName || vwc.Name != webhooks.ValidatingWebhookConfigurationName {
		t.Errorf("configuration names %s, %s", mwc.Name, vwc.Name)
	}
	want, err := webhooks.WebhookConfigurations(kinds.Webhooks(), cfg.EnabledSchemes)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name, Path              string
		Rules                   []admissionregistrationv1.RuleWithOperations
		FailurePolicy           admissionregistrationv1.FailurePolicyType
		SideEffects             admissionregistrationv1.SideEffectClass
		AdmissionReviewVersions []string
	}
	norm := func(name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations,
		fp *admissionregistrationv1.FailurePolicyType, se *admissionregistrationv1.SideEffectClass, arv []string) entry {
		var path string
		if cc.Service != nil {
			path = ptr.Deref(cc.Service.Path, "")
		}
		return entry{name, path, rules, ptr.Deref(fp, ""), ptr.Deref(se, ""), arv}
	}
	var gotM, wantM, gotV, wantV []entry
	for _, w := range mwc.Webhooks {
		gotM = append(gotM, norm(w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.AdmissionReviewVersions))
		checkClientConfig(t, w.Name, w.ClientConfig, ns)
	}
	for _, w := range vwc.Webhooks {
		gotV = append(gotV, norm(w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.AdmissionReviewVersions))
		checkClientConfig(t, w.Name, w.ClientConfig, ns)
	}
	for _, w := range want.Mutating {
		wantM = append(wantM, norm(w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.AdmissionReviewVersions))
	}
	for _, w := range want.Validating {
		wantV = append(wantV, norm(w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.AdmissionReviewVersions))
	}
	byName := func(a, b entry) int { return strings.Compare(a.Name, b.Name) }
	for _, s := range [][]entry{gotM, wantM, gotV, wantV} {
		slices.SortFunc(s, byName)
	}
	if diff := cmp.Diff(wantM, gotM); diff != "" {
		t.Errorf("mutating webhooks differ from the operator's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("validating webhooks differ from the operator's (-want +got):\n%s", diff)
	}
}

func checkClientConfig(t *testing.T, name string, cc admissionregistrationv1.WebhookClientConfig, ns string) {
	t.Helper()
	if cc.URL != nil || cc.Service == nil || cc.Service.Name != "training-operator" || cc.Service.Namespace != ns || ptr.Deref(cc.Service.Port, 443) != 443 {
		t.Errorf("%s clientConfig %+v (service %+v)", name, cc, cc.Service)
	}
}

func webhookNames(mwc *admissionregistrationv1.MutatingWebhookConfiguration, vwc *admissionregistrationv1.ValidatingWebhookConfiguration) []string {
	var out []string
	for _, w := range mwc.Webhooks {
		out = append(out, w.Name)
	}
	for _, w := range vwc.Webhooks {
		out = append(out, w.Name)
	}
	slices.Sort(out)
	return out
}

func TestValuesSchemaRejectsBadValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown top-level key", map[string]any{"replica": 2}, "replica"},
		{"unknown nested key", map[string]any{"webhook": map[string]any{"certManagment": "none"}}, "certManagment"},
		{"replicas as a string", map[string]any{"replicas": "two"}, "replicas"},
		{"negative replicas", map[string]any{"replicas": -1}, "replicas"},
		{"unknown certManagement", map[string]any{"webhook": map[string]any{"certManagement": "manual"}}, "certManagement"},
		{"unknown scheme", map[string]any{"enabledSchemes": []any{"PyTorchJob", "SparkJob"}}, "enabledSchemes"},
		{"concurrency for an unknown kind", map[string]any{"controller": map[string]any{"concurrency": map[string]any{"SparkJob": 2}}}, "concurrency"},
		{"zero concurrency", map[string]any{"controller": map[string]any{"defaultConcurrency": 0}}, "defaultConcurrency"},
		{"disableCompression not a boolean", map[string]any{"clientConnection": map[string]any{"disableCompression": "yes"}}, "disableCompression"},
		{"cacheSyncTimeout not a duration", map[string]any{"controller": map[string]any{"cacheSyncTimeout": "ten minutes"}}, "cacheSyncTimeout"},
		{"watchNamespace not a DNS label", map[string]any{"watchNamespace": "Team_A"}, "watchNamespace"},
		{"--config in extraArgs", map[string]any{"extraArgs": []any{"--config=/other.yaml"}}, "extraArgs"},
		{"bad image digest", map[string]any{"image": map[string]any{"repository": "x", "digest": "latest"}}, "digest"},
		{"bad interval", map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"interval": "often"}}}, "interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helm(t, templateArgs(t, "training-operator", "kubeflow", tc.values)...)
			if err == nil {
				t.Fatalf("helm template accepted %v", tc.values)
			}
			msg := err.Error()
			if !strings.Contains(msg, "values don't meet the specifications of the schema") || !strings.Contains(msg, tc.want) {
				t.Errorf("error does not name %q as a schema violation:\n%s", tc.want, msg)
			}
			// helm install validates the same way (no cluster needed for that).
		})
	}
	// --set with a string for an integer is rejected too.
	_, err := helm(t, "template", "training-operator", chartDir, "--set-string", "replicas=two")
	if err == nil || !strings.Contains(err.Error(), "replicas") {
		t.Errorf("--set-string replicas=two: %v", err)
	}
}

// ruleGroups are the generated rules of config/rbac/role.yaml grouped by scope.
func ruleGroups(t *testing.T) chartsync.RuleGroups {
	t.Helper()
	return chartsync.GroupRules(generatedRole(t).Rules)
}

// value returns the value set's value at path, or nil.
func (vs valueSet) value(path ...string) any {
	var cur any = vs.values
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func (vs valueSet) stringValue(path ...string) string {
	s, _ := vs.value(path...).(string)
	return s
}

func (vs valueSet) intValue(def int32, path ...string) int32 {
	switch v := vs.value(path...).(type) {
	case int:
		return int32(v)
	case float64:
		return int32(v)
	}
	return def
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q", name)
	return corev1.Volume{}
}

func mount(t *testing.T, c corev1.Container, name string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no volume mount %q", name)
	return corev1.VolumeMount{}
}

func port(t *testing.T, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("no container port %q", name)
	return 0
}

// hasPermission reports whether rules grant verb on group/resource.
// hasPermission reports whether rules allow verb on resource, on every
// object or on named ones.
func hasPermission(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for k := range expand(rules) {
		if k.Group == group && k.Resource == resource && k.Verb == verb {
			return true
		}
	}
	return false
}

func mapsKeysOf[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }

// TestUninstallHook: "helm uninstall" runs the operator image once more, with
// --release-pod-finalizers, after the operator and its RBAC are gone, under
// a ServiceAccount that may list and patch pods in the watched namespaces
// only; every piece is a post-delete hook, and none is left behind.
func TestUninstallHook(t *testing.T) {
	for _, tc := range []struct {
		name, watch, roleKind, roleNS string
		args                          []string
	}{
		{name: "cluster-wide", roleKind: "ClusterRole", args: []string{"--release-pod-finalizers"}},
		{name: "namespace-scoped", watch: "team-a", roleKind: "Role", roleNS: "team-a", args: []string{"--release-pod-finalizers", "--namespace=team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ns, name = "kubeflow", "training-operator-uninstall"
			m := render(t, ns, map[string]any{"watchNamespace": tc.watch})
			hooks := manifests{}
			for _, o := range m {
				if o.GetAnnotations()["helm.sh/hook"] != "" {
					hooks = append(hooks, o)
				}
			}
			bindingKind := strings.TrimSuffix(tc.roleKind, "Role") + "RoleBinding"
			want := []string{"ServiceAccount " + ns + "/" + name, tc.roleKind + " " + tc.roleNS + "/" + name,
				bindingKind + " " + tc.roleNS + "/" + name, "Job " + ns + "/" + name}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(hooks.keys()))); diff != "" {
				t.Fatalf("hooks (-want +got):\n%s", diff)
			}
			for _, o := range hooks {
				a := o.GetAnnotations()
				if a["helm.sh/hook"] != "post-delete" || a["helm.sh/hook-delete-policy"] != "before-hook-creation,hook-succeeded" {
					t.Errorf("%s %s: annotations %v", o.GetKind(), o.GetName(), a)
				}
			}
			rules := typed[rbacv1.ClusterRole](t, hooks.mustFind(t, tc.roleKind, tc.roleNS, name)).Rules
			if diff := cmp.Diff([]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "patch"}}}, rules); diff != "" {
				t.Errorf("hook rules (-want +got):\n%s", diff)
			}
			job := typed[batchv1.Job](t, hooks.mustFind(t, "Job", ns, name))
			pod := job.Spec.Template.Spec
			if pod.ServiceAccountName != name || len(pod.Containers) != 1 {
				t.Fatalf("hook pod: serviceAccount %q, %d containers", pod.ServiceAccountName, len(pod.Containers))
			}
			if diff := cmp.Diff(tc.args, pod.Containers[0].Args); diff != "" {
				t.Errorf("hook args (-want +got):\n%s", diff)
			}
			if pod.Containers[0].Image != deployment(t, m, ns).Spec.Template.Spec.Containers[0].Image {
				t.Errorf("hook image %q is not the operator's", pod.Containers[0].Image)
			}
			if job.Spec.Template.Labels[selectorKey] == selectorValue {
				t.Errorf("the hook pod carries the operator Service's selector %s=%s", selectorKey, selectorValue)
			}
		})
	}
	t.Run("disabled", func(t *testing.T) {
		m := render(t, "kubeflow", map[string]any{"uninstallHook": map[string]any{"enabled": false}})
		if len(m) == 0 || len(m.withoutHooks()) != len(m) {
			t.Errorf("with uninstallHook.enabled=false: %d objects, %d hooks", len(m), len(m)-len(m.withoutHooks()))
		}
	})
}

// TestSensitiveRulesNamed: in every values set, a rule on Secrets or on
// webhook configurations names the objects it covers (the operator's one
// Secret and two configurations) and grants no create, so the operator can
// neither read other Secrets nor create or rewrite another admission
// webhook in the cluster.
func TestSensitiveRulesNamed(t *testing.T) {
	sensitive := map[string]bool{"secrets": true, "mutatingwebhookconfigurations": true, "validatingwebhookconfigurations": true}
	for _, vs := range append(valueSets, valueSet{name: "custom secret name", ns: "kubeflow", values: map[string]any{"webhook": map[string]any{"secretName": "my-cert"}}}) {
		t.Run(vs.name, func(t *testing.T) {
			secretName := "training-operator-webhook-cert"
			if wh, ok := vs.values["webhook"].(map[string]any); ok && wh["secretName"] != nil {
				secretName = wh["secretName"].(string)
			}
			allowed := map[string][]string{
				"secrets":                         {secretName},
				"mutatingwebhookconfigurations":   {"defaulter.training-operator.kubeflow.org"},
				"validatingwebhookconfigurations": {"validator.training-operator.kubeflow.org"},
			}
			m := render(t, vs.ns, vs.values)
			checked := map[string]bool{}
			for _, o := range append(m.ofKind("ClusterRole"), m.ofKind("Role")...) {
				for i, r := range typed[rbacv1.ClusterRole](t, o).Rules {
					for _, res := range r.Resources {
						if !sensitive[res] && res != "*" {
							continue
						}
						checked[res] = true
						where := fmt.Sprintf("%s %s/%s rules[%d] (%s)", o.GetKind(), o.GetNamespace(), o.GetName(), i, res)
						if len(r.ResourceNames) == 0 {
							t.Errorf("%s has no resourceNames", where)
						}
						for _, n := range r.ResourceNames {
							if !slices.Contains(allowed[res], n) {
								t.Errorf("%s names %q, want only %v", where, n, allowed[res])
							}
						}
						if slices.Contains(r.Verbs, "create") || slices.Contains(r.Verbs, "*") {
							t.Errorf("%s grants %v", where, r.Verbs)
						}
					}
				}
			}
			// With built-in certificates the operator writes the Secret and
			// both configurations, so each has a rule this loop must have
			// checked; otherwise it is granted none of them.
			builtIn := true
			if wh, ok := vs.values["webhook"].(map[string]any); ok && wh["certManagement"] != nil {
				builtIn = wh["certManagement"] == "self-signed"
			}
			switch want := slices.Sorted(maps.Keys(sensitive)); {
			case builtIn && !slices.Equal(slices.Sorted(maps.Keys(checked)), want):
				t.Errorf("rules checked for %v, want for each of %v", slices.Sorted(maps.Keys(checked)), want)
			case !builtIn && len(checked) > 0:
				t.Errorf("rules on %v without built-in certificates", slices.Sorted(maps.Keys(checked)))
			}
		})
	}
}

// TestLeaseRulesNamed: in every values set, the operator may get and
// update only its own leader-election Lease (the configured name), and
// create Leases only through a Role in the release namespace (a create
// cannot be named); no ClusterRole grants anything on Leases.
func TestLeaseRulesNamed(t *testing.T) {
	custom := valueSet{name: "custom Lease name", ns: "kubeflow", values: map[string]any{"leaderElection": map[string]any{"resourceName": "my-lease"}}}
	for _, vs := range append(valueSets, custom) {
		t.Run(vs.name, func(t *testing.T) {
			lease := "1ca428e5.training-operator.kubeflow.org"
			if le, ok := vs.values["leaderElection"].(map[string]any); ok && le["resourceName"] != nil {
				lease = le["resourceName"].(string)
			}
			m := render(t, vs.ns, vs.values)
			var named, create bool
			for _, o := range append(m.ofKind("ClusterRole"), m.ofKind("Role")...) {
				for i, r := range typed[rbacv1.ClusterRole](t, o).Rules {
					if !slices.Contains(r.Resources, "leases") && !slices.Contains(r.Resources, "*") {
						continue
					}
					where := fmt.Sprintf("%s %s/%s rules[%d] %v", o.GetKind(), o.GetNamespace(), o.GetName(), i, r.Verbs)
					if o.GetKind() != "Role" || o.GetNamespace() != vs.ns {
						t.Errorf("%s: Leases granted outside a Role in the release namespace %s", where, vs.ns)
					}
					switch {
					case slices.Equal(r.Verbs, []string{"create"}):
						create = true
					case len(r.ResourceNames) > 0:
						named = true
						if diff := cmp.Diff([]string{lease}, r.ResourceNames); diff != "" {
							t.Errorf("%s: resourceNames (-want +got):\n%s", where, diff)
						}
					default:
						t.Errorf("%s: unnamed", where)
					}
				}
			}
			if !named || !create {
				t.Errorf("Lease rules: named get/update %v, create %v; want both", named, create)
			}
			c := deployment(t, m, vs.ns).Spec.Template.Spec.Containers[0]
			cfg := operatorConfiguration(t, configMap(t, m, vs.ns, "training-operator-config").Data["config.yaml"], c.Args)
			if cfg.LeaderElection.ResourceName != lease {
				t.Errorf("the configuration's Lease %q, want %q", cfg.LeaderElection.ResourceName, lease)
			}
		})
	}
}

// TestCertManagerChain: with cert-manager, the chart and kustomize issue the
// serving certificate from a CA Issuer whose CA Certificate comes from the
// self-signed Issuer, so a renewal of the serving certificate keeps the CA
// bundle (TestCertManagerRenewalKeepsAdmission shows why on an API server).
func TestCertManagerChain(t *testing.T) {
	for name, m := range map[string]manifests{
		"chart":     render(t, "kubeflow", map[string]any{"webhook": map[string]any{"certManagement": "cert-manager"}}),
		"kustomize": kustomize(t, "config/overlays/cert-manager"),
	} {
		t.Run(name, func(t *testing.T) {
			str := func(o *unstructured.Unstructured, path ...string) string {
				v, _, _ := unstructured.NestedString(o.Object, path...)
				return v
			}
			var serving, ca *unstructured.Unstructured
			for _, o := range m.ofKind("Certificate") {
				switch str(o, "spec", "secretName") {
				case "training-operator-webhook-cert":
					serving = o
				}
			}
			if serving == nil {
				t.Fatalf("no Certificate for the webhook Secret in %v", m.keys())
			}
			if isCA, _, _ := unstructured.NestedBool(serving.Object, "spec", "isCA"); isCA {
				t.Errorf("the serving certificate is a CA")
			}
			caIssuer := m.mustFind(t, "Issuer", "kubeflow", str(serving, "spec", "issuerRef", "name"))
			caSecret := str(caIssuer, "spec", "ca", "secretName")
			if caSecret == "" {
				t.Fatalf("the serving certificate's Issuer %s is not a CA Issuer: %v", caIssuer.GetName(), caIssuer.Object["spec"])
			}
			for _, o := range m.ofKind("Certificate") {
				if str(o, "spec", "secretName") == caSecret {
					ca = o
				}
			}
			if ca == nil {
				t.Fatalf("no Certificate writes the CA Secret %s", caSecret)
			}
			if isCA, _, _ := unstructured.NestedBool(ca.Object, "spec", "isCA"); !isCA {
				t.Errorf("Certificate %s is not a CA", ca.GetName())
			}
			root := m.mustFind(t, "Issuer", "kubeflow", str(ca, "spec", "issuerRef", "name"))
			if _, found, _ := unstructured.NestedMap(root.Object, "spec", "selfSigned"); !found {
				t.Errorf("the CA's Issuer %s is not self-signed", root.GetName())
			}
			if d, err := time.ParseDuration(str(ca, "spec", "duration")); err != nil || d < 5*365*24*time.Hour {
				t.Errorf("CA duration %q: want years, so that renewals of the serving certificate outlive it many times", str(ca, "spec", "duration"))
			}
		})
	}
}
