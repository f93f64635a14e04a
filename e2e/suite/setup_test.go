package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/e2e/cluster"
	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// Scheduler profiles of the local cluster: pods naming them are placed like
// default-scheduler pods (no gang semantics), so gang jobs progress.
const (
	volcanoScheduler = "volcano"
	pluginsScheduler = "scheduler-plugins-scheduler"
)

// nodesFile holds the fake nodes shared with the kind path: the GPU nodes
// mirror e2e/cluster's, plus a CPU-only node.
func nodesFile() string { return filepath.Join(util.RepoRoot(), "e2e", "kind", "nodes.yaml") }

// startLocal brings up the local control plane and the operator (process 1).
func startLocal(ctx context.Context, s shared) shared {
	var err error
	env, err = cluster.Start(ctx, cluster.Options{
		Nodes:          4,
		GPUsPerNode:    8,
		SchedulerNames: []string{volcanoScheduler, pluginsScheduler},
		Logf:           func(f string, a ...any) { GinkgoWriter.Printf(f+"\n", a...) },
	})
	Expect(err).NotTo(HaveOccurred())
	s.Local, s.Kubeconfig = true, env.KubeconfigPath()
	connect(s)

	root := util.RepoRoot()
	Expect(util.InstallCRDs(ctx, restCfg, filepath.Join(root, "config", "crd", "bases"))).To(Succeed())
	// The gang specs need the PodGroup CRDs and the gang feature in the operator.
	external := filepath.Join(root, "config", "crd", "external")
	if _, err := os.Stat(filepath.Join(root, "controllers", "gang")); err == nil && dirHasYAML(external) {
		Expect(util.InstallCRDs(ctx, restCfg, external)).To(Succeed())
		s.Gang = true
	}

	// The CPU-only node of the shared node file (its GPU nodes already exist).
	for _, n := range readNodes() {
		if _, ok := n.Status.Capacity[cluster.GPUResource]; ok {
			continue
		}
		Expect(k8s.Create(ctx, n)).To(Succeed())
		s.CPUNode = n.Name
	}
	if s.CPUNode != "" {
		Eventually(ctx, func(g Gomega) {
			var n corev1.Node
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: s.CPUNode}, &n)).To(Succeed())
			g.Expect(nodeReady(&n)).To(BeTrue(), "node %s Ready", n.Name)
		}).Should(Succeed())
	}

	operator = startOperator(env.WorkDir(), env.KubeconfigPath())
	s.MetricsURL, s.OperatorLog = operator.metricsURL, operator.logPath
	connect(s)
	operator.waitReady(ctx)
	return s
}

func dirHasYAML(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	return len(m) > 0
}

