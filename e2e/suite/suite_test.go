// Package suite is the end-to-end suite: the operator runs against a real
// control plane with fake GPU nodes, and jobs are driven the way users drive
// them (kubectl and the API).
//
// Two ways to run it:
//
//   - Local (default, `make e2e`): process 1 starts the local control plane of
//     harness/cluster (4 KWOK nodes x 8 GPUs plus one CPU-only node from
//     e2e/kind/nodes.yaml), installs the CRDs (and the PodGroup CRDs of
//     config/crd/external), and runs bin/manager out of cluster with webhooks
//     reached by URL.
//   - Any cluster (`make e2e-kind`): E2E_KUBECONFIG names a cluster where the
//     operator is already installed (helm) in E2E_OPERATOR_NAMESPACE (default:
//     wherever the Deployment "training-operator" is); nothing is started.
//
// The Kueue specs (kueue_test.go) start Kueue themselves in local mode (from
// the control-plane cache) and need it installed otherwise; they skip when
// it is missing.
//
// Either way no spec runs before the operator is Ready and a dry-run create
// has passed through its webhooks. Every spec works in its own namespace, so
// specs run in parallel (ginkgo --procs). On failure the namespace's jobs,
// pods, services and events plus the operator log are written to
// _output/e2e-artifacts (or $ARTIFACTS).
package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

const (
	// EnvKubeconfig selects an existing cluster with the operator installed.
	EnvKubeconfig = "E2E_KUBECONFIG"
	// EnvOperatorNamespace is the namespace of the installed operator.
	EnvOperatorNamespace = "E2E_OPERATOR_NAMESPACE"
	// EnvArtifacts overrides where failure artifacts go (CI convention).
	EnvArtifacts = "ARTIFACTS"

	// OperatorName is the Deployment (and Service) name, as in v1.
	OperatorName = "training-operator"
)

// shared is what process 1 hands to every ginkgo process.
type shared struct {
	Kubeconfig string `json:"kubeconfig"`
	// Local is true when the suite started the control plane and operator.
	Local bool `json:"local"`
	// MetricsURL is the operator's metrics endpoint (local mode only).
	MetricsURL string `json:"metricsURL,omitempty"`
	// OperatorLog is the operator's log file (local mode only).
	OperatorLog string `json:"operatorLog,omitempty"`
	// OperatorNamespace holds the installed operator (external mode only).
	OperatorNamespace string `json:"operatorNamespace,omitempty"`
	// Artifacts is the directory for failure artifacts.
	Artifacts string `json:"artifacts"`
	// Gang is set when the gang-scheduling specs can run: the operator has
	// the gang feature, the PodGroup CRDs are installed and the scheduler has
	// the "volcano" and "scheduler-plugins-scheduler" profiles.
	Gang bool `json:"gang"`
	// CPUNode is the name of a schedulable node without GPUs, if any.
	CPUNode string `json:"cpuNode,omitempty"`
}

var (
	// Set on every process.
	cfg       shared
	restCfg   *rest.Config
	k8s       client.Client
	clientset kubernetes.Interface

	// Process 1 only (local mode).
	env      *cluster.Cluster
	operator *operatorProcess
	setupOK  bool
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	// Eventually(ctx, ...) keeps these defaults instead of polling until the
	// spec's context ends.
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(250 * time.Millisecond)
	SetDefaultConsistentlyDuration(3 * time.Second)
	SetDefaultConsistentlyPollingInterval(250 * time.Millisecond)
	RunSpecs(t, "training-operator e2e")
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	begin := time.Now()
	s := shared{Artifacts: artifactsDir()}
	cfg = s
	// Artifacts of an earlier run would be mistaken for this run's.
	Expect(os.RemoveAll(s.Artifacts)).To(Succeed())

	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		s.Kubeconfig = kc
		connect(s)
		s.OperatorNamespace = findOperatorNamespace(ctx)
		waitDeploymentReady(ctx, s.OperatorNamespace)
		s.CPUNode = findCPUNode(ctx)
	} else {
		s = startLocal(ctx, s)
	}
	waitWebhookServing(ctx)
	setupOK = true
	GinkgoWriter.Printf("e2e: operator ready after %s (local=%v, gang specs=%v)\n", time.Since(begin).Round(10*time.Millisecond), s.Local, s.Gang)
	data, err := json.Marshal(s)
	Expect(err).NotTo(HaveOccurred())
	return data
}, func(ctx SpecContext, data []byte) {
	var s shared
	Expect(json.Unmarshal(data, &s)).To(Succeed())
	connect(s)
}, NodeTimeout(5*time.Minute))

var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	// Process 1, after every process is done: stop the operator (it must
	// exit cleanly on SIGTERM), keep logs if anything failed, tear down.
	var stopErr error
	if operator != nil {
		stopErr = operator.terminate(30 * time.Second)
	}
	if !setupOK || stopErr != nil || hasArtifacts() {
		saveSuiteArtifacts(ctx)
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
	Expect(stopErr).NotTo(HaveOccurred(), "the operator must exit cleanly on SIGTERM")
}, NodeTimeout(2*time.Minute))

// ReportAfterSuite prints every spec's duration, slowest first, to help
// keep the suite lean.
var _ = ReportAfterSuite("spec durations", func(r Report) {
	type row struct {
		d    time.Duration
		name string
		st   string
	}
	var rows []row
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		rows = append(rows, row{s.RunTime, s.FullText(), s.State.String()})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].d > rows[j].d })
	var b strings.Builder
	fmt.Fprintf(&b, "\nspec durations (total %s):\n", r.RunTime.Round(100*time.Millisecond))
	for _, x := range rows {
		fmt.Fprintf(&b, "  %7.1fs  %-8s %s\n", x.d.Seconds(), x.st, x.name)
	}
	fmt.Fprint(os.Stdout, b.String())
})

// connect builds the clients of this process.
func connect(s shared) {
	cfg = s
	var err error
	restCfg, err = clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	Expect(err).NotTo(HaveOccurred(), "kubeconfig %s", s.Kubeconfig)
	restCfg.QPS, restCfg.Burst = 50, 100
	k8s, err = client.New(restCfg, client.Options{Scheme: util.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	clientset, err = kubernetes.NewForConfig(restCfg)
	Expect(err).NotTo(HaveOccurred())
}

// artifactsDir is $ARTIFACTS or <repo>/_output/e2e-artifacts.
func artifactsDir() string {
	if d := os.Getenv(EnvArtifacts); d != "" {
		return filepath.Join(d, "e2e-artifacts")
	}
	return filepath.Join(util.RepoRoot(), "_output", "e2e-artifacts")
}
