package suite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/kinds"
)

// allKinds are the operator's job kinds, for artifact dumps.
var allKinds = kinds.Names()

// exitAfter are the KWOK annotations that finish a Running pod with code
// after delay.
func exitAfter(code int, delay string) map[string]string {
	return map[string]string{cluster.ExitCodeAnnotation: strconv.Itoa(code), cluster.ExitDelayAnnotation: delay}
}

// newNamespace creates a namespace for one spec and waits for its default
// ServiceAccount (pods are refused without it). On failure the namespace's
// objects are saved as artifacts; then the namespace is deleted.
func newNamespace(ctx context.Context, prefix string) string {
	return newNamespaceWithLabels(ctx, prefix, nil)
}

// newNamespaceWithLabels is newNamespace with extra labels, set at creation
// so that admission already sees them on the namespace's first objects.
func newNamespaceWithLabels(ctx context.Context, prefix string, labels map[string]string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "e2e-" + prefix + "-",
		Labels:       map[string]string{"e2e.training-operator.kubeflow.org/suite": "true"},
	}}
	for k, v := range labels {
		ns.Labels[k] = v
	}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			dumpNamespace(ctx, ns.Name)
		}
		err := k8s.Delete(ctx, ns)
		Expect(client.IgnoreNotFound(err)).To(Succeed())
	}, NodeTimeout(time.Minute))
	Eventually(ctx, func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
	}).Should(Succeed())
	return ns.Name
}

func jobGVK(kind string) schema.GroupVersionKind { return kubeflowv1.GroupVersion.WithKind(kind) }

// jobStatus reads the status of a job of any kind.
func jobStatus(ctx context.Context, kind, ns, name string) (*kubeflowv1.JobStatus, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(jobGVK(kind))
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil, err
	}
	st := &kubeflowv1.JobStatus{}
	if m, ok, _ := unstructured.NestedMap(u.Object, "status"); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func findCondition(st *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func isTrue(st *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) bool {
	c := findCondition(st, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// waitFor waits until the job has condition t True and returns its status.
// It stops early when the job finishes the other way.
func waitFor(ctx context.Context, kind, ns, name string, t kubeflowv1.JobConditionType) *kubeflowv1.JobStatus {
	var st *kubeflowv1.JobStatus
	Eventually(ctx, func(g Gomega) {
		var err error
		st, err = jobStatus(ctx, kind, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		for _, terminal := range []kubeflowv1.JobConditionType{kubeflowv1.JobSucceeded, kubeflowv1.JobFailed} {
			if terminal != t && isTrue(st, terminal) {
				StopTrying(fmt.Sprintf("%s %s/%s finished %s instead of %s", kind, ns, name, terminal, t)).
					Attach("conditions", st.Conditions).Now()
			}
		}
		g.Expect(isTrue(st, t)).To(BeTrue(), "%s %s/%s conditions: %s", kind, ns, name, conditionsString(st))
	}).Should(Succeed())
	return st
}

func conditionsString(st *kubeflowv1.JobStatus) string {
	parts := make([]string, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, ", ")
}

// jobPods lists the pods of a job (by v1's job-name label).
func jobPods(ctx context.Context, ns, job string) []corev1.Pod {
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job})).To(Succeed())
	return pods.Items
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// kubectlPath is the kubectl binary, or "" when not installed.
func kubectlPath() string {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return ""
	}
	return p
}

// requireKubectl fails kubectl-facing specs without kubectl on the local
// control plane (make test puts its kubectl first in PATH), and skips them
// against an external cluster run from a machine without one.
func requireKubectl() {
	if kubectlPath() != "" {
		return
	}
	if cfg.Local {
		Fail("kubectl is not in PATH: make e2e puts the control plane's kubectl (hack/controlplane.sh) there")
	}
	Skip("kubectl is not installed (not in PATH): skipping this kubectl-facing spec")
}

// kubectl runs kubectl against the cluster with stdin and returns its
// combined output and error.
func kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, kubectlPath(), append([]string{"--kubeconfig", cfg.Kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// metricsText scrapes the operator's metrics endpoint: directly in local
// mode, through the API server's service proxy otherwise.
func metricsText(ctx context.Context) (string, error) {
	if cfg.Local {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.MetricsURL, nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	b, err := clientset.CoreV1().Services(cfg.OperatorNamespace).
		ProxyGet("http", OperatorName, "monitoring-port", "metrics", nil).DoRaw(ctx)
	return string(b), err
}

// counter reads one sample of a job counter (0 when absent).
func counter(text, name, framework, ns string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\{([^}]*)\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], `framework="`+framework+`"`) && strings.Contains(m[1], `job_namespace="`+ns+`"`) {
			v, err := strconv.ParseFloat(m[2], 64)
			Expect(err).NotTo(HaveOccurred())
			return v
		}
	}
	return 0
}

// --- failure artifacts ---

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// specArtifactsDir is the artifacts directory of the current spec.
func specArtifactsDir() string {
	name := unsafeChars.ReplaceAllString(CurrentSpecReport().FullText(), "_")
	if len(name) > 120 {
		name = name[:120]
	}
	return filepath.Join(cfg.Artifacts, strings.Trim(name, "_"))
}

// dumpNamespace writes the jobs, pods, services and events of a namespace
// and the operator log into the spec's artifacts directory.
func dumpNamespace(ctx context.Context, ns string) {
	dir := specArtifactsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("artifacts: %v\n", err)
		return
	}
	write := func(file string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			GinkgoWriter.Printf("artifacts: %v\n", err)
		}
	}
	toYAML := func(list client.ObjectList) []byte {
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return []byte(err.Error())
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			o.(metav1.Object).SetManagedFields(nil) // as kubectl get -o yaml shows it
			return nil
		})
		b, err := yaml.Marshal(list)
		if err != nil {
			return []byte(err.Error())
		}
		return b
	}
	var jobs []byte
	for _, kind := range allKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(jobGVK(kind + "List"))
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) == 0 {
			continue
		}
		for i := range list.Items {
			list.Items[i].SetManagedFields(nil)
		}
		b, _ := yaml.Marshal(list.UnstructuredContent())
		jobs = append(jobs, []byte("---\n")...)
		jobs = append(jobs, b...)
	}
	write("jobs.yaml", jobs)
	write("pods.yaml", toYAML(&corev1.PodList{}))
	write("services.yaml", toYAML(&corev1.ServiceList{}))
	write("events.txt", []byte(eventsText(ctx, ns)))
	write("operator.log", operatorLog(ctx))
	GinkgoWriter.Printf("artifacts of namespace %s written to %s\n", ns, dir)
}

