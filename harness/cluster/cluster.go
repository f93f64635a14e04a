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

// Package cluster starts a real, local Kubernetes control plane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler) plus KWOK, which
// simulates GPU nodes and the lifecycle of the pods placed on them. Nothing
// runs in containers; every component is a child process bound to 127.0.0.1
// on free ports, so several clusters can run side by side.
//
// The binaries come from hack/controlplane.sh (make controlplane).
package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/seed-d8a409e9/training-operator/harness/childproc"
)

const (
	// ExitCodeAnnotation on a Running pod makes KWOK finish it with this exit
	// code: "0" gives phase Succeeded, anything else phase Failed. It works in
	// pod templates too, so operator-created pods inherit it.
	ExitCodeAnnotation = "pod-exit.stage.kwok.x-k8s.io/exit-code"
	// ExitDelayAnnotation is an optional Go duration ("5s") counted from the
	// time the pod is Running before ExitCodeAnnotation takes effect
	// (default 1s).
	ExitDelayAnnotation = "pod-exit.stage.kwok.x-k8s.io/delay"

	// GPUResource is the extended resource the fake nodes advertise.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
	// GPUProduct is the value of the nvidia.com/gpu.product label of fake nodes.
	GPUProduct = "NVIDIA-H100-80GB-HBM3"
	// NodeNamePrefix is the name prefix of the fake GPU nodes (gpu-node-0, ...).
	NodeNamePrefix = "gpu-node-"
)

// kwokStages is the KWOK Stage configuration: kwok v0.8.0's default stages
// plus the annotation-driven pod-exit stage.
//
//go:embed kwok-stages.yaml
var kwokStages string

// requiredBinaries must exist in Options.BinDir.
var requiredBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// Options configures Start. The zero value is usable.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok. Default: $KUBEBUILDER_ASSETS if it has
	// kube-apiserver, else the output of `hack/controlplane.sh --print-dir`
	// (repository root found by walking up to go.mod).
	BinDir string
	// WorkDir holds certificates, kubeconfig, etcd data and logs. Default: a
	// new temporary directory, removed by Stop. A given WorkDir is kept, but
	// etcd data left in it by an earlier run is removed on Start.
	WorkDir string
	// Nodes is the number of fake GPU nodes (default 2).
	Nodes int
	// GPUsPerNode is the nvidia.com/gpu capacity of each node (default 8).
	GPUsPerNode int
	// SchedulerNames are extra kube-scheduler profiles besides
	// default-scheduler (e.g. "volcano", "scheduler-plugins-scheduler").
	SchedulerNames []string
	// FeatureGates is passed as --feature-gates to kube-apiserver,
	// kube-controller-manager and kube-scheduler (e.g. "GenericWorkload=true").
	FeatureGates string
	// RuntimeConfig is passed as --runtime-config to kube-apiserver.
	RuntimeConfig string
	// APIServerArgs are more kube-apiserver flags, after the cluster's own.
	APIServerArgs []string
	// KwokPodParallelism is how many pod stages (ready, exit, delete) KWOK
	// plays at once; 0 keeps KWOK's default of 4. With 20,000 pods, KWOK's
	// four workers, not the CPU, paced the whole cluster.
	KwokPodParallelism int
	// Logf, if set, receives progress messages.
	Logf func(format string, args ...any)
}

// Cluster is a running local control plane. Stop it when done.
type Cluster struct {
	opts           Options
	binDir         string
	workDir        string
	removeWorkDir  bool
	kubeconfigPath string
	restConfig     *rest.Config
	pki            *pki
	ports          ports

	// procs in start order: etcd, kube-apiserver, then the rest.
	procs []*childproc.Process

	mu       sync.Mutex
	nextNode int
	stopped  bool
	stopErr  error
	restarts int // component restarts by fault injection (faults.go), numbers kept logs
}

type ports struct {
	etcdClient, etcdPeer, etcdMetrics int
	apiserver, kcm, scheduler, kwok   int
}

