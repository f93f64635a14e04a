package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/e2e/kueueproc"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
)

const (
	// kueueNSLabel scopes Kueue's webhooks on our kinds to the Kueue specs'
	// namespaces, so a slow Kueue cannot fail other specs' job creates.
	kueueNSLabel     = "e2e.training-operator.kubeflow.org/kueue"
	kueueWebhookName = "e2e-kueue"
	// kueueProbeNamespace holds the dry-run creates that check Kueue's webhooks.
	kueueProbeNamespace = "e2e-kueue-probe"
)

var kueueGroup = kueueproc.Group

type kueueMode = kueueproc.Mode

var (
	kueueBuiltin  = kueueproc.Builtin
	kueueOperator = kueueproc.Operator
)

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
	wfpr       *kueueproc.WaitForPodsReady
	configPath string
	healthAddr string
	// operatorStarts numbers the operator's restarts (work directories).
	operatorStarts int
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
	bin, manifests, err := kueueproc.Binaries(os.Getenv("KUBEBUILDER_ASSETS"))
	if err != nil {
		Fail("Kueue specs: " + err.Error())
	}
	if err := kueueproc.EnsureMetricsCerts(); err != nil {
		Fail("Kueue specs: " + err.Error())
	}
	Expect(kueueproc.Install(ctx, restCfg, k8s, manifests)).To(Succeed())

	dir := filepath.Join(filepath.Dir(cfg.Kubeconfig), "kueue")
	Expect(os.MkdirAll(filepath.Join(dir, "certs"), 0o755)).To(Succeed())
	p := &kueueProcess{bin: bin, manifests: manifests, dir: dir}
	p.caPEM, err = kueueproc.WriteServingCert(filepath.Join(dir, "certs"))
	Expect(err).NotTo(HaveOccurred())
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
func (p *kueueProcess) switchTo(ctx context.Context, mode kueueMode, wfpr *kueueproc.WaitForPodsReady) {
	operatorWas := p.proc != nil && p.mode.Operator
	p.mode, p.wfpr = mode, wfpr
	p.writeConfig()
	if mode.Operator || operatorWas {
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
	if !p.mode.Operator {
		restartOperator(ctx, dir)
		return
	}
	restartOperator(ctx, dir, func(c *configv1alpha1.Configuration) {
		c.Kueue.Integration = configv1alpha1.KueueIntegrationOperator
		c.Kueue.ConfigFile = p.configPath
	})
}

// writeConfig writes Kueue's configuration for the current mode (plus
// waitForPodsReady when set) into configPath. The webhook and health
// addresses are kept across restarts, so the registered webhooks stay valid.
func (p *kueueProcess) writeConfig() {
	if p.webhookAddr == "" {
		p.webhookAddr = localAddr(freePorts(1)[0])
	}
	health := localAddr(freePorts(1)[0])
	config := kueueproc.Config(p.mode, p.wfpr, kueueproc.Addresses{Health: health, Webhook: p.webhookAddr, CertDir: filepath.Join(p.dir, "certs")})
	p.configPath = filepath.Join(p.dir, "config.yaml")
	p.healthAddr = health
	Expect(os.WriteFile(p.configPath, []byte(config), 0o644)).To(Succeed())
}

// start runs Kueue on its configuration file and waits until it is ready.
func (p *kueueProcess) start(ctx context.Context) {
	configPath, health := p.configPath, p.healthAddr
	p.logPath = filepath.Join(p.dir, fmt.Sprintf("kueue-%s.log", time.Now().Format("150405.000")))
	proc, err := kueueproc.Start(p.bin, configPath, cfg.Kubeconfig, p.logPath)
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
	if p.mode.Operator || operator.Exited() {
		p.mode = kueueBuiltin
		p.restartOperator(ctx)
	}
}

// webhooks are this Kueue's webhooks, those on our kinds limited to the
// Kueue specs' namespaces.
func (p *kueueProcess) webhooks() kueueproc.Webhooks {
	return kueueproc.Webhooks{Name: kueueWebhookName, Manifests: p.manifests, Addr: p.webhookAddr, CA: p.caPEM,
		Scope: &metav1.LabelSelector{MatchLabels: map[string]string{kueueNSLabel: "true"}}}
}

func (p *kueueProcess) registerWebhooks(ctx context.Context) {
	Expect(p.webhooks().Register(ctx, k8s, p.mode)).To(Succeed())
}

// unregisterWebhooks removes Kueue's webhooks before Kueue stops, so
// nothing is left calling a dead endpoint.
func (p *kueueProcess) unregisterWebhooks(ctx context.Context) {
	Expect(p.webhooks().Unregister(ctx, k8s)).To(Succeed())
	probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueueProbeNamespace}}
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, probe))).To(Succeed())
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
		g.Expect(kueueproc.AdmissionReady(ctx, k8s, probeNS.Name, "probe")).To(Succeed())
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}
