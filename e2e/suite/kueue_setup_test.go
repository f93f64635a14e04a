package suite

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/e2e/childproc"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// Kueue (sigs.k8s.io/kueue) is built by hack/controlplane.sh into its own
// cache folder and linked into the control-plane bin folder as "kueue", with
// the CRDs and webhook manifests of its module in "kueue-manifests".
const (
	kueueNamespace = "kueue-system"
	// kueueNSLabel scopes Kueue's webhooks on our kinds to the Kueue specs'
	// namespaces, so a slow Kueue cannot fail other specs' job creates.
	kueueNSLabel = "e2e.training-operator.kubeflow.org/kueue"
	// kueueMetricsCerts is fixed in Kueue v0.17 when its internal cert
	// management is off; it exits at start without a key pair there.
	kueueMetricsCerts = "/etc/kueue/metrics/certs"
	kueueWebhookName  = "e2e-kueue"
	// kueueProbeNamespace holds the dry-run creates that check Kueue's webhooks.
	kueueProbeNamespace = "e2e-kueue-probe"
)

var kueueGroup = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// kueueFrameworks are Kueue's integrations of our kinds; its
// kubeflow.org/mpijob is mpi-operator's v2beta1 MPIJob, not ours.
var kueueFrameworks = []string{
	"kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
	"kubeflow.org/paddlejob", "kubeflow.org/jaxjob",
}

// kueueExternalFrameworks are our six kinds as Kueue external frameworks,
// managed by the operator's own integration.
var kueueExternalFrameworks = []string{
	"PyTorchJob.v1.kubeflow.org", "TFJob.v1.kubeflow.org", "MPIJob.v1.kubeflow.org",
	"XGBoostJob.v1.kubeflow.org", "PaddleJob.v1.kubeflow.org", "JAXJob.v1.kubeflow.org",
}

// kueueMode is who creates and manages the Workloads of queued jobs.
type kueueMode struct {
	// operator: the operator's integration (--kueue-integration=operator,
	// Kueue lists our kinds in externalFrameworks); else Kueue's own.
	operator bool
	// builtinToo also keeps Kueue's own kubeflow.org integrations in
	// operator mode: the misconfiguration the operator must report.
	builtinToo bool
}

var (
	kueueBuiltin  = kueueMode{}
	kueueOperator = kueueMode{operator: true}
)

func (m kueueMode) String() string {
	switch {
	case m.operator && m.builtinToo:
		return "operator+builtin"
	case m.operator:
		return "operator"
	}
	return "builtin"
}

// kueueBuiltinOn reports whether Kueue's own kubeflow.org integrations run.
func (m kueueMode) kueueBuiltinOn() bool { return !m.operator || m.builtinToo }

// waitForPodsReadyConfig is the Kueue configuration section of the
// waitForPodsReady specs; the other specs run without it.
type waitForPodsReadyConfig struct {
	Timeout           string
	BackoffBaseSecs   int
	BackoffLimitCount int
}

// kueueProcess is Kueue running out of cluster (local mode only).
type kueueProcess struct {
	bin, manifests string
	dir            string
	proc           *childproc.Process
	logPath        string // of the current start
	webhookAddr    string
	caPEM          []byte
	// mode and wfpr are those of the current start; configPath is its
	// configuration file, which the operator reads in operator mode.
	mode       kueueMode
	wfpr       *waitForPodsReadyConfig
	configPath string
	healthAddr string
	// operatorStarts numbers the operator's restarts (work directories).
	operatorStarts int
}

// kueueBinaries returns Kueue's binary and manifests folder, or a reason
// why they are missing.
func kueueBinaries() (bin, manifests string, missing string) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return "", "", "$KUBEBUILDER_ASSETS is not set"
	}
	bin, manifests = filepath.Join(dir, "kueue"), filepath.Join(dir, "kueue-manifests")
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Sprintf("no Kueue binary in %s (run `make controlplane`)", dir)
	}
	if _, err := os.Stat(filepath.Join(manifests, "webhook.yaml")); err != nil {
		return "", "", fmt.Sprintf("no Kueue manifests in %s (run `make controlplane`)", manifests)
	}
	return bin, manifests, ""
}

