package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/harness/operatorproc"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// Scheduler profiles of the local cluster: pods naming them are placed like
// default-scheduler pods (no gang semantics), so gang jobs progress.
const (
	volcanoScheduler = "volcano"
	pluginsScheduler = "scheduler-plugins-scheduler"
)

// nodesFile holds the fake nodes shared with the kind path: the GPU nodes
// mirror harness/cluster's, plus a CPU-only node.
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
	s.MetricsURL, s.OperatorLog = operator.metricsURL, operator.LogPath()
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
	*childproc.Process
	metricsURL string
	readyzURL  string
}

// startOperator runs bin/manager like `make dev` does: a Configuration with
// the webhook server on 127.0.0.1, reached by URL (clientURL), self-signed
// certificates, and free ports for everything; change edits it (e.g. the
// kueue settings).
func startOperator(workDir, kubeconfig string, change ...func(*configv1alpha1.Configuration)) *operatorProcess {
	bin := filepath.Join(util.RepoRoot(), "bin", "manager")
	Expect(bin).To(BeAnExistingFile(), "build the operator first: make build")
	dir := filepath.Join(workDir, "operator")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())

	ports := freePorts(3)
	metrics, health := localAddr(ports[0]), localAddr(ports[1])
	config := operatorproc.Local(ports[2], filepath.Join(dir, "certs"), "")
	config.LeaderElection.LeaderElect = true
	config.LeaderElection.ResourceNamespace = "default"
	config.Metrics.BindAddress = metrics
	config.Health.ProbeBindAddress = health
	for _, c := range change {
		c(config)
	}
	configPath := filepath.Join(dir, "config.yaml")
	Expect(operatorproc.Write(configPath, config)).To(Succeed())
	proc, err := childproc.Start(childproc.Spec{
		Name:    "the operator",
		Bin:     bin,
		Args:    []string{"--config", configPath, "--kubeconfig", kubeconfig, "--zap-log-level=info"},
		Env:     []string{"MY_POD_NAMESPACE=default"},
		LogPath: filepath.Join(dir, "operator.log"),
	})
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("e2e: operator pid %d, config %s, log %s\n", proc.Pid(), configPath, proc.LogPath())
	return &operatorProcess{
		Process:    proc,
		metricsURL: "http://" + metrics + "/metrics",
		readyzURL:  "http://" + health + "/readyz",
	}
}

// waitReady polls /readyz (certificates and webhook server up).
func (p *operatorProcess) waitReady(ctx context.Context) {
	Expect(p.WaitReady(ctx, p.readyzURL, readyTimeout, readyPoll)).To(Succeed())
}

// The readiness wait of the processes the suite starts.
const (
	readyTimeout = 2 * time.Minute
	readyPoll    = 250 * time.Millisecond
)

// terminate sends SIGTERM and waits for a clean exit; after the timeout
// the process is killed and an error returned.
func (p *operatorProcess) terminate(timeout time.Duration) error {
	if p.Exited() {
		return fmt.Errorf("the operator had already exited: %v", p.Err())
	}
	if p.Stop(timeout) {
		return fmt.Errorf("the operator did not exit within %s of SIGTERM", timeout)
	}
	if err := p.Err(); err != nil {
		return fmt.Errorf("the operator exited with %v after SIGTERM", err)
	}
	return nil
}

// freePorts returns n distinct free ports on 127.0.0.1.
func freePorts(n int) []int {
	ports, err := childproc.FreePorts(n)
	Expect(err).NotTo(HaveOccurred())
	return ports
}

func localAddr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

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