// Start brings up etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok, creates opts.Nodes fake GPU nodes and returns
// once the API server is ready, the controller manager has created the
// default ServiceAccount and every node is Ready. On error everything that
// was started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Cluster, retErr error) {
	begin := time.Now()
	if opts.Nodes <= 0 {
		opts.Nodes = 2
	}
	if opts.GPUsPerNode <= 0 {
		opts.GPUsPerNode = 8
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	c := &Cluster{opts: opts}

	var err error
	if c.binDir, err = resolveBinDir(opts.BinDir); err != nil {
		return nil, err
	}

	if opts.WorkDir == "" {
		if c.workDir, err = os.MkdirTemp("", "kwok-cluster-"); err != nil {
			return nil, err
		}
		c.removeWorkDir = true
	} else {
		if c.workDir, err = filepath.Abs(opts.WorkDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(c.workDir, 0o755); err != nil {
			return nil, err
		}
	}
	// Always start from an empty etcd: a stale data dir would carry objects
	// signed by an old CA and service-account key.
	if err := os.RemoveAll(c.etcdDir()); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.logDir(), 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if retErr == nil {
			return
		}
		c.stopProcesses()
		_ = os.RemoveAll(c.etcdDir())
		if c.removeWorkDir {
			retErr = fmt.Errorf("%w\n(logs kept in %s)", retErr, c.logDir())
		}
	}()

	if c.pki, err = newPKI(filepath.Join(c.workDir, "pki")); err != nil {
		return nil, fmt.Errorf("generate certificates: %w", err)
	}
	if err := os.WriteFile(c.stagesPath(), []byte(kwokConfig(opts.KwokPodParallelism)), 0o644); err != nil {
		return nil, err
	}

	// Free ports are picked, released and then bound by the children, so
	// another process can grab one in between; retry with new ports then.
	const attempts = 3
	for attempt := 1; ; attempt++ {
		err = c.boot(ctx, begin)
		if err == nil {
			return c, nil
		}
		if attempt == attempts || ctx.Err() != nil || !c.portConflict() {
			return nil, err
		}
		opts.Logf("cluster: port conflict, retrying with new ports: %v", err)
		c.stopProcesses()
		c.procs = nil
		if err := os.RemoveAll(c.etcdDir()); err != nil {
			return nil, err
		}
	}
}

// boot picks ports, writes the kubeconfig and component configs, starts all
// processes and waits for the cluster to be usable.
func (c *Cluster) boot(ctx context.Context, begin time.Time) error {
	opts := c.opts
	p, err := childproc.FreePorts(7)
	if err != nil {
		return err
	}
	c.ports = ports{etcdClient: p[0], etcdPeer: p[1], etcdMetrics: p[2], apiserver: p[3], kcm: p[4], scheduler: p[5], kwok: p[6]}
	c.restConfig = &rest.Config{
		Host: fmt.Sprintf("https://127.0.0.1:%d", c.ports.apiserver),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.pki.caCert,
			CertData: c.pki.adminCert,
			KeyData:  c.pki.adminKey,
		},
	}
	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	if err := c.writeSchedulerConfig(); err != nil {
		return err
	}
	opts.Logf("cluster: binaries %s, workdir %s, apiserver %s", c.binDir, c.workDir, c.restConfig.Host)

	// etcd
	if err := c.start("etcd", c.etcdArgs(), nil); err != nil {
		return err
	}
	if err := c.waitFor(ctx, 30*time.Second, "etcd /health", c.etcdHealthy); err != nil {
		return err
	}
	opts.Logf("cluster: etcd up after %s", since(begin))

	// kube-apiserver
	if err := c.start("kube-apiserver", c.apiserverArgs(), nil); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.clientConfig())
	if err != nil {
		return err
	}
	readyz := func(ctx context.Context) (bool, error) {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	}
	if err := c.waitFor(ctx, 2*time.Minute, "kube-apiserver /readyz", readyz); err != nil {
		return err
	}
	opts.Logf("cluster: kube-apiserver ready after %s", since(begin))

	// The rest needs a ready apiserver (kwok gives up after ~15 s otherwise).
	if err := c.start("kube-controller-manager", c.kcmArgs(), nil); err != nil {
		return err
	}
	if err := c.start("kube-scheduler", c.schedulerArgs(), nil); err != nil {
		return err
	}
	kwokHome := c.kwokHome()
	if err := os.MkdirAll(kwokHome, 0o755); err != nil {
		return err
	}
	if err := c.start("kwok", c.kwokArgs(), []string{"HOME=" + kwokHome}); err != nil {
		return err
	}

	c.mu.Lock()
	c.nextNode = 0
	c.mu.Unlock()
	names, err := c.createNodes(ctx, cs, opts.Nodes)
	if err != nil {
		return err
	}
	defaultSA := func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}
	if err := c.waitFor(ctx, time.Minute, "ServiceAccount default/default (kube-controller-manager)", defaultSA); err != nil {
		return err
	}
	if err := c.waitFor(ctx, time.Minute, "kube-scheduler /healthz", c.schedulerHealthy); err != nil {
		return err
	}
	if err := c.waitNodesReady(ctx, cs, names); err != nil {
		return err
	}
	opts.Logf("cluster ready in %s (%d nodes x %d GPUs, kubeconfig %s)", since(begin), opts.Nodes, opts.GPUsPerNode, c.kubeconfigPath)
	return nil
}