// kueueInstalled reports whether an external cluster has Kueue's API.
func kueueInstalled(ctx context.Context) bool {
	var crd apiextensionsv1.CustomResourceDefinition
	return k8s.Get(ctx, client.ObjectKey{Name: "clusterqueues.kueue.x-k8s.io"}, &crd) == nil
}

// setupKueue makes Kueue available to the Kueue specs: in local mode it
// installs Kueue's CRDs and starts it; on an external cluster it needs
// Kueue installed there, and skips (with the reason) without it; locally a
// missing piece fails the specs.
func setupKueue(ctx context.Context, mode kueueMode) *kueueProcess {
	if !cfg.Local {
		if !kueueInstalled(ctx) {
			Skip("Kueue specs: the external cluster ($" + EnvKubeconfig + ") has no Kueue installed")
		}
		return nil
	}
	bin, manifests, missing := kueueBinaries()
	if missing != "" {
		Fail("Kueue specs: " + missing + " (make controlplane-kueue builds it)")
	}
	if err := ensureKueueMetricsCerts(); err != nil {
		Fail(fmt.Sprintf("Kueue specs: Kueue needs a metrics key pair in %s: %v", kueueMetricsCerts, err))
	}
	Expect(util.InstallCRDs(ctx, restCfg, filepath.Join(manifests, "crd"))).To(Succeed())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueueNamespace}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, ns))).To(Succeed())

	dir := filepath.Join(filepath.Dir(cfg.Kubeconfig), "kueue")
	Expect(os.MkdirAll(filepath.Join(dir, "certs"), 0o755)).To(Succeed())
	p := &kueueProcess{bin: bin, manifests: manifests, dir: dir}
	p.caPEM = writeServingCert(filepath.Join(dir, "certs"))
	// Whatever fails from here on, later specs need the suite's operator as
	// it was, and no Kueue left running.
	DeferCleanup(func(ctx SpecContext) { p.stopAll(ctx) }, NodeTimeout(3*time.Minute))
	p.switchTo(ctx, mode, nil)
	return p
}

// switchTo runs Kueue and the operator in mode (with waitForPodsReady when
// wfpr is set), as a cluster admin moves between the integrations: Kueue's
// configuration is written first, the operator restarted on it (in
// operator mode, or back to its default), then Kueue restarted on it with
// its webhooks for our kinds only while its own integrations run. While
// both run for a moment they make the same Workload (same name and pod
// sets), which is what lets jobs in flight cross over.
func (p *kueueProcess) switchTo(ctx context.Context, mode kueueMode, wfpr *waitForPodsReadyConfig) {
	operatorWas := p.proc != nil && p.mode.operator
	p.mode, p.wfpr = mode, wfpr
	p.writeConfig()
	if mode.operator || operatorWas {
		p.restartOperator(ctx)
	}
	p.stop()
	p.start(ctx)
	p.registerWebhooks(ctx)
	p.waitWebhooks(ctx)
}

// restartOperator restarts the suite's operator with --kueue-integration
// and --kueue-config as the mode has them.
func (p *kueueProcess) restartOperator(ctx context.Context) {
	if !operator.Exited() {
		Expect(operator.terminate(30 * time.Second)).To(Succeed())
	}
	p.operatorStarts++
	dir := fmt.Sprintf("operator-kueue-%d-%s", p.operatorStarts, p.mode)
	if !p.mode.operator {
		restartOperator(ctx, dir)
		return
	}
	restartOperator(ctx, dir, fmt.Sprintf("kueue:\n  integration: operator\n  configFile: %s\n", p.configPath))
}