// eventsText renders a namespace's events oldest first, one a line.
func eventsText(ctx context.Context, ns string) string {
	var evs corev1.EventList
	if err := k8s.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	sort.SliceStable(evs.Items, func(i, j int) bool { return eventTime(evs.Items[i]).Before(eventTime(evs.Items[j])) })
	var b strings.Builder
	for _, e := range evs.Items {
		count := max(e.Count, 1)
		if e.Series != nil {
			count = max(count, e.Series.Count) // events.k8s.io series: later messages are not kept
		}
		fmt.Fprintf(&b, "%s  %-7s %-28s %s/%s (x%d): %s\n", eventTime(e).Format(time.RFC3339), e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, count, e.Message)
	}
	return b.String()
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// operatorLog returns the operator's log so far: the local file, or the
// logs of the installed operator's pods.
func operatorLog(ctx context.Context) []byte {
	if cfg.Local {
		b, err := os.ReadFile(cfg.OperatorLog)
		if err != nil {
			return []byte(err.Error())
		}
		return b
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(cfg.OperatorNamespace)); err != nil {
		return []byte(err.Error())
	}
	var out []byte
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, OperatorName+"-") {
			continue
		}
		b, err := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			b = []byte(err.Error())
		}
		out = append(out, []byte("===== "+p.Name+"\n")...)
		out = append(out, b...)
	}
	return out
}

// hasArtifacts reports whether some spec of this run saved artifacts.
func hasArtifacts() bool {
	entries, err := os.ReadDir(cfg.Artifacts)
	return err == nil && len(entries) > 0
}

// saveSuiteArtifacts keeps the whole operator log and, in local mode, the
// control-plane logs (process 1, at teardown).
func saveSuiteArtifacts(ctx context.Context) {
	dir := filepath.Join(cfg.Artifacts, "suite")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("artifacts: %v\n", err)
		return
	}
	if k8s != nil {
		_ = os.WriteFile(filepath.Join(dir, "operator.log"), operatorLog(ctx), 0o644)
	}
	if env != nil {
		logs, _ := filepath.Glob(filepath.Join(env.WorkDir(), "logs", "*.log"))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil {
				_ = os.WriteFile(filepath.Join(dir, filepath.Base(l)), b, 0o644)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: artifacts in %s\n", cfg.Artifacts)
}

// ignoreNotFound is for polls of objects that are expected to go away.
func gone(err error) bool { return apierrors.IsNotFound(err) }

// jobEvents lists the events of a job with the given reason.
func jobEvents(ctx context.Context, ns, job, reason string) []corev1.Event {
	var evs corev1.EventList
	Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == job && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}