// portConflict reports whether a component log mentions a port taken
// by someone else.
func (c *Cluster) portConflict() bool {
	for _, p := range c.procs {
		if data, err := os.ReadFile(p.LogPath()); err == nil && bytes.Contains(data, []byte("address already in use")) {
			return true
		}
	}
	return false
}

// RESTConfig returns a copy of the admin (system:masters) client config.
// QPS and Burst are left at client-go defaults; raise them if needed.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restConfig) }

// PIDs returns the process ID of each running component by name
// (etcd, kube-apiserver, ...), for resource accounting such as make bench's.
func (c *Cluster) PIDs() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make(map[string]int, len(c.procs))
	for _, p := range c.procs {
		if !p.Exited() {
			pids[p.Name()] = p.Pid()
		}
	}
	return pids
}

// KubeconfigPath returns the path of the admin kubeconfig (WorkDir/kubeconfig).
func (c *Cluster) KubeconfigPath() string { return c.kubeconfigPath }

// WorkDir returns the directory with certificates, kubeconfig, etcd data and logs.
func (c *Cluster) WorkDir() string { return c.workDir }

// BinDir returns the directory the control-plane binaries were taken from.
func (c *Cluster) BinDir() string { return c.binDir }

// Stop terminates all processes (SIGTERM, SIGKILL after 10 s) and removes
// the work directory if Start created it. It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.stopErr
	}
	c.stopped = true
	begin := time.Now()
	c.stopProcesses()
	if c.removeWorkDir {
		c.stopErr = os.RemoveAll(c.workDir)
	}
	c.opts.Logf("cluster: stopped in %s", since(begin))
	return c.stopErr
}

// CreateNodes adds n more fake GPU nodes and waits until they are Ready.
func (c *Cluster) CreateNodes(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	cs, err := kubernetes.NewForConfig(c.clientConfig())
	if err != nil {
		return err
	}
	names, err := c.createNodes(ctx, cs, n)
	if err != nil {
		return err
	}
	return c.waitNodesReady(ctx, cs, names)
}

// stopProcesses stops clients of the apiserver first, then the apiserver,
// then etcd, so that nobody waits on a dead dependency.
func (c *Cluster) stopProcesses() {
	var clients, apiserver, etcd []*childproc.Process
	for _, p := range c.procs {
		switch p.Name() {
		case "etcd":
			etcd = append(etcd, p)
		case "kube-apiserver":
			apiserver = append(apiserver, p)
		default:
			clients = append(clients, p)
		}
	}
	for _, tier := range [][]*childproc.Process{clients, apiserver, etcd} {
		childproc.StopAll(tier, 10*time.Second)
	}
}

