package prometheus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/util/teststorage"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

// The scrape's job label is the Service's name, as prometheus-operator
// makes it; the certificate's name is the Service's DNS name in the
// release namespace. The rest of the scrape comes from the rendered
// ServiceMonitor (serviceMonitorEndpoint).
const (
	scrapeJob  = "training-operator"
	releaseNS  = "kubeflow"
	serverName = "training-operator.kubeflow.svc"
	// window is the length of the healthy run and of the unhealthy one.
	window = 25 * time.Second
)

// The thresholds of the live run: short enough for a test, the same in
// the healthy and the unhealthy run.
var liveThresholds = []string{
	"metrics.prometheusRule.operatorDown.for=5s",
	"metrics.prometheusRule.noLeader.for=5s",
	"metrics.prometheusRule.certificateExpiry.for=2s",
	"metrics.prometheusRule.jobStuckRestarting.seconds=10",
	"metrics.prometheusRule.jobStuckRestarting.for=1s",
	"metrics.prometheusRule.jobQueuedWithoutPods.seconds=10",
	"metrics.prometheusRule.jobQueuedWithoutPods.for=1s",
	"replicas=2",
}

// TestAlertsOnTheRunningOperator runs the operator on a real control plane
// and, beside it, Prometheus' scraper, TSDB, PromQL engine and rule
// manager with the chart's rules. A healthy run fires nothing; a run of the
// same length with a certificate near expiry, a job whose restart cannot
// proceed and a job whose pods are refused fires exactly their alerts;
// stopping the operator fires TrainingOperatorDown. Every series the rules
// and the dashboard query is in the scrapes.
func TestAlertsOnTheRunningOperator(t *testing.T) {
	env := util.StartTestCluster(t, cluster.Options{Nodes: 2})
	ctx := t.Context()
	admin := env.RESTConfig()
	k8s, err := client.New(admin, client.Options{Scheme: util.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(admin)
	for _, ns := range []string{releaseNS, "team-a", "team-quota"} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	// The serving certificate as cert-manager's Secret would provide it.
	ca, err := util.NewCA("training-operator-ca")
	if err != nil {
		t.Fatal(err)
	}
	certDir, promDir := t.TempDir(), t.TempDir()
	writeLeaf(t, ca, certDir, 30*24*time.Hour)
	caFile := filepath.Join(promDir, "ca.crt")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}

	cfg := util.DefaultConfiguration()
	cfg.Webhook.CertManagement = configv1alpha1.CertManagementCertManager
	op, err := util.StartFullOperator(ctx, util.FullOperatorOptions{
		RESTConfig: admin, Config: cfg, Namespace: releaseNS, ProvidedCertDir: certDir, LeaderElection: true, MetricsSecure: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	installWebhooks(t, k8s, cfg, op.WebhookAddr, ca.CertPEM)

	tokenFile := filepath.Join(promDir, "token")
	if err := os.WriteFile(tokenFile, []byte(metricsReaderToken(t, cs)), 0o600); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, op.MetricsAddr, caFile, tokenFile, renderRules(t, promDir, liveThresholds...))

	// The healthy run: jobs that run, succeed, fail, and restart once by
	// their failure policy, all settled first.
	healthy := []client.Object{
		testjobs.MakePyTorchJob("runs", "team-a").Master(1).Workers(1).Obj(),
		testjobs.MakePyTorchJob("succeeds", "team-a").Master(1).Annotation(kubeflowv1.PyTorchJobReplicaTypeMaster, cluster.ExitCodeAnnotation, "0").Obj(),
		testjobs.MakePyTorchJob("fails", "team-a").Master(1).RestartPolicy(kubeflowv1.RestartPolicyNever).
			Annotation(kubeflowv1.PyTorchJobReplicaTypeMaster, cluster.ExitCodeAnnotation, "1").Obj(),
		testjobs.MakePyTorchJob("restarts", "team-a").Master(1).Workers(1).FailurePolicy(retryOn3()).Obj(),
	}
	for _, j := range healthy {
		if err := k8s.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	waitCondition(t, k8s, "team-a", "runs", kubeflowv1.JobRunning)
	waitCondition(t, k8s, "team-a", "succeeds", kubeflowv1.JobSucceeded)
	waitCondition(t, k8s, "team-a", "fails", kubeflowv1.JobFailed)
	waitCondition(t, k8s, "team-a", "restarts", kubeflowv1.JobRunning)
	exitPod(t, k8s, "team-a", "restarts-worker-0", 3)
	waitFor(t, "the restarts job restarted and Running again", func() bool {
		var j kubeflowv1.PyTorchJob
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "restarts"}, &j); err != nil {
			return false
		}
		return j.Status.Attempt() >= 1 && hasCondition(&j.Status, kubeflowv1.JobRunning)
	})

	seen := prom.run(t, window)
	if len(seen) != 0 {
		t.Errorf("alerts pending or firing during a healthy run of %s: %v", window, seen)
	}

	// The unhealthy run, as long: a certificate expiring in 3 days, a job
	// whose pods the API server refuses (a quota of no pods), and a job
	// whose whole-job restart cannot proceed (every node cordoned, then a
	// pod exits with the code its failure policy restarts the job on).
	writeLeaf(t, ca, certDir, 3*24*time.Hour)
	if err := k8s.Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-quota", Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the quota is enforced", func() bool {
		var q corev1.ResourceQuota
		return k8s.Get(ctx, client.ObjectKey{Namespace: "team-quota", Name: "no-pods"}, &q) == nil && q.Status.Hard != nil
	})
	if err := k8s.Create(ctx, testjobs.MakePyTorchJob("queued", "team-quota").Master(1).Obj()); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, testjobs.MakePyTorchJob("blocked", "team-a").Master(1).Workers(1).FailurePolicy(retryOn3()).Obj()); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, k8s, "team-a", "blocked", kubeflowv1.JobRunning)
	cordonAll(t, k8s)
	exitPod(t, k8s, "team-a", "blocked-worker-0", 3)

	seen = prom.run(t, window)
	want := []string{"TrainingJobQueuedWithoutPods firing", "TrainingJobStuckRestarting firing", "TrainingOperatorCertificateExpiringSoon firing"}
	if !seen["TrainingJobStuckRestarting firing"] {
		var j kubeflowv1.PyTorchJob
		_ = k8s.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "blocked"}, &j)
		var pods corev1.PodList
		_ = k8s.List(ctx, &pods, client.InNamespace("team-a"))
		for _, p := range pods.Items {
			t.Logf("pod %s %s deleting=%v", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
		}
		t.Logf("blocked job: %+v; gauges: %v", j.Status.Conditions, prom.query(t, `training_operator_jobs`))
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("%s: not seen in an unhealthy run of %s; seen %v", w, window, seen)
		}
	}
	for a := range seen {
		if !strings.HasPrefix(a, "TrainingJobQueuedWithoutPods") && !strings.HasPrefix(a, "TrainingJobStuckRestarting") &&
			!strings.HasPrefix(a, "TrainingOperatorCertificateExpiringSoon") && !strings.HasPrefix(a, "TrainingOperatorReconcileErrors") {
			t.Errorf("unexpected alert %s in the unhealthy run", a)
		}
	}

	// Every metric the rules and the dashboard query is in the scrapes.
	checkSeriesExported(t, prom)

	// The operator stopped: down within operatorDown.for and a few scrapes.
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	if !prom.runUntil(t, "TrainingOperatorDown firing", 40*time.Second) {
		t.Errorf("TrainingOperatorDown did not fire within 40s of the operator stopping")
	}
}

