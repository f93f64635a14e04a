package prometheus

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/seed-d8a409e9/training-operator/test/util"
)

var chartDir = filepath.Join(util.RepoRoot(), "charts", "training-operator")

// helmPath is the helm that hack/controlplane.sh builds beside the control
// plane ($KUBEBUILDER_ASSETS in make test).
func helmPath(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		out, err := exec.Command(filepath.Join(util.RepoRoot(), "hack", "controlplane.sh"), "--print-dir").Output()
		if err != nil {
			t.Fatalf("hack/controlplane.sh --print-dir: %v", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	p := filepath.Join(dir, "helm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm is not built in %s (run make controlplane): %v", dir, err)
	}
	return p
}

// render renders one template of the chart (release training-operator in
// namespace kubeflow, the given --set values) and decodes the one object it
// makes, which must be of kind.
func render(t *testing.T, template, kind string, obj any, sets ...string) {
	t.Helper()
	args := []string{"template", "training-operator", chartDir, "--namespace", releaseNS, "--show-only", template}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(helmPath(t), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v: %s", err, stderr.String())
	}
	var meta struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(out, &meta); err != nil || meta.Kind != kind {
		t.Fatalf("%s: not a %s (%v):\n%s", template, kind, err, out)
	}
	if err := yaml.Unmarshal(out, obj); err != nil {
		t.Fatal(err)
	}
}

// renderRules renders the chart's PrometheusRule (the given --set values)
// and writes its spec, a Prometheus rule file, to dir/rules.yaml.
func renderRules(t *testing.T, dir string, sets ...string) string {
	t.Helper()
	var pr struct {
		Spec json.RawMessage `json:"spec"`
	}
	render(t, "templates/prometheusrule.yaml", "PrometheusRule", &pr, append([]string{"metrics.prometheusRule.enabled=true"}, sets...)...)
	spec, err := yaml.JSONToYAML(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// scrapeEndpoint is what the scrape takes from the chart's ServiceMonitor
// endpoint (prometheus-operator's monitoring.coreos.com/v1 fields).
type scrapeEndpoint struct {
	Scheme          string `json:"scheme"`
	Path            string `json:"path"`
	BearerTokenFile string `json:"bearerTokenFile"`
	TLSConfig       struct {
		CA struct {
			Secret struct {
				Name string `json:"name"`
				Key  string `json:"key"`
			} `json:"secret"`
		} `json:"ca"`
		ServerName string `json:"serverName"`
	} `json:"tlsConfig"`
}

// serviceMonitorEndpoint renders the chart's ServiceMonitor with secure
// metrics and returns its one endpoint, after checking that it verifies
// the server with ca.crt of the webhook certificate Secret (the CA the
// test's certificate is signed by) and sends a ServiceAccount token.
func serviceMonitorEndpoint(t *testing.T) scrapeEndpoint {
	t.Helper()
	var sm struct {
		Spec struct {
			Endpoints []scrapeEndpoint `json:"endpoints"`
		} `json:"spec"`
	}
	render(t, "templates/servicemonitor.yaml", "ServiceMonitor", &sm, "metrics.serviceMonitor.enabled=true", "metrics.secure=true")
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints: %+v, want one", sm.Spec.Endpoints)
	}
	ep := sm.Spec.Endpoints[0]
	if ca := ep.TLSConfig.CA.Secret; ca.Name != "training-operator-webhook-cert" || ca.Key != "ca.crt" {
		t.Errorf("ServiceMonitor verifies with %s/%s, want the webhook certificate Secret's ca.crt", ca.Name, ca.Key)
	}
	if ep.BearerTokenFile != "/var/run/secrets/kubernetes.io/serviceaccount/token" {
		t.Errorf("ServiceMonitor bearerTokenFile %q, want Prometheus' ServiceAccount token", ep.BearerTokenFile)
	}
	return ep
}

// dashboardQueries returns every PromQL query of the chart's dashboard:
// its panels' targets and its query variables.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		for i, tg := range p.Targets {
			out[p.Title+"#"+string(rune('A'+i))] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			// label_values(<selector>, label): the selector is the query.
			q = strings.TrimSuffix(strings.TrimPrefix(q, "label_values("), ")")
			if i := strings.LastIndex(q, ","); i > 0 {
				q = q[:i]
			}
			out["variable "+v.Name] = q
		}
	}
	if len(out) == 0 {
		t.Fatal("no query in the dashboard")
	}
	return out
}

// grafanaVars stands in for the dashboard's variables so that Prometheus'
// parser reads its queries as Grafana sends them.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "$job_namespace", ".*", "$job", "training-operator", "$namespace", "kubeflow")