func (c *Cluster) logDir() string { return filepath.Join(c.workDir, "logs") }

// kwokHome keeps ~/.kwok/kwok.yaml out of kwok's configuration.
func (c *Cluster) kwokHome() string { return filepath.Join(c.workDir, "kwok-home") }
func (c *Cluster) etcdDir() string  { return filepath.Join(c.workDir, "etcd") }

func (c *Cluster) bin(name string) string { return filepath.Join(c.binDir, name) }

func (c *Cluster) start(name string, args, env []string) error {
	p, err := startProcess(name, c.bin(name), args, c.logDir(), env)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// clientConfig is the config used by the package itself (higher rate limits).
func (c *Cluster) clientConfig() *rest.Config {
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 200, 400
	cfg.Timeout = 10 * time.Second
	return cfg
}

// checkProcesses returns an error if a component has exited.
func (c *Cluster) checkProcesses() error {
	for _, p := range c.procs {
		if p.Exited() {
			return exitError(p)
		}
	}
	return nil
}

// waitFor polls cond until it returns true, a component exits, ctx ends or
// timeout passes.
func (c *Cluster) waitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := c.checkProcesses(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

func (c *Cluster) etcdHealthy(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/health", c.ports.etcdClient), nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

var insecureClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // local self-signed health endpoint
}

func (c *Cluster) schedulerHealthy(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports.scheduler), nil)
	if err != nil {
		return false, err
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

func (c *Cluster) writeKubeconfig() error {
	c.kubeconfigPath = filepath.Join(c.workDir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{
		Server:                   c.restConfig.Host,
		CertificateAuthorityData: c.pki.caCert,
	}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.pki.adminCert,
		ClientKeyData:         c.pki.adminKey,
	}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "local"
	return clientcmd.WriteToFile(*kc, c.kubeconfigPath)
}

// kwokConfig is KWOK's --config: the stages, and its options when some
// differ from KWOK's defaults. KWOK does not default the options of a
// KwokConfiguration it reads from a file (a parallelism of 0 is an error),
// so the document states each defaulted option at kwok v0.8.0's default;
// the command line's flags still override them.
func kwokConfig(podParallelism int) string {
	if podParallelism <= 0 {
		return kwokStages
	}
	return kwokStages + fmt.Sprintf(`---
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  enableDebuggingHandlers: true
  enableContentionProfiling: false
  enableProfilingHandler: true
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
  podsOnNodeSyncParallelism: 1
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
  podPlayStageParallelism: %d
`, podParallelism)
}

func (c *Cluster) stagesPath() string { return filepath.Join(c.workDir, "kwok-stages.yaml") }
func (c *Cluster) schedulerConfigPath() string {
	return filepath.Join(c.workDir, "kube-scheduler.yaml")
}

func (c *Cluster) writeSchedulerConfig() error {
	var b strings.Builder
	b.WriteString("apiVersion: kubescheduler.config.k8s.io/v1\n")
	b.WriteString("kind: KubeSchedulerConfiguration\n")
	b.WriteString("clientConnection:\n")
	fmt.Fprintf(&b, "  kubeconfig: %s\n", strconv.Quote(c.kubeconfigPath))
	b.WriteString("  qps: 1000\n  burst: 2000\n")
	b.WriteString("leaderElection:\n  leaderElect: false\n")
	b.WriteString("profiles:\n- schedulerName: default-scheduler\n")
	seen := map[string]bool{"default-scheduler": true}
	for _, n := range c.opts.SchedulerNames {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		fmt.Fprintf(&b, "- schedulerName: %s\n", strconv.Quote(n))
	}
	return os.WriteFile(c.schedulerConfigPath(), []byte(b.String()), 0o644)
}

func (c *Cluster) etcdArgs() []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdPeer)
	return []string{
		"--name=node0",
		"--data-dir=" + c.etcdDir(),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=node0=" + peer,
		"--initial-cluster-state=new",
		fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", c.ports.etcdMetrics),
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

func (c *Cluster) apiserverArgs() []string {
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.ports.etcdClient),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports.apiserver),
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=127.96.0.0/16",
		"--tls-cert-file=" + c.pki.servingCertPath(),
		"--tls-private-key-file=" + c.pki.servingKeyPath(),
		"--client-ca-file=" + c.pki.caCertPath(),
		"--service-account-key-file=" + c.pki.saPubPath(),
		"--service-account-signing-key-file=" + c.pki.saKeyPath(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
	}
	if c.opts.FeatureGates != "" {
		args = append(args, "--feature-gates="+c.opts.FeatureGates)
	}
	if c.opts.RuntimeConfig != "" {
		args = append(args, "--runtime-config="+c.opts.RuntimeConfig)
	}
	return append(args, c.opts.APIServerArgs...)
}