// readNodes decodes e2e/kind/nodes.yaml.
func readNodes() []*corev1.Node {
	data, err := os.ReadFile(nodesFile())
	Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var nodes []*corev1.Node
	for {
		n := &corev1.Node{}
		if err := dec.Decode(n); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred(), nodesFile())
		}
		if n.Name != "" {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// operatorProcess is bin/manager running out of cluster.
type operatorProcess struct {
	cmd        *exec.Cmd
	logPath    string
	metricsURL string
	readyzURL  string
	done       chan struct{}
	err        error
}

// startOperator runs bin/manager like `make dev` does: a Configuration with
// the webhook server on 127.0.0.1, reached by URL (clientURL), self-signed
// certificates, and free ports for everything.
func startOperator(workDir, kubeconfig string) *operatorProcess {
	bin := filepath.Join(util.RepoRoot(), "bin", "manager")
	Expect(bin).To(BeAnExistingFile(), "build the operator first: make build")
	dir := filepath.Join(workDir, "operator")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())

	metrics, health, webhook := freeAddr(), freeAddr(), freeAddr()
	_, webhookPort, _ := net.SplitHostPort(webhook)
	config := fmt.Sprintf(`apiVersion: config.training-operator.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: true
  resourceNamespace: default
metrics:
  bindAddress: %s
health:
  probeBindAddress: %s
webhook:
  host: 127.0.0.1
  port: %s
  certDir: %s
  certManagement: self-signed
  clientURL: https://%s
`, metrics, health, webhookPort, filepath.Join(dir, "certs"), webhook)
	configPath := filepath.Join(dir, "config.yaml")
	Expect(os.WriteFile(configPath, []byte(config), 0o644)).To(Succeed())

	p := &operatorProcess{
		logPath:    filepath.Join(dir, "operator.log"),
		metricsURL: "http://" + metrics + "/metrics",
		readyzURL:  "http://" + health + "/readyz",
		done:       make(chan struct{}),
	}
	logFile, err := os.Create(p.logPath)
	Expect(err).NotTo(HaveOccurred())
	p.cmd = exec.Command(bin, "--config", configPath, "--kubeconfig", kubeconfig, "--zap-log-level=info")
	p.cmd.Env = append(os.Environ(), "MY_POD_NAMESPACE=default")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(spawn(p.cmd)).To(Succeed())
	go func() {
		p.err = p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	GinkgoWriter.Printf("e2e: operator pid %d, config %s, log %s\n", p.cmd.Process.Pid, configPath, p.logPath)
	return p
}

// waitReady polls /readyz (certificates and webhook server up).
func (p *operatorProcess) waitReady(ctx context.Context) {
	waitReadyz(ctx, "the operator", p.readyzURL, p.exited, func() error { return p.err }, p.logPath)
}

// waitReadyz polls a process's /readyz until 200, and stops at once with
// the tail of its log if the process exits.
func waitReadyz(ctx context.Context, what, url string, exited func() bool, exitErr func() error, logPath string) {
	Eventually(ctx, func(g Gomega) {
		if exited() {
			StopTrying(fmt.Sprintf("%s exited: %v\n%s", what, exitErr(), tailFile(logPath, 40))).Now()
		}
		resp, err := http.Get(url)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "readyz: %s", body)
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

func (p *operatorProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM and waits for a clean exit; after the timeout
// the process is killed and an error returned.
func (p *operatorProcess) terminate(timeout time.Duration) error {
	if p.exited() {
		return fmt.Errorf("the operator had already exited: %v", p.err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("the operator exited with %v after SIGTERM", p.err)
		}
		return nil
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("the operator did not exit within %s of SIGTERM", timeout)
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

// Pdeathsig fires when the OS thread that forked the child exits, so the
// operator is forked from a goroutine locked to its thread for good.
var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go func() {
			runtime.LockOSThread()
			for r := range spawnCh {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := spawnReq{cmd: cmd, err: make(chan error, 1)}
	spawnCh <- r
	return <-r.err
}

// findOperatorNamespace is $E2E_OPERATOR_NAMESPACE or the namespace of the
// Deployment "training-operator".
func findOperatorNamespace(ctx context.Context) string {
	if ns := os.Getenv(EnvOperatorNamespace); ns != "" {
		return ns
	}
	var list appsv1.DeploymentList
	Expect(k8s.List(ctx, &list)).To(Succeed())
	var found []string
	for _, d := range list.Items {
		if d.Name == OperatorName {
			found = append(found, d.Namespace)
		}
	}
	Expect(found).To(HaveLen(1), "exactly one Deployment %q expected (set %s)", OperatorName, EnvOperatorNamespace)
	return found[0]
}

// waitDeploymentReady waits until every replica of the installed operator
// is updated and Ready (its readiness probe is /readyz).
func waitDeploymentReady(ctx context.Context, ns string) {
	Eventually(ctx, func(g Gomega) {
		var d appsv1.Deployment
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: OperatorName}, &d)).To(Succeed())
		want := ptr.Deref(d.Spec.Replicas, 1)
		g.Expect(d.Status.ObservedGeneration).To(BeNumerically(">=", d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(want))
		g.Expect(d.Status.ReadyReplicas).To(Equal(want), "ready replicas of %s/%s", ns, OperatorName)
	}).WithTimeout(3 * time.Minute).Should(Succeed())
}

// findCPUNode returns a Ready, untainted node without GPUs (the CPU-only
// fake node of e2e/kind/nodes.yaml), or "".
func findCPUNode(ctx context.Context) string {
	var nodes corev1.NodeList
	Expect(k8s.List(ctx, &nodes)).To(Succeed())
	for _, n := range nodes.Items {
		if _, ok := n.Status.Allocatable[cluster.GPUResource]; !ok && nodeReady(&n) && len(n.Spec.Taints) == 0 {
			return n.Name
		}
	}
	return ""
}

// waitWebhookServing waits until admission goes through the operator's
// webhooks: a dry-run create comes back defaulted (mutating webhook) and an
// invalid one is denied by the validating webhook.
func waitWebhookServing(ctx context.Context) {
	Eventually(ctx, func(g Gomega) {
		ok := testjobs.MakePyTorchJob("webhook-probe", "default").Master(1).Obj()
		g.Expect(k8s.Create(ctx, ok, client.DryRunAll)).To(Succeed())
		g.Expect(ok.Spec.RunPolicy.CleanPodPolicy).NotTo(BeNil(), "the defaulting webhook did not run")

		bad := testjobs.MakePyTorchJob("webhook-probe", "default").Master(2).Obj()
		err := k8s.Create(ctx, bad, client.DryRunAll)
		g.Expect(err).To(HaveOccurred(), "the validating webhook did not deny replicas=2")
		g.Expect(err.Error()).To(ContainSubstring(`admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request`))
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