// retryOn3 restarts the whole job when a pod exits with code 3.
func retryOn3() *kubeflowv1.FailurePolicy {
	return testjobs.MakeFailurePolicy(3).Rule("retry", kubeflowv1.RestartJobAction).
		OnExitCodes("pytorch", kubeflowv1.FailurePolicyOnExitCodesOpIn, 3).Obj()
}

// writeLeaf writes a serving certificate valid for validity, as cert-manager
// renews the Secret the operator reads.
func writeLeaf(t *testing.T, ca *util.KeyPair, dir string, validity time.Duration) {
	t.Helper()
	leaf, err := ca.ServingCertFor(validity, "training-operator", serverName)
	if err != nil {
		t.Fatal(err)
	}
	if err := util.WriteTLSFiles(dir, leaf); err != nil {
		t.Fatal(err)
	}
}

// installWebhooks installs the webhook configurations with the CA bundle
// cert-manager would inject, reaching the operator by URL.
func installWebhooks(t *testing.T, k8s client.Client, cfg *configv1alpha1.Configuration, addr string, caPEM []byte) {
	t.Helper()
	whs, err := webhooks.WebhookConfigurations(kinds.Webhooks(), cfg.EnabledSchemes)
	if err != nil {
		t.Fatal(err)
	}
	url := func(cc admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
		u := "https://" + addr + *cc.Service.Path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caPEM}
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	mwc.Name = whs.MutatingName
	for _, w := range whs.Mutating {
		w.ClientConfig = url(w.ClientConfig)
		mwc.Webhooks = append(mwc.Webhooks, w)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	vwc.Name = whs.ValidatingName
	for _, w := range whs.Validating {
		w.ClientConfig = url(w.ClientConfig)
		vwc.Webhooks = append(vwc.Webhooks, w)
	}
	for _, o := range []client.Object{mwc, vwc} {
		if err := k8s.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// metricsReaderToken is the token of a ServiceAccount allowed to get
// /metrics, as Prometheus' is with the chart's metrics-reader ClusterRole.
func metricsReaderToken(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.CoreV1().ServiceAccounts(releaseNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: releaseNS, Name: "prometheus"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(releaseNS).CreateToken(ctx, "prometheus", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// promHarness is Prometheus' scrape manager writing to a TSDB, and the
// chart's rule groups evaluated on it with Prometheus' PromQL engine.
type promHarness struct {
	st     *teststorage.TestStorage
	groups []*rules.Group
	// evals counts rule evaluations; scrapesUp counts up == 1 samples seen.
	evals int
}

func startPrometheus(t *testing.T, target, caFile, tokenFile, rulesFile string) *promHarness {
	t.Helper()
	logger := promslog.NewNopLogger()
	// The ServiceMonitor's endpoint as prometheus-operator turns it into a
	// scrape config, with the Secret's ca.crt and the token as local files.
	ep := serviceMonitorEndpoint(t)
	cfg, err := config.Load(fmt.Sprintf(`
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: %s
    scheme: %s
    metrics_path: %s
    authorization:
      credentials_file: %s
    tls_config:
      ca_file: %s
      server_name: %s
`, scrapeJob, ep.Scheme, ep.Path, tokenFile, caFile, ep.TLSConfig.ServerName), logger)
	if err != nil {
		t.Fatal(err)
	}
	st := teststorage.New(t)
	sm, err := scrape.NewManager(&scrape.Options{DiscoveryReloadOnStartup: true}, logger, nil, nil, st, promclient.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.ApplyConfig(cfg); err != nil {
		t.Fatal(err)
	}
	tsets := make(chan map[string][]*targetgroup.Group, 1)
	tsets <- map[string][]*targetgroup.Group{scrapeJob: {{
		Source:  "test",
		Targets: []model.LabelSet{{model.AddressLabel: model.LabelValue(target)}},
		Labels:  model.LabelSet{"namespace": releaseNS, "pod": "training-operator-0"},
	}}}
	go func() { _ = sm.Run(tsets) }()
	t.Cleanup(sm.Stop)

	engine := promql.NewEngine(engineOpts)
	t.Cleanup(func() { _ = engine.Close() })
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(engine, st),
		AppendableV2: st,
		Queryable:    st,
		Context:      context.Background(),
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       logger,
		Parser:       parser.NewParser(parser.Options{}),
	})
	groups, errs := m.LoadGroups(time.Second, labels.EmptyLabels(), "", nil, false, rulesFile)
	if len(errs) > 0 {
		t.Fatalf("loading the chart's rules: %v", errs)
	}
	h := &promHarness{st: st}
	for _, g := range groups {
		h.groups = append(h.groups, g)
	}
	return h
}

// evalOnce evaluates every rule now and returns the alerts pending or
// firing, as "<name> <state>".
func (h *promHarness) evalOnce(ctx context.Context) map[string]bool {
	out := map[string]bool{}
	now := time.Now()
	for _, g := range h.groups {
		g.Eval(ctx, now)
		for _, r := range g.AlertingRules() {
			for _, a := range r.ActiveAlerts() {
				out[r.Name()+" "+a.State.String()] = true
			}
		}
	}
	h.evals++
	return out
}

// run evaluates the rules once a second for d and returns every alert
// state seen. It fails the test unless the operator was scraped
// successfully throughout: a run without scrapes would prove nothing.
func (h *promHarness) run(t *testing.T, d time.Duration) map[string]bool {
	t.Helper()
	start := time.Now()
	seen := map[string]bool{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(start) < d {
		<-tick.C
		for a := range h.evalOnce(t.Context()) {
			seen[a] = true
		}
	}
	if up := h.upSamples(t, start); up < int(d/time.Second)/2 {
		t.Fatalf("only %d successful scrapes in %s", up, d)
	}
	return seen
}

// runUntil evaluates once a second until want is seen or timeout passes.
func (h *promHarness) runUntil(t *testing.T, want string, timeout time.Duration) bool {
	t.Helper()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		<-tick.C
		if h.evalOnce(t.Context())[want] {
			return true
		}
	}
	return false
}

// upSamples counts the samples up == 1 since start.
func (h *promHarness) upSamples(t *testing.T, since time.Time) int {
	t.Helper()
	v := h.query(t, fmt.Sprintf(`count_over_time((up{job=%q} == 1)[%ds:])`, scrapeJob, int(time.Since(since).Seconds())+1))
	if len(v) == 0 {
		return 0
	}
	return int(v[0].F)
}

func (h *promHarness) query(t *testing.T, q string) promql.Vector {
	t.Helper()
	engine := promql.NewEngine(engineOpts)
	defer func() { _ = engine.Close() }()
	qry, err := engine.NewInstantQuery(t.Context(), h.st, nil, q, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	res := qry.Exec(t.Context())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	v, err := res.Vector()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkSeriesExported parses every rule expression and dashboard query with
// Prometheus' parser and checks that each metric name it selects is among
// the scraped series.
func checkSeriesExported(t *testing.T, h *promHarness) {
	t.Helper()
	q, err := h.st.Querier(0, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = q.Close() }()
	names, _, err := q.LabelValues(t.Context(), model.MetricNameLabel, nil)
	if err != nil {
		t.Fatal(err)
	}
	scraped := map[string]bool{}
	for _, n := range names {
		scraped[n] = true
	}
	queries := dashboardQueries(t)
	for _, g := range h.groups {
		for _, r := range g.Rules() {
			queries["rule "+r.Name()] = r.Query().String()
		}
	}
	p := parser.NewParser(parser.Options{})
	keys := make([]string, 0, len(queries))
	for k := range queries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	checked := 0
	for _, k := range keys {
		expr, err := p.ParseExpr(grafanaVars.Replace(queries[k]))
		if err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		var missing []string
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			if vs, ok := n.(*parser.VectorSelector); ok {
				checked++
				if !scraped[vs.Name] {
					missing = append(missing, vs.Name)
				}
			}
			return nil
		})
		if len(missing) > 0 {
			t.Errorf("%s queries series no scrape of the operator has: %v", k, missing)
		}
	}
	t.Logf("%d queries, %d selectors checked against %d scraped metric names", len(keys), checked, len(scraped))
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func hasCondition(st *kubeflowv1.JobStatus, c kubeflowv1.JobConditionType) bool {
	for _, x := range st.Conditions {
		if x.Type == c && x.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func waitCondition(t *testing.T, k8s client.Client, ns, name string, c kubeflowv1.JobConditionType) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s/%s %s", ns, name, c), func() bool {
		var j kubeflowv1.PyTorchJob
		return k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &j) == nil && hasCondition(&j.Status, c)
	})
}

// exitPod makes KWOK finish the running pod with code.
func exitPod(t *testing.T, k8s client.Client, ns, name string, code int) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, cluster.ExitCodeAnnotation, strconv.Itoa(code))
	if err := k8s.Patch(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// cordonAll makes every node unschedulable: pods created from now on stay Pending.
func cordonAll(t *testing.T, k8s client.Client) {
	t.Helper()
	var nodes corev1.NodeList
	if err := k8s.List(t.Context(), &nodes); err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		if err := k8s.Patch(t.Context(), &nodes.Items[i], client.RawPatch(types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`))); err != nil {
			t.Fatal(err)
		}
	}
}

// engineOpts are the PromQL engine's, as Prometheus' own defaults set them
// (a subquery without a step uses the evaluation interval).
var engineOpts = promql.EngineOpts{
	MaxSamples:               50_000_000,
	Timeout:                  10 * time.Second,
	LookbackDelta:            5 * time.Minute,
	NoStepSubqueryIntervalFn: func(int64) int64 { return time.Second.Milliseconds() },
	Parser:                   parser.NewParser(parser.Options{}),
}
