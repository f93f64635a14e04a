// Package controller_test runs the job engine in-process against a real
// kube-apiserver, controller manager, scheduler and KWOK (harness/cluster).
package controller_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

var (
	env      *cluster.Cluster
	restCfg  *rest.Config
	k8s      client.Client
	operator *util.Operator
)

const (
	timeout  = 45 * time.Second
	interval = 200 * time.Millisecond
)

func TestController(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Job engine integration")
}

// The suite is one Go test to hack/testsummary: a spec that called Skip()
// must fail it here, or the skip would pass unseen.
var _ = ReportAfterSuite("no skipped specs", func(r Report) {
	if skipped := util.SkippedSpecs(r); len(skipped) > 0 {
		Fail(fmt.Sprintf("%d specs did not run on the local control plane, which has everything they need:\n%s",
			len(skipped), strings.Join(skipped, "\n")))
	}
})

var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = cluster.Start(ctx, cluster.Options{Nodes: 4, Logf: func(f string, a ...any) { GinkgoWriter.Printf(f+"\n", a...) }})
	Expect(err).NotTo(HaveOccurred())
	restCfg = env.RESTConfig()
	restCfg.QPS, restCfg.Burst = 500, 1000
	Expect(util.InstallCRDs(ctx, restCfg, filepath.Join(util.RepoRoot(), "config", "crd", "bases"))).To(Succeed())
	k8s, err = client.New(restCfg, client.Options{Scheme: util.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	operator, err = util.StartOperator(restCfg, util.DefaultConfiguration())
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if operator != nil {
		Expect(operator.Stop()).To(Succeed())
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// newNamespace creates a fresh namespace for one test.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "it-" + rand.String(6)}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// jobPods lists a job's pods sorted by name.
func jobPods(ctx context.Context, ns, job string) []corev1.Pod {
	var pl corev1.PodList
	Expect(k8s.List(ctx, &pl, client.InNamespace(ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job})).To(Succeed())
	sort.Slice(pl.Items, func(i, j int) bool { return pl.Items[i].Name < pl.Items[j].Name })
	return pl.Items
}

func podNames(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// livePodNames are the names of pods not being deleted.
func livePodNames(ctx context.Context, ns, job string) []string {
	var out []string
	for _, p := range jobPods(ctx, ns, job) {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

func getPyTorchJob(ctx context.Context, ns, name string) *kubeflowv1.PyTorchJob {
	var j kubeflowv1.PyTorchJob
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j)).To(Succeed())
	return &j
}

// conditionTypes renders conditions as "Type=Status" for readable matching.
func conditionTypes(st kubeflowv1.JobStatus) []string {
	out := make([]string, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		out = append(out, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	return out
}

func condition(st kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// eventuallyPyTorchCondition waits for a True condition and returns the job.
func eventuallyPyTorchCondition(ctx context.Context, ns, name string, t kubeflowv1.JobConditionType) *kubeflowv1.PyTorchJob {
	var job *kubeflowv1.PyTorchJob
	Eventually(func(g Gomega) {
		var j kubeflowv1.PyTorchJob
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j)).To(Succeed())
		c := condition(j.Status, t)
		g.Expect(c).NotTo(BeNil(), "conditions: %v", conditionTypes(j.Status))
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "conditions: %v", conditionTypes(j.Status))
		job = &j
	}, timeout, interval).Should(Succeed())
	return job
}

// waitRunning waits until every listed pod is Running.
func waitPodsRunning(ctx context.Context, ns, job string, n int) []corev1.Pod {
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		pods = nil
		for _, p := range jobPods(ctx, ns, job) {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				pods = append(pods, p)
			}
		}
		g.Expect(pods).To(HaveLen(n))
	}, timeout, interval).Should(Succeed())
	return pods
}

// finishPod makes KWOK end a running pod with the exit code.
func finishPod(ctx context.Context, ns, name string, code int) {
	var p corev1.Pod
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
	patch := client.MergeFrom(p.DeepCopy())
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[cluster.ExitCodeAnnotation] = fmt.Sprint(code)
	p.Annotations[cluster.ExitDelayAnnotation] = "0s"
	Expect(k8s.Patch(ctx, &p, patch)).To(Succeed())
}

func intstrFromInt(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

// eventNotes are the messages of the namespace's events with the reason.
func eventNotes(ctx context.Context, ns, reason string) []string {
	var el eventsv1.EventList
	Expect(k8s.List(ctx, &el, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range el.Items {
		if e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// eventCount sums the counts of the namespace's core/v1 Events with that
// reason: the recorder folds a repeated event into its Event's count.
func eventCount(ctx context.Context, ns, reason string) int32 {
	var n int32
	for _, e := range eventsOf(ctx, ns, reason) {
		n += max(e.Count, 1)
	}
	return n
}

// eventMessages lists the messages of the namespace's events of reason.
func eventMessages(ctx context.Context, ns, reason string) []string {
	var out []string
	for _, e := range eventsOf(ctx, ns, reason) {
		out = append(out, e.Message)
	}
	return out
}

// eventsOf lists the namespace's events of reason.
func eventsOf(ctx context.Context, ns, reason string) []corev1.Event {
	var el corev1.EventList
	Expect(k8s.List(ctx, &el, client.InNamespace(ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range el.Items {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// setHPAMaxReplicas drifts an HPA by hand, retrying conflicts with the
// controller manager's HPA controller, which writes the same object.
func setHPAMaxReplicas(ctx context.Context, key client.ObjectKey, n int32) {
	Eventually(func() error {
		var hpa autoscalingv2.HorizontalPodAutoscaler
		if err := k8s.Get(ctx, key, &hpa); err != nil {
			return err
		}
		hpa.Spec.MaxReplicas = n
		return k8s.Update(ctx, &hpa)
	}, timeout, interval).Should(Succeed())
}

// updatePyTorchJob applies a change to the latest job, retrying conflicts
// with the operator's status writes.
func updatePyTorchJob(ctx context.Context, ns, name string, change func(*kubeflowv1.PyTorchJob)) {
	Eventually(func() error {
		j := getPyTorchJob(ctx, ns, name)
		change(j)
		return k8s.Update(ctx, j)
	}, timeout, interval).Should(Succeed())
}

// watchPodIncarnations counts the distinct pods (UIDs) of that name from
// now on, the current one included, until ctx ends.
func watchPodIncarnations(ctx context.Context, ns, name string) func() int {
	uids := watchPodUIDs(ctx, ns, client.MatchingFields{"metadata.name": name})
	return func() int { return len(uids()) }
}
