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

// Command dashboard writes the chart's Grafana dashboard
// (charts/training-operator/files/dashboard.json, make dashboard) with
// Grafana's foundation SDK, so panels are typed code rather than JSON kept
// in step by hand. It is a program of its own: the operator does not link
// the SDK.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The operator's series: $job is the scrape job (the Service's name with
// the chart's ServiceMonitor), $namespace the operator's namespace.
const (
	op   = `job="$job", namespace="$namespace"`
	jobs = op + `, job_namespace=~"$job_namespace"`
)

var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend).Datasource(ds)
}

// series is a time-series panel, one query per legend.
func series(title, unit, description string, stacked bool, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Unit(unit).Description(description).Datasource(ds).Span(8).Height(8).Min(0)
	if stacked {
		p = p.Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
	}
	for _, q := range queries {
		p = p.WithTarget(q)
	}
	return p
}

// The classic dashboard model, which the SDK marks deprecated in favour of
// v2: Grafana's sidecar provisions dashboards from files, which must be the
// classic JSON model; v2 is served only by Grafana 12's new dashboard API.
//
//nolint:staticcheck // see above
func build() (dashboard.Dashboard, error) {
	text := func(name, label, value string) *dashboard.TextBoxVariableBuilder {
		return dashboard.NewTextBoxVariableBuilder(name).Label(label).
			DefaultValue(dashboard.StringOrMap{String: cog.ToPtr(value)}).
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr(value)}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(value)}})
	}
	b := dashboard.NewDashboardBuilder("Training Operator").
		Uid("training-operator").
		Description("Jobs by state, time to Running, restarts, and the operator's reconciles, queues, API requests, webhooks and resources.").
		Tags([]string{"training-operator", "kubeflow"}).
		Refresh("30s").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(text("job", "Scrape job", "training-operator")).
		WithVariable(text("namespace", "Operator namespace", "kubeflow")).
		WithVariable(dashboard.NewQueryVariableBuilder("job_namespace").Label("Job namespace").
			Datasource(ds).
			Query(dashboard.StringOrMap{String: cog.ToPtr(`label_values(training_operator_jobs{` + op + `}, job_namespace)`)}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).IncludeAll(true).AllValue(".*"))

	b = b.WithRow(dashboard.NewRowBuilder("Jobs")).
		WithPanel(series("Jobs by state", "short", "Unfinished jobs; Queued have no pod yet (gang or quota admission, or pods that cannot be created).", true,
			query(`sum by (state) (training_operator_jobs{`+jobs+`})`, "{{state}}"))).
		WithPanel(series("Longest in state", "s", "How long the job longest in each state has been in it: a Restarting or Queued job that only ages is stuck.", false,
			query(`max by (state) (training_operator_jobs_oldest_in_state_seconds{`+jobs+`})`, "{{state}}"))).
		WithPanel(series("Jobs created, succeeded, failed", "ops", "Per second, all kinds.", false,
			query(`sum(rate(training_operator_jobs_created_total{`+jobs+`}[$__rate_interval]))`, "created"),
			query(`sum(rate(training_operator_jobs_successful_total{`+jobs+`}[$__rate_interval]))`, "succeeded"),
			query(`sum(rate(training_operator_jobs_failed_total{`+jobs+`}[$__rate_interval]))`, "failed")))

	b = b.WithRow(dashboard.NewRowBuilder("Time to Running and restarts")).
		WithPanel(series("Time to Running", "s", "From a job's creation until it is first Running, by framework.", false,
			query(`histogram_quantile(0.5, sum by (framework, le) (rate(training_operator_job_startup_seconds_bucket{`+jobs+`}[$__rate_interval])))`, "p50 {{framework}}"),
			query(`histogram_quantile(0.9, sum by (framework, le) (rate(training_operator_job_startup_seconds_bucket{`+jobs+`}[$__rate_interval])))`, "p90 {{framework}}"))).
		WithPanel(series("Restarts and restart duration", "short", "Whole-job restarts per hour by framework, and the 90th percentile of a restart's duration (until every new pod runs).", false,
			query(`sum by (framework) (increase(training_operator_jobs_restarted_total{`+jobs+`}[1h]))`, "restarts/h {{framework}}"),
			query(`histogram_quantile(0.9, sum by (framework, le) (rate(training_operator_job_restart_duration_seconds_bucket{`+op+`}[$__rate_interval])))`, "p90 seconds {{framework}}"))).
		WithPanel(series("Restart causes", "short", "Failure-policy decisions and pods the API server refused, per hour.", true,
			query(`sum by (action) (increase(training_operator_job_failure_policy_actions_total{`+op+`}[1h]))`, "{{action}}"),
			query(`sum by (reason) (increase(training_operator_pod_create_failures_total{`+op+`}[1h]))`, "pod create refused: {{reason}}")))

	b = b.WithRow(dashboard.NewRowBuilder("Operator")).
		WithPanel(series("Reconciles", "ops", "Per second by controller and result.", true,
			query(`sum by (controller, result) (rate(controller_runtime_reconcile_total{`+op+`}[$__rate_interval]))`, "{{controller}} {{result}}"))).
		WithPanel(series("Reconcile latency", "s", "99th percentile by controller.", false,
			query(`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{`+op+`}[$__rate_interval])))`, "{{controller}}"))).
		WithPanel(series("Work queues", "short", "Depth, and the 99th percentile of the time a job waits in the queue (seconds).", false,
			query(`sum by (name) (workqueue_depth{`+op+`})`, "depth {{name}}"),
			query(`histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{`+op+`}[$__rate_interval])))`, "wait p99 {{name}}"))).
		WithPanel(stat.NewPanelBuilder().Title("Leader").Description("Replicas holding the leader Lease (1 when leader election is on and healthy).").
			Datasource(ds).Span(8).Height(4).GraphMode(common.BigValueGraphModeNone).
			WithTarget(query(`sum(leader_election_master_status{`+op+`})`, "leader")))

	b = b.WithRow(dashboard.NewRowBuilder("API server")).
		WithPanel(series("API requests", "ops", "The operator's requests to the API server per second, by method and code; 429 means the API server throttled them.", true,
			query(`sum by (method, code) (rate(rest_client_requests_total{`+op+`}[$__rate_interval]))`, "{{method}} {{code}}"))).
		WithPanel(series("Throttled and failed requests", "ops", "429 (API priority and fairness) and 5xx answers per second.", false,
			query(`sum(rate(rest_client_requests_total{`+op+`, code="429"}[$__rate_interval]))`, "429"),
			query(`sum(rate(rest_client_requests_total{`+op+`, code=~"5.."}[$__rate_interval]))`, "5xx")))

	b = b.WithRow(dashboard.NewRowBuilder("Webhooks")).
		WithPanel(series("Admission calls", "ops", "Per second by webhook path and HTTP code (a denied job is still 200).", true,
			query(`sum by (webhook, code) (rate(controller_runtime_webhook_requests_total{`+op+`}[$__rate_interval]))`, "{{webhook}} {{code}}"))).
		WithPanel(series("Admission latency", "s", "99th percentile by webhook path.", false,
			query(`histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket{`+op+`}[$__rate_interval])))`, "{{webhook}}"))).
		WithPanel(stat.NewPanelBuilder().Title("Serving certificate expires in").Description("The earliest expiry among the replicas' webhook serving certificates.").
			Datasource(ds).Span(8).Height(4).Unit("s").GraphMode(common.BigValueGraphModeNone).
			WithTarget(query(`min(training_operator_webhook_certificate_expiry_timestamp_seconds{`+op+`}) - time()`, "expires in")))

	b = b.WithRow(dashboard.NewRowBuilder("Resources")).
		WithPanel(series("Memory", "bytes", "Resident memory and Go heap in use, per replica.", false,
			query(`process_resident_memory_bytes{`+op+`}`, "RSS {{pod}}"),
			query(`go_memstats_heap_inuse_bytes{`+op+`}`, "heap {{pod}}"))).
		WithPanel(series("CPU", "short", "Cores used per replica.", false,
			query(`rate(process_cpu_seconds_total{`+op+`}[$__rate_interval])`, "{{pod}}"))).
		WithPanel(series("Goroutines", "short", "Per replica.", false,
			query(`go_goroutines{`+op+`}`, "{{pod}}")))
	return b.Build()
}

func main() {
	out := flag.String("out", "charts/training-operator/files/dashboard.json", "file to write")
	flag.Parse()
	d, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, []byte(strings.TrimSpace(string(data))+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
