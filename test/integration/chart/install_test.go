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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/internal/operator"
	"github.com/seed-d8a409e9/training-operator/internal/serving/cert"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/test/util"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

const (
	jobTimeout = 90 * time.Second
	poll       = 250 * time.Millisecond
)

// liveCluster is a local control plane shared by the install tests.
type liveCluster struct {
	env   *cluster.Cluster
	admin *rest.Config
	k8s   client.Client
}

func startCluster(t *testing.T) *liveCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a local control plane")
	}
	ctx := t.Context()
	env, err := cluster.Start(ctx, cluster.Options{Nodes: 2, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	admin := env.RESTConfig()
	admin.QPS, admin.Burst = 200, 400
	k8s, err := client.New(admin, client.Options{Scheme: util.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(env.WorkDir(), "operator.log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Close()
		if t.Failed() {
			if data, err := os.ReadFile(logFile); err == nil {
				t.Logf("operator log:\n%s", childproc.LastLines(string(data), 200))
			}
		}
	})
	ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	return &liveCluster{env: env, admin: admin, k8s: k8s}
}

func (c *liveCluster) helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helm(t, append(args, "--kubeconfig", c.env.KubeconfigPath())...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c *liveCluster) createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := c.k8s.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// checkInstalled asserts that every object of a manifest exists in the cluster.
func (c *liveCluster) checkInstalled(t *testing.T, m manifests) {
	t.Helper()
	for _, o := range m {
		got := o.DeepCopy()
		if err := c.k8s.Get(t.Context(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s/%s not in the cluster: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// operatorInstall describes an installed operator to run in-process.
type operatorInstall struct {
	namespace      string // where the ServiceAccount, Secret, Lease live
	serviceAccount string
	configYAML     string // the installed ConfigMap's config.yaml
}

// runningOperator is the operator running in-process as the installed ServiceAccount.
type runningOperator struct {
	cfg    *configv1alpha1.Configuration
	client client.Client // impersonating the ServiceAccount
	stop   func()
}

// runOperator runs what main.go runs (built-in certificates, webhooks,
// controllers, leader election), with the installed Configuration, but
// in-process and with every API call impersonating the installed
// ServiceAccount, so that a missing permission fails the test. The
// webhook server listens on 127.0.0.1 (webhook.clientURL) because the local
// API server cannot reach Services.
func (c *liveCluster) runOperator(t *testing.T, inst operatorInstall) *runningOperator {
	t.Helper()
	cfg := operatorConfiguration(t, inst.configYAML, []string{"--config=/etc/training-operator/config.yaml"})
	if cfg.Webhook.CertManagement != configv1alpha1.CertManagementSelfSigned {
		t.Fatalf("the in-process operator needs certManagement self-signed, the install has %q", cfg.Webhook.CertManagement)
	}
	port := freePort(t)
	cfg.Webhook.Host = "127.0.0.1"
	cfg.Webhook.Port = &port
	cfg.Webhook.CertDir = t.TempDir()
	cfg.Webhook.ClientURL = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.LeaderElection.LeaderElect = true
	cfg.LeaderElection.ResourceNamespace = inst.namespace

	sa := rest.CopyConfig(c.admin)
	sa.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", inst.namespace, inst.serviceAccount)}
	sa.QPS, sa.Burst = *cfg.ClientConnection.QPS, int(*cfg.ClientConnection.Burst)

	// Through the wiring main.go uses, with the install's Configuration;
	// the metrics and probe servers are not needed here.
	cfg.Metrics.BindAddress = "0"
	cfg.Health.ProbeBindAddress = "0"
	op, err := operator.New(sa, cfg, operator.Overrides{CertNamespace: inst.namespace, SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	mgr, readyz := op.Manager, op.WebhookReady
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("operator did not stop")
		}
	}
	t.Cleanup(stop)
	// Ready: certificates issued (Secret written as the ServiceAccount),
	// webhook server started.
	if err := wait.PollUntilContextTimeout(t.Context(), poll, jobTimeout, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("operator exited: %v", err)
		default:
		}
		return readyz(nil) == nil, nil
	}); err != nil {
		t.Fatalf("operator not ready: %v (readyz: %v)", err, readyz(nil))
	}
	saClient, err := client.New(sa, client.Options{Scheme: util.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return &runningOperator{cfg: cfg, client: saClient, stop: stop}
}

func freePort(t *testing.T) int32 {
	t.Helper()
	ports, err := childproc.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return int32(ports[0])
}

// runPyTorchJob creates the seed PyTorchJob (pods finish with exit code 0
// on the KWOK nodes) through the webhooks and waits until it Succeeded.
func (c *liveCluster) runPyTorchJob(t *testing.T, ns string) *kubeflowv1.PyTorchJob {
	t.Helper()
	ctx := t.Context()
	job := util.SeedPyTorchJob(ns)
	job.Name = "mnist-" + rand.String(5)
	for _, rs := range job.Spec.PyTorchReplicaSpecs {
		if rs.Template.Annotations == nil {
			rs.Template.Annotations = map[string]string{}
		}
		rs.Template.Annotations[cluster.ExitCodeAnnotation] = "0"
	}
	// The API server reaches the webhooks once the CA bundle is injected.
	if err := wait.PollUntilContextTimeout(ctx, poll, jobTimeout, true, func(ctx context.Context) (bool, error) {
		err := c.k8s.Create(ctx, job.DeepCopy(), client.DryRunAll)
		if err != nil {
			t.Logf("dry-run create: %v", err)
		}
		return err == nil, nil
	}); err != nil {
		t.Fatalf("webhooks not reachable: %v", err)
	}
	if err := c.k8s.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	// The mutating webhook (served as the ServiceAccount) defaulted it.
	master := job.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster].Template.Spec.Containers[0]
	if len(master.Ports) == 0 || master.Ports[0].Name != kubeflowv1.PyTorchJobDefaultPortName {
		t.Errorf("stored job not defaulted by the mutating webhook: master ports %+v", master.Ports)
	}
	var got kubeflowv1.PyTorchJob
	if err := wait.PollUntilContextTimeout(ctx, poll, jobTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Status == corev1.ConditionTrue && (cond.Type == kubeflowv1.JobSucceeded || cond.Type == kubeflowv1.JobFailed) {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("job %s/%s did not finish: %v; status %+v", ns, job.Name, err, got.Status)
	}
	succeeded := false
	for _, cond := range got.Status.Conditions {
		succeeded = succeeded || (cond.Type == kubeflowv1.JobSucceeded && cond.Status == corev1.ConditionTrue)
	}
	if !succeeded {
		t.Fatalf("job %s/%s failed: %+v", ns, job.Name, got.Status.Conditions)
	}
	t.Logf("PyTorchJob %s/%s Succeeded; conditions: %s", ns, job.Name, conditionSummary(got.Status))
	return &got
}

func conditionSummary(st kubeflowv1.JobStatus) string {
	var out []string
	for _, c := range st.Conditions {
		out = append(out, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	return strings.Join(out, ",")
}

// checkOperatorEffects asserts what the operator did as the ServiceAccount:
// the certificate Secret, the CA bundle in both webhook configurations, the
// Lease, events on the job.
func (c *liveCluster) checkOperatorEffects(t *testing.T, op *runningOperator, inst operatorInstall, job *kubeflowv1.PyTorchJob) {
	t.Helper()
	ctx := t.Context()
	var s corev1.Secret
	if err := c.k8s.Get(ctx, client.ObjectKey{Namespace: inst.namespace, Name: op.cfg.Webhook.SecretName}, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Data[cert.TLSCertKey]) == 0 || len(s.Data[cert.CACertKey]) == 0 {
		t.Errorf("certificate Secret not filled: keys %v", keys(s.Data))
	}
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.k8s.Get(ctx, client.ObjectKey{Name: webhooks.MutatingWebhookConfigurationName}, &mwc); err != nil {
		t.Fatal(err)
	}
	if err := c.k8s.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &vwc); err != nil {
		t.Fatal(err)
	}
	ccs := map[string]admissionregistrationv1.WebhookClientConfig{}
	for _, w := range mwc.Webhooks {
		ccs[w.Name] = w.ClientConfig
	}
	for _, w := range vwc.Webhooks {
		ccs[w.Name] = w.ClientConfig
	}
	if len(ccs) != 2*len(op.cfg.EnabledSchemes) {
		t.Errorf("%d webhooks, want 2 per enabled kind", len(ccs))
	}
	for name, cc := range ccs {
		if len(cc.CABundle) == 0 || cc.URL == nil || !strings.HasPrefix(*cc.URL, op.cfg.Webhook.ClientURL) {
			t.Errorf("%s not updated by the operator: %+v", name, cc)
		}
	}
	var lease coordinationv1.Lease
	if err := c.k8s.Get(ctx, client.ObjectKey{Namespace: inst.namespace, Name: op.cfg.LeaderElection.ResourceName}, &lease); err != nil {
		t.Errorf("leader-election Lease: %v", err)
	} else if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("Lease not held: %+v", lease.Spec)
	}
	var events eventsv1.EventList
	if err := c.k8s.List(ctx, &events, client.InNamespace(job.Namespace)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		if e.Regarding.Name == job.Name && e.Regarding.Kind == kubeflowv1.PyTorchJobKind {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no events recorded on the job (events RBAC)")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// forbidden asserts that the ServiceAccount may not do something.
func forbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want Forbidden", what, err)
	}
}

// installedConfig returns config.yaml of the installed ConfigMap.
func (c *liveCluster) installedConfig(t *testing.T, ns, prefix string) string {
	t.Helper()
	var cms corev1.ConfigMapList
	if err := c.k8s.List(t.Context(), &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, prefix) {
			return cm.Data["config.yaml"]
		}
	}
	t.Fatalf("no ConfigMap %s* in %s", prefix, ns)
	return ""
}

// TestInstall installs the kustomize configuration, then the chart
// (cluster-wide, then namespace-scoped) on a real local API server and proves each
// install's RBAC is sufficient by running a job with the operator
// impersonating the installed ServiceAccount.
func TestInstall(t *testing.T) {
	c := startCluster(t)
	ctx := t.Context()

	t.Run("kustomize config/default", func(t *testing.T) {
		kubectl := kubectlPath(t)
		out, err := run(os.Environ(), kubectl, "apply", "--server-side", "-k", filepath.Join(repoRoot, "config", "default"),
			"--kubeconfig", c.env.KubeconfigPath())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kubectl apply --server-side -k config/default:\n%s", out)
		rendered := kustomize(t, "config/default")
		c.checkInstalled(t, rendered)
		t.Cleanup(func() {
			// Uninstall (CRDs included) so that the Helm installs start clean.
			out, err := run(os.Environ(), kubectl, "delete", "-k", filepath.Join(repoRoot, "config", "default"),
				"--kubeconfig", c.env.KubeconfigPath(), "--wait", "--timeout=2m")
			if err != nil {
				t.Error(err)
			}
			t.Logf("kubectl delete -k config/default:\n%s", out)
		})

		// Re-applying keeps what the operator wrote (certificates, CA bundle).
		inst := operatorInstall{namespace: "kubeflow", serviceAccount: "training-operator", configYAML: c.installedConfig(t, "kubeflow", "training-operator-config-")}
		c.serviceModeCertificates(t, inst)
		before := c.operatorState(t, "kubeflow")
		if out, err := run(os.Environ(), kubectl, "apply", "--server-side", "-k", filepath.Join(repoRoot, "config", "default"),
			"--kubeconfig", c.env.KubeconfigPath()); err != nil {
			t.Errorf("second apply: %v", err)
		} else if strings.Contains(out, "conflict") {
			t.Errorf("second apply:\n%s", out)
		}
		if diff := cmp.Diff(before, c.operatorState(t, "kubeflow")); diff != "" {
			t.Errorf("re-applying changed what the operator wrote (-before +after):\n%s", diff)
		}

		op := c.runOperator(t, inst)
		jobNS := "kust-" + rand.String(5)
		c.createNamespace(t, jobNS)
		job := c.runPyTorchJob(t, jobNS)
		c.checkOperatorEffects(t, op, inst, job)
		var sl corev1.SecretList
		forbidden(t, "list Secrets in the job namespace", op.client.List(ctx, &sl, client.InNamespace(jobNS)))
		op.stop()
	})

	t.Run("helm cluster-wide", func(t *testing.T) {
		const ns = "training-operator"
		out := c.helm(t, append([]string{"install", "training-operator", chartDir, "--namespace", ns, "--create-namespace", "--wait", "--timeout", "3m"}, kwokHookSucceeds...)...)
		t.Logf("helm install:\n%s", out)
		for _, want := range []string{"STATUS: deployed", "watches jobs in all namespaces", "Certificates: self-signed"} {
			if !strings.Contains(out, want) {
				t.Errorf("helm install output lacks %q", want)
			}
		}
		manifest := c.helm(t, "get", "manifest", "training-operator", "--namespace", ns)
		m, err := parseManifests(manifest)
		if err != nil {
			t.Fatal(err)
		}
		c.checkInstalled(t, m)
		t.Logf("installed: %s", strings.Join(m.keys(), ", "))
		for _, kind := range kinds.Names() {
			if _, err := c.k8s.RESTMapper().RESTMapping(kubeflowv1.GroupVersion.WithKind(kind).GroupKind()); err != nil {
				t.Errorf("%s not served: %v", kind, err)
			}
		}
		var secrets corev1.SecretList
		if err := c.k8s.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err == nil {
			for _, s := range secrets.Items {
				t.Logf("helm release Secret %s: %d bytes", s.Name, len(s.Data["release"]))
			}
		}
		t.Cleanup(func() {
			t.Logf("helm uninstall:\n%s", c.helm(t, "uninstall", "training-operator", "--namespace", ns, "--wait"))
		})

		inst := operatorInstall{namespace: ns, serviceAccount: "training-operator", configYAML: c.installedConfig(t, ns, "training-operator-config")}
		op := c.runOperator(t, inst)
		jobNS := "team-" + rand.String(5)
		c.createNamespace(t, jobNS)
		job := c.runPyTorchJob(t, jobNS)
		c.checkOperatorEffects(t, op, inst, job)

		// Least privilege: no Secrets outside the operator namespace.
		var sl corev1.SecretList
		forbidden(t, "list Secrets in the job namespace", op.client.List(ctx, &sl, client.InNamespace(jobNS)))
		forbidden(t, "list Secrets cluster-wide", op.client.List(ctx, &sl))
		var nodes corev1.NodeList
		forbidden(t, "list Nodes", op.client.List(ctx, &nodes))
		op.stop()
		c.checkUninstallHook(t, "training-operator", ns, jobNS, "")

		// An upgrade keeps what the operator wrote (certificates in the
		// Secret, CA bundle and client config in the webhook
		// configurations) and rolls out the new Configuration (two
		// replicas: leader election).
		// In production the webhooks call the Service, not a URL: let the
		// operator's certificate manager point them back at it.
		c.serviceModeCertificates(t, inst)
		before := c.operatorState(t, ns)
		out = c.helm(t, "upgrade", "training-operator", chartDir, "--namespace", ns, "--reuse-values", "--set", "replicas=2", "--wait", "--timeout", "3m")
		t.Logf("helm upgrade:\n%s", out)
		if diff := cmp.Diff(before, c.operatorState(t, ns)); diff != "" {
			t.Errorf("helm upgrade changed what the operator wrote (-before +after):\n%s", diff)
		}
		if cfgYAML := c.installedConfig(t, ns, "training-operator-config"); !strings.Contains(cfgYAML, "leaderElect: true") {
			t.Errorf("configuration after the upgrade to 2 replicas:\n%s", cfgYAML)
		}
		var d appsv1.Deployment
		if err := c.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "training-operator"}, &d); err != nil || *d.Spec.Replicas != 2 {
			t.Errorf("Deployment after the upgrade: %v replicas %v", err, d.Spec.Replicas)
		}
	})

	t.Run("helm namespace-scoped", func(t *testing.T) {
		const ns, watch = "to-scoped", "team-scoped"
		c.createNamespace(t, watch)
		out := c.helm(t, append([]string{"install", "to-scoped", chartDir, "--namespace", ns, "--create-namespace",
			"--set", "watchNamespace=" + watch, "--set", "enabledSchemes={PyTorchJob,TFJob}", "--wait", "--timeout", "3m"}, kwokHookSucceeds...)...)
		t.Logf("helm install (namespace-scoped):\n%s", out)
		if !strings.Contains(out, "watches jobs in namespace "+watch) {
			t.Errorf("helm install output:\n%s", out)
		}
		manifest := c.helm(t, "get", "manifest", "to-scoped", "--namespace", ns)
		m, err := parseManifests(manifest)
		if err != nil {
			t.Fatal(err)
		}
		c.checkInstalled(t, m)
		t.Cleanup(func() {
			t.Logf("helm uninstall:\n%s", c.helm(t, "uninstall", "to-scoped", "--namespace", ns, "--wait"))
		})

		inst := operatorInstall{namespace: ns, serviceAccount: "training-operator", configYAML: c.installedConfig(t, ns, "training-operator-config")}
		op := c.runOperator(t, inst)
		if op.cfg.Namespace != watch {
			t.Fatalf("installed configuration watches %q", op.cfg.Namespace)
		}
		job := c.runPyTorchJob(t, watch)
		c.checkOperatorEffects(t, op, inst, job)

		// The ServiceAccount can act only in the watched namespace.
		other := "other-" + rand.String(5)
		c.createNamespace(t, other)
		var pods corev1.PodList
		forbidden(t, "list pods in another namespace", op.client.List(ctx, &pods, client.InNamespace(other)))
		forbidden(t, "list pods cluster-wide", op.client.List(ctx, &pods))
		var jobs kubeflowv1.PyTorchJobList
		forbidden(t, "list PyTorchJobs cluster-wide", op.client.List(ctx, &jobs))
		if err := op.client.List(ctx, &jobs, client.InNamespace(watch)); err != nil {
			t.Errorf("list PyTorchJobs in the watched namespace: %v", err)
		}
		op.stop()
		c.checkUninstallHook(t, "to-scoped", ns, watch, watch)
	})

}

// operatorState is what the operator writes into installed objects.
type operatorState struct {
	SecretData map[string][]byte
	Webhooks   map[string]admissionregistrationv1.WebhookClientConfig
}

func (c *liveCluster) operatorState(t *testing.T, ns string) operatorState {
	t.Helper()
	st, err := c.readOperatorState(t.Context(), ns)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (c *liveCluster) readOperatorState(ctx context.Context, ns string) (operatorState, error) {
	var s corev1.Secret
	if err := c.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "training-operator-webhook-cert"}, &s); err != nil {
		return operatorState{}, err
	}
	st := operatorState{SecretData: s.Data, Webhooks: map[string]admissionregistrationv1.WebhookClientConfig{}}
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	if err := c.k8s.Get(ctx, client.ObjectKey{Name: webhooks.MutatingWebhookConfigurationName}, &mwc); err != nil {
		return st, err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.k8s.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &vwc); err != nil {
		return st, err
	}
	for _, w := range mwc.Webhooks {
		st.Webhooks[w.Name] = w.ClientConfig
	}
	for _, w := range vwc.Webhooks {
		st.Webhooks[w.Name] = w.ClientConfig
	}
	if len(st.SecretData) == 0 || len(st.Webhooks) == 0 {
		return st, fmt.Errorf("no operator state: %d Secret keys, %d webhooks", len(st.SecretData), len(st.Webhooks))
	}
	return st, nil
}

// serviceModeCertificates runs the operator's certificate management as in
// a cluster (webhooks calling the Service, no clientURL) until it has
// pointed every webhook at the Service with the CA bundle.
func (c *liveCluster) serviceModeCertificates(t *testing.T, inst operatorInstall) {
	t.Helper()
	cfg := operatorConfiguration(t, inst.configYAML, []string{"--config=/etc/training-operator/config.yaml"})
	sa := rest.CopyConfig(c.admin)
	sa.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", inst.namespace, inst.serviceAccount)}
	// The operator's wiring without its controllers: certificates and
	// webhooks only.
	port := freePort(t)
	cfg.Webhook.Host, cfg.Webhook.Port, cfg.Webhook.CertDir = "127.0.0.1", &port, t.TempDir()
	cfg.Metrics.BindAddress, cfg.Health.ProbeBindAddress = "0", "0"
	cfg.LeaderElection.LeaderElect = false
	op, err := operator.New(sa, cfg, operator.Overrides{CertNamespace: inst.namespace, SkipNameValidation: true, NoControllers: true})
	if err != nil {
		t.Fatal(err)
	}
	mgr := op.Manager
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("certificate manager: %v", err)
		}
	}()
	if err := wait.PollUntilContextTimeout(ctx, poll, jobTimeout, true, func(ctx context.Context) (bool, error) {
		st, err := c.readOperatorState(ctx, inst.namespace)
		if err != nil {
			return false, nil
		}
		for _, cc := range st.Webhooks {
			if cc.URL != nil || cc.Service == nil || cc.Service.Namespace != inst.namespace || len(cc.CABundle) == 0 {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("webhooks not pointed at the Service: %v", err)
	}
}