// writeConfig writes Kueue's configuration for the current mode (plus
// waitForPodsReady when set) into configPath. The webhook and health
// addresses are kept across restarts, so the registered webhooks stay valid.
func (p *kueueProcess) writeConfig() {
	if p.webhookAddr == "" {
		p.webhookAddr = localAddr(freePorts(1)[0])
	}
	health := localAddr(freePorts(1)[0])
	host, port, _ := net.SplitHostPort(p.webhookAddr)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
manageJobsWithoutQueueName: false
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
health:
  healthProbeBindAddress: %s
# "0" turns the metrics server off; its certificate is still read at start.
metrics:
  bindAddress: "0"
webhook:
  host: %s
  port: %s
  certDir: %s
integrations:
  frameworks:
  - batch/job
`, kueueNamespace, health, host, port, filepath.Join(p.dir, "certs"))
	if p.mode.kueueBuiltinOn() {
		for _, f := range kueueFrameworks {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	if p.mode.operator {
		// Kueue refuses a kind listed both ways: with its own integrations
		// on, only MPIJob (which they never cover) is external.
		b.WriteString("  externalFrameworks:\n")
		for _, f := range kueueExternalFrameworks {
			if !p.mode.kueueBuiltinOn() || strings.HasPrefix(f, kubeflowv1.MPIJobKind+".") {
				fmt.Fprintf(&b, "  - %s\n", f)
			}
		}
	}
	if wfpr := p.wfpr; wfpr != nil {
		fmt.Fprintf(&b, `waitForPodsReady:
  timeout: %s
  blockAdmission: false
  requeuingStrategy:
    timestamp: Eviction
    backoffBaseSeconds: %d
    backoffLimitCount: %d
`, wfpr.Timeout, wfpr.BackoffBaseSecs, wfpr.BackoffLimitCount)
	}
	p.configPath = filepath.Join(p.dir, "config.yaml")
	p.healthAddr = health
	Expect(os.WriteFile(p.configPath, []byte(b.String()), 0o644)).To(Succeed())
}

// start runs Kueue on its configuration file and waits until it is ready.
func (p *kueueProcess) start(ctx context.Context) {
	configPath, health := p.configPath, p.healthAddr
	p.logPath = filepath.Join(p.dir, fmt.Sprintf("kueue-%s.log", time.Now().Format("150405.000")))
	proc, err := childproc.Start(childproc.Spec{
		Name: "Kueue",
		Bin:  p.bin,
		// VisibilityOnDemand serves an aggregated API, which needs in-cluster wiring.
		Args: []string{"--config", configPath, "--kubeconfig", cfg.Kubeconfig,
			"--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2"},
		LogPath: p.logPath,
	})
	Expect(err).NotTo(HaveOccurred())
	p.proc = proc
	GinkgoWriter.Printf("e2e: kueue pid %d (%s integration), config %s, log %s\n", proc.Pid(), p.mode, configPath, p.logPath)

	Expect(proc.WaitReady(ctx, "http://"+health+"/readyz", readyTimeout, readyPoll)).To(Succeed())
}

// stop sends SIGTERM and waits; Kueue is killed if it does not exit.
func (p *kueueProcess) stop() {
	if p == nil || p.proc == nil || p.proc.Exited() {
		return
	}
	p.proc.Stop(30 * time.Second)
}

// stopAll stops Kueue and, if it ran in operator mode or a restart left
// none, brings the suite's operator back to its default configuration.
// Only the first parallel process runs the operator (and the Serial
// operator-mode specs); on the others there is none to restore.
func (p *kueueProcess) stopAll(ctx context.Context) {
	p.unregisterWebhooks(ctx)
	p.stop()
	if operator == nil {
		return
	}
	if p.mode.operator || operator.Exited() {
		p.mode = kueueBuiltin
		p.restartOperator(ctx)
	}
}

// registerWebhooks installs Kueue's webhook manifests with URLs to the
// local Kueue and our CA, keeping only what this Kueue serves: its own API
// and, while its own integrations run, our kubeflow.org/v1 kinds (those
// limited to the Kueue namespaces).
func (p *kueueProcess) registerWebhooks(ctx context.Context) {
	data, err := os.ReadFile(filepath.Join(p.manifests, "webhook.yaml"))
	Expect(err).NotTo(HaveOccurred())
	keep := func(path string) (ok, ours bool) {
		switch {
		case strings.Contains(path, "-kueue-x-k8s-io-"):
			return true, false
		case strings.Contains(path, "-kubeflow-org-v1-"):
			return p.mode.kueueBuiltinOn(), true
		}
		return false, false
	}
	clientConfig := func(cc *admissionv1.WebhookClientConfig) {
		url := "https://" + p.webhookAddr + ptr.Deref(cc.Service.Path, "/")
		cc.Service, cc.URL, cc.CABundle = nil, &url, p.caPEM
	}
	scope := &metav1.LabelSelector{MatchLabels: map[string]string{kueueNSLabel: "true"}}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		raw, err := u.MarshalJSON()
		Expect(err).NotTo(HaveOccurred())
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			var c admissionv1.MutatingWebhookConfiguration
			Expect(utilyaml.Unmarshal(raw, &c)).To(Succeed())
			var hooks []admissionv1.MutatingWebhook
			for _, h := range c.Webhooks {
				if ok, ours := keep(ptr.Deref(h.ClientConfig.Service.Path, "")); ok {
					clientConfig(&h.ClientConfig)
					if ours {
						h.NamespaceSelector = scope
					}
					hooks = append(hooks, h)
				}
			}
			c.ObjectMeta = metav1.ObjectMeta{Name: kueueWebhookName}
			c.Webhooks = hooks
			upsert(ctx, &c)
		case "ValidatingWebhookConfiguration":
			var c admissionv1.ValidatingWebhookConfiguration
			Expect(utilyaml.Unmarshal(raw, &c)).To(Succeed())
			var hooks []admissionv1.ValidatingWebhook
			for _, h := range c.Webhooks {
				if ok, ours := keep(ptr.Deref(h.ClientConfig.Service.Path, "")); ok {
					clientConfig(&h.ClientConfig)
					if ours {
						h.NamespaceSelector = scope
					}
					hooks = append(hooks, h)
				}
			}
			c.ObjectMeta = metav1.ObjectMeta{Name: kueueWebhookName}
			c.Webhooks = hooks
			upsert(ctx, &c)
		}
	}
}

// unregisterWebhooks removes Kueue's webhooks before Kueue stops, so
// nothing is left calling a dead endpoint.
func (p *kueueProcess) unregisterWebhooks(ctx context.Context) {
	for _, o := range []client.Object{
		&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kueueWebhookName}},
		&admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: kueueWebhookName}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueueProbeNamespace}},
	} {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
	}
}

func upsert(ctx context.Context, obj client.Object) {
	err := k8s.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		existing := obj.DeepCopyObject().(client.Object)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), existing)).To(Succeed())
		obj.SetResourceVersion(existing.GetResourceVersion())
		err = k8s.Update(ctx, obj)
	}
	Expect(err).NotTo(HaveOccurred())
}

// waitWebhooks waits until admission goes through Kueue: a dry-run create
// of a queued job in a Kueue namespace comes back suspended.
func (p *kueueProcess) waitWebhooks(ctx context.Context) {
	probeNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   kueueProbeNamespace,
		Labels: map[string]string{kueueNSLabel: "true"},
	}}
	Eventually(ctx, func(g Gomega) {
		if p.proc.Exited() {
			StopTrying(fmt.Sprintf("Kueue exited: %v\n%s", p.proc.Err(), p.proc.Tail(40))).Now()
		}
		// Created in the loop: an earlier Kueue setup's cleanup may still be
		// deleting it.
		g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, probeNS.DeepCopy()))).To(Succeed())
		job := testjobs.MakePyTorchJob("kueue-probe", probeNS.Name).Master(1).Obj()
		job.Labels = map[string]string{kueueQueueLabel: "probe"}
		g.Expect(k8s.Create(ctx, job, client.DryRunAll)).To(Succeed())
		g.Expect(ptr.Deref(job.Spec.RunPolicy.Suspend, false)).To(BeTrue(), "Kueue's defaulting webhook did not suspend the job")
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

// ensureKueueMetricsCerts writes a throwaway key pair where Kueue reads its
// metrics certificate, unless a valid one is there (machines running
// several suites share the path; the metrics server itself is off).
func ensureKueueMetricsCerts() error {
	crt, key := filepath.Join(kueueMetricsCerts, "tls.crt"), filepath.Join(kueueMetricsCerts, "tls.key")
	if _, err := tls.LoadX509KeyPair(crt, key); err == nil {
		return nil
	}
	writeServingCert(kueueMetricsCerts)
	return nil
}

// writeServingCert writes tls.crt and tls.key for 127.0.0.1 signed by a new
// CA into dir and returns the CA certificate (the webhooks' caBundle).
func writeServingCert(dir string) []byte {
	ca, err := util.NewCA("e2e-kueue-ca")
	Expect(err).NotTo(HaveOccurred())
	leaf, err := ca.ServingCert("kueue-webhook")
	Expect(err).NotTo(HaveOccurred())
	Expect(util.WriteTLSFiles(dir, leaf)).To(Succeed())
	return ca.CertPEM
}
