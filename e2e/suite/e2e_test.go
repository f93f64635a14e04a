// Package suite is the end-to-end suite: the built operator binary runs
// against a real control plane with fake GPU nodes (e2e/cluster), and jobs
// are driven the way users drive them (kubectl and the API).
package suite

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/e2e/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

var (
	env         *cluster.Cluster
	k8s         client.Client
	operatorCmd *exec.Cmd
	operatorLog *os.File
	metricsAddr string
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "training-operator e2e")
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	env, err = cluster.Start(ctx, cluster.Options{Nodes: 4, Logf: func(f string, a ...any) { GinkgoWriter.Printf(f+"\n", a...) }})
	Expect(err).NotTo(HaveOccurred())
	Expect(util.InstallCRDs(ctx, env.RESTConfig(), filepath.Join(util.RepoRoot(), "config", "crd", "bases"))).To(Succeed())
	k8s, err = client.New(env.RESTConfig(), client.Options{Scheme: util.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	bin := filepath.Join(util.RepoRoot(), "bin", "manager")
	Expect(bin).To(BeAnExistingFile(), "build the operator first: make build")
	metricsAddr = freeAddr()
	operatorLog, err = os.Create(filepath.Join(env.WorkDir(), "operator.log"))
	Expect(err).NotTo(HaveOccurred())
	operatorCmd = exec.Command(bin, "--kubeconfig", env.KubeconfigPath(),
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", freeAddr(),
		"--leader-elect=true", "--zap-log-level=info")
	operatorCmd.Env = append(os.Environ(), "MY_POD_NAMESPACE=default")
	operatorCmd.Stdout, operatorCmd.Stderr = operatorLog, operatorLog
	operatorCmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(operatorCmd.Start()).To(Succeed())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if operatorCmd != nil && operatorCmd.ProcessState == nil {
		_ = operatorCmd.Process.Kill()
		_, _ = operatorCmd.Process.Wait()
	}
	if CurrentSpecReport().Failed() && operatorLog != nil {
		b, _ := os.ReadFile(operatorLog.Name())
		GinkgoWriter.Printf("operator log:\n%s\n", tail(string(b), 80))
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kubectl runs the system kubectl against the cluster, if installed.
func kubectl(args ...string) (string, bool) {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return "", false
	}
	out, err := exec.Command(path, append([]string{"--kubeconfig", env.KubeconfigPath()}, args...)...).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	return string(out), true
}

var _ = Describe("the operator binary", Ordered, func() {
	It("runs the seed PyTorchJob to Succeeded and kubectl shows it", func(ctx context.Context) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-seed"}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		job := util.SeedPyTorchJob(ns.Name)
		for _, spec := range job.Spec.PyTorchReplicaSpecs {
			spec.Template.Annotations = map[string]string{cluster.ExitCodeAnnotation: "0", cluster.ExitDelayAnnotation: "3s"}
		}
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(func(g Gomega) {
			var pl corev1.PodList
			g.Expect(k8s.List(ctx, &pl, client.InNamespace(ns.Name))).To(Succeed())
			g.Expect(pl.Items).To(HaveLen(4))
			for _, p := range pl.Items {
				g.Expect(p.Spec.NodeName).To(HavePrefix(cluster.NodeNamePrefix), "scheduled by the real scheduler")
			}
		}, time.Minute, 250*time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			var j kubeflowv1.PyTorchJob
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(job), &j)).To(Succeed())
			g.Expect(j.Status.Conditions).NotTo(BeEmpty())
			g.Expect(j.Status.Conditions[len(j.Status.Conditions)-1].Type).To(Equal(kubeflowv1.JobSucceeded))
		}, time.Minute, 250*time.Millisecond).Should(Succeed())
		if out, ok := kubectl("get", "pytorchjobs", "-n", ns.Name); ok {
			GinkgoWriter.Println(out)
			Expect(out).To(MatchRegexp(`(?m)^NAME\s+STATE\s+AGE`))
			Expect(out).To(MatchRegexp(`(?m)^pytorch-mnist\s+Succeeded\s+`))
		}
	})

	It("serves v1's job metrics", func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/metrics", metricsAddr))
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		Expect(string(b)).To(ContainSubstring(`training_operator_jobs_created_total{framework="pytorch",job_namespace="e2e-seed"} 1`))
		Expect(string(b)).To(ContainSubstring(`training_operator_jobs_successful_total{framework="pytorch",job_namespace="e2e-seed"} 1`))
	})

	It("exits cleanly on SIGTERM", func() {
		Expect(operatorCmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- operatorCmd.Wait() }()
		Eventually(done, 30*time.Second).Should(Receive(BeNil()))
	})
})