func (c *Cluster) kcmArgs() []string {
	args := []string{
		"--kubeconfig=" + c.kubeconfigPath,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports.kcm),
		"--leader-elect=false",
		"--controllers=*",
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
		"--root-ca-file=" + c.pki.caCertPath(),
		"--service-account-private-key-file=" + c.pki.saKeyPath(),
		"--use-service-account-credentials=false",
		"--cluster-signing-cert-file=" + c.pki.caCertPath(),
		"--cluster-signing-key-file=" + c.pki.path("ca.key"),
	}
	if c.opts.FeatureGates != "" {
		args = append(args, "--feature-gates="+c.opts.FeatureGates)
	}
	return args
}

func (c *Cluster) schedulerArgs() []string {
	args := []string{
		"--config=" + c.schedulerConfigPath(),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports.scheduler),
	}
	if c.opts.FeatureGates != "" {
		args = append(args, "--feature-gates="+c.opts.FeatureGates)
	}
	return args
}

func (c *Cluster) kwokArgs() []string {
	return []string{
		"--kubeconfig=" + c.kubeconfigPath,
		"--config=" + c.stagesPath(),
		"--manage-all-nodes=true",
		"--node-ip=127.0.0.1",
		"--node-name=localhost",
		// Pod IPs must not be loopback: the apiserver rejects loopback
		// Endpoints/EndpointSlices and the controller manager would retry forever.
		"--cidr=10.244.0.0/16",
		fmt.Sprintf("--node-port=%d", c.ports.kwok),
		fmt.Sprintf("--server-address=127.0.0.1:%d", c.ports.kwok),
		"--node-lease-duration-seconds=40",
	}
}

// resolveBinDir picks and checks the directory with the binaries.
func resolveBinDir(dir string) (string, error) {
	source := "Options.BinDir"
	if dir == "" {
		if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" && isExecutable(filepath.Join(assets, "kube-apiserver")) {
			dir, source = assets, "$KUBEBUILDER_ASSETS"
		}
	}
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", fmt.Errorf("control-plane binaries: no Options.BinDir or $KUBEBUILDER_ASSETS, and %v; run `make controlplane` (hack/controlplane.sh) and pass its directory", err)
		}
		out, err := exec.Command(filepath.Join(root, "hack", "controlplane.sh"), "--print-dir").Output()
		if err != nil {
			return "", fmt.Errorf("control-plane binaries: `hack/controlplane.sh --print-dir` failed: %v; run `make controlplane`", err)
		}
		dir, source = strings.TrimSpace(string(out)), "hack/controlplane.sh --print-dir"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	var missing []string
	for _, b := range requiredBinaries {
		if !isExecutable(filepath.Join(abs, b)) {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("control-plane binaries missing in %s (from %s): %s; run `make controlplane` (hack/controlplane.sh) to build them",
			abs, source, strings.Join(missing, ", "))
	}
	return abs, nil
}

// repoRoot walks up from the working directory to the directory with go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "hack", "controlplane.sh")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no repository root (go.mod with hack/controlplane.sh) above the working directory")
		}
		dir = parent
	}
}

func since(t time.Time) string {
	return time.Since(t).Round(10 * time.Millisecond).String()
}

// ignoreAlreadyExists turns AlreadyExists into nil.
func ignoreAlreadyExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
