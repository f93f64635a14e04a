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

package main

import (
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPercentile(t *testing.T) {
	cases := []struct {
		values []float64
		p      float64
		want   float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 99, 7},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 90, 10},
		{[]float64{0, 10}, 95, 9.5},
		{[]float64{1, 2}, 150, 2},
	}
	for _, c := range cases {
		if got := percentile(c.values, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("percentile(%v, %v) = %v, want %v", c.values, c.p, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- { // unsorted input
		samples = append(samples, time.Duration(i)*time.Second)
	}
	p := summarize(samples)
	if p.N != 100 || p.P50 != 50.5 || math.Abs(p.P95-95.05) > 1e-9 || math.Abs(p.P99-99.01) > 1e-9 || p.Max != 100 {
		t.Errorf("summarize = %+v", p)
	}
	if latencyMetrics("x", nil) != nil {
		t.Error("latencyMetrics of no samples should be empty")
	}
	m := latencyMetrics("create→pods", samples)
	if len(m) != 4 || m[0].Name != "create→pods p50" || m[3].Value != 100 || m[3].Unit != "s" {
		t.Errorf("latencyMetrics = %+v", m)
	}
}

func TestAPICostCounters(t *testing.T) {
	// The operator's metrics count; the proxy's breakdown only adds detail.
	a := &APICost{
		Total: 40,
		Methods: []MethodCount{
			{"DELETE", "200", 1},
			{"GET", "200", 10},
			{"PATCH", "200", 5},
			{"PATCH", "409", 2},
			{"POST", "201", 16},
			{"PUT", "200", 6},
		},
		ProxyTotal: 30,
		Requests: []APICount{
			{"create", "pods", 201, 8},
			{"create", "services", 201, 8},
			{"patch", "pytorchjobs.kubeflow.org/status", 200, 5},
			{"patch", "pytorchjobs.kubeflow.org/status", 409, 1},
			{"create", "events.events.k8s.io", 201, 6},
			{"patch", "events", 200, 2},
			{"list", "pods", 200, 3},
			{"watch", "pods", 200, 1},
		},
	}
	if got := a.RequestTotal(); got != 40 {
		t.Errorf("RequestTotal = %d", got)
	}
	if got := a.Conflicts(); got != 2 {
		t.Errorf("Conflicts = %d", got)
	}
	if got := a.Writes(); got != 30 {
		t.Errorf("Writes = %d", got)
	}
	if got := a.ProxyEvents(); got != 8 {
		t.Errorf("ProxyEvents = %d", got)
	}
	if got := a.ProxyStatusWrites(); got != 6 {
		t.Errorf("ProxyStatusWrites = %d", got)
	}
	// Without the operator's metrics, the proxy's counts stand in.
	a.Total, a.Methods = -1, nil
	if a.RequestTotal() != 30 || a.Conflicts() != 1 || a.Writes() != 30 {
		t.Errorf("proxy fallback: total %d, conflicts %d, writes %d", a.RequestTotal(), a.Conflicts(), a.Writes())
	}
}

func TestDiffMethods(t *testing.T) {
	before := map[methodCode]float64{{"GET", "200"}: 3, {"PATCH", "409"}: 1}
	after := map[methodCode]float64{{"GET", "200"}: 5, {"PATCH", "409"}: 1, {"POST", "201"}: 8, {"PATCH", "200"}: 2}
	want := []MethodCount{{"GET", "200", 2}, {"PATCH", "200", 2}, {"POST", "201", 8}}
	if diff := cmp.Diff(want, diffMethods(before, after)); diff != "" {
		t.Errorf("diffMethods (-want +got):\n%s", diff)
	}
}

func TestDiffCounts(t *testing.T) {
	before := map[requestKey]int{{"get", "pods", 200}: 3, {"list", "pods", 200}: 1}
	after := map[requestKey]int{{"get", "pods", 200}: 5, {"list", "pods", 200}: 1, {"create", "pods", 201}: 9}
	got, total := diffCounts(before, after)
	if total != 11 || len(got) != 2 || got[0] != (APICount{"create", "pods", 201, 9}) || got[1] != (APICount{"get", "pods", 200, 2}) {
		t.Errorf("diffCounts = %+v, %d", got, total)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		method, url, contentType string
		verb, resource           string
	}{
		{"GET", "/api/v1/pods?watch=true&resourceVersion=1", "", "watch", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods", "", "list", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods/p", "", "get", "pods"},
		{"GET", "/api/v1/namespaces/ns", "", "get", "namespaces"},
		{"GET", "/api/v1/namespaces", "", "list", "namespaces"},
		{"POST", "/api/v1/namespaces/ns/services", "", "create", "services"},
		{"PATCH", "/apis/kubeflow.org/v1/namespaces/ns/pytorchjobs/j/status", "application/merge-patch+json", "patch", "pytorchjobs.kubeflow.org/status"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/d", "application/apply-patch+yaml", "apply", "deployments.apps"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", "", "update", "leases.coordination.k8s.io"},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", "", "delete", "pods"},
		{"DELETE", "/api/v1/namespaces/ns/pods", "", "deletecollection", "pods"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/ns/events", "", "create", "events.events.k8s.io"},
		{"GET", "/apis/kubeflow.org/v1", "", "get", "nonresource"},
		{"GET", "/version", "", "get", "nonresource"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.url, nil)
		r.Header.Set("Content-Type", c.contentType)
		if verb, res := classify(r); verb != c.verb || res != c.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", c.method, c.url, verb, res, c.verb, c.resource)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP rest_client_requests_total Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:1",method="GET"} 12
rest_client_requests_total{code="409",host="127.0.0.1:1",method="PATCH"} 3
controller_runtime_reconcile_total{controller="pytorchjob",result="success"} 7 1700000000
weird{a="x\"y,}",b="2"} 1.5
process_cpu_seconds_total 4.25
broken{a="1" 3
`
	s := parseMetrics(text)
	if len(s) != 5 {
		t.Fatalf("parsed %d samples: %+v", len(s), s)
	}
	if s[1].labels["code"] != "409" || s[1].value != 3 {
		t.Errorf("sample 1 = %+v", s[1])
	}
	if s[2].labels["result"] != "success" || s[2].value != 7 {
		t.Errorf("sample 2 = %+v", s[2])
	}
	if s[3].labels["a"] != `x"y,}` || s[3].labels["b"] != "2" {
		t.Errorf("sample 3 = %+v", s[3])
	}
	if s[4].name != "process_cpu_seconds_total" || s[4].value != 4.25 {
		t.Errorf("sample 4 = %+v", s[4])
	}
}

func TestMarkdown(t *testing.T) {
	res := func(cpu float64) *Result {
		return &Result{
			Scenario: "burst-2", Jobs: 2, Pods: 8,
			Metrics: []Metric{{"all pods created", 1.5, "s"}},
			API: &APICost{Total: 20, ProxyTotal: -1, Methods: []MethodCount{{"PATCH", "409", 4}, {"POST", "201", 16}},
				Reconciles: map[string]int{"success": 10, "requeue_after": 2}},
			Activity:  &JobActivity{Jobs: 2, StatusWrites: 7, MaxStatusWrites: 4, EventObjects: 4, EventCount: 5},
			Footprint: Footprint{CPUSeconds: cpu, PeakRSSMiB: 50},
		}
	}
	withProxy := res(2)
	withProxy.API.ProxyTotal, withProxy.API.Requests = 22, []APICount{{"create", "pods", 201, 8}}
	rep := &Report{Mode: "quick", Runs: []*Run{
		{Label: "A", Operator: "/a", Nodes: 20, Results: []*Result{withProxy}},
		{Label: "B", Operator: "/b", Nodes: 20, Results: []*Result{res(3)}},
	}}
	md := rep.Markdown()
	for _, want := range []string{
		"| burst-2 | all pods created | 1.50 s |",
		"| burst-2 | API requests (operator's rest_client_requests_total) | 20 req |",
		"| burst-2 | API requests (proxy) | 22 req |",
		"| burst-2 | API requests / job | 10 req |",
		"| burst-2 | API writes / job | 10 req |",
		"| burst-2 | 409 conflicts | 4 req |",
		"| burst-2 | reconciles / job | 6 |",
		"| burst-2 | status writes / job (watch, mean) | 3.50 |",
		"| burst-2 | status writes / job (watch, max) | 4 |",
		"| burst-2 | Events / job (sum of count) | 2.50 |",
		"| burst-2 | operator CPU / job | 1000 ms |",
		"| PATCH | 409 | 4 | 2.00 |",
		"| create | pods | 201 | 8 | 4.00 |",
		"| burst-2: status writes / job (watch; max 4) | 3.50 | <= 3, max <= 3 | no |",
		"## compare: A = A, B = B",
		"| burst-2 | operator CPU | 2 s | 3 s | 1.50 |",
		"| burst-2 | all pods created | 1.50 s | 1.50 s | 1.00 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Without --proxy there is no per-resource table.
	if strings.Count(md, "by resource (proxy") != 1 {
		t.Errorf("expected one proxy table:\n%s", md)
	}
}

func TestFormatValueAndRatio(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{3, "s", "3 s"}, {0.1234, "s", "0.123 s"}, {12.345, "", "12.35"}, {1234.56, "MiB", "1234.6 MiB"}} {
		if got := formatValue(c.v, c.unit); got != c.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	if ratio(0, 0) != "1.00" || ratio(0, 1) != "n/a" || ratio(2, 1) != "0.50" {
		t.Error("ratio")
	}
}

func TestTargets(t *testing.T) {
	m := func(name string, v float64) Metric { return Metric{Name: name, Value: v, Unit: "s"} }
	api := func(total int, conflicts int, reconciles int) *APICost {
		return &APICost{Total: total, ProxyTotal: -1, Methods: []MethodCount{{"PATCH", "409", conflicts}},
			Reconciles: map[string]int{"success": reconciles}}
	}
	run := &Run{Results: []*Result{
		{Scenario: "raw-client-500x4", Metrics: []Metric{m("all pods created", 40), m("all services created", 40.5), m("all pods and services created", 40.5)}},
		{Scenario: "raw-client-1x1000", Metrics: []Metric{m("all pods created", 20), m("all services created", 19), m("all pods and services created", 20)}},
		{Scenario: "burst-500", Jobs: 500, Pods: 2000, Metrics: []Metric{m("all pods and services created", 45)},
			API: api(7000, 1, 3500), Activity: &JobActivity{Jobs: 500, StatusWrites: 1850, MaxStatusWrites: 5},
			Footprint: Footprint{CPUSeconds: 12.5, PeakRSSMiB: 80}},
		// No raw-client-100x4 in this run: no rate; no activity: no status writes.
		{Scenario: "burst-100", Jobs: 100, API: api(1400, 0, 500), Footprint: Footprint{CPUSeconds: 0.9, PeakRSSMiB: 60}},
		{Scenario: "bigjob-1000", Jobs: 1, Metrics: []Metric{m("all pods and services created", 22)}},
		{Scenario: "retained-5000", Footprint: Footprint{PeakRSSMiB: 200}},
		// Errors leave a scenario out.
		{Scenario: "burst-50", Jobs: 50, Error: "timeout", API: api(50, 0, 50)},
		{Scenario: "restart-5000", Metrics: []Metric{
			m(restartReadyMetric, 4.2), m(restartDoneWritesMetric, 0), m(restartDoneEventsMetric, 3),
			m(restartLiveWritesMetric, 200), m(restartLiveEventsMetric, 0),
			m(restartNewJobsMetric+" p50", 0.8), m(restartNewJobsMetric+" p99", 2.5),
		}},
	}}
	want := []Target{
		// Pods and Services against pods and Services: raw time / ours.
		{Figure: "burst-500: pod+Service creation rate vs raw-client-500x4 (45.0 s vs 40.5 s)", Value: 0.9, Goal: ">= 1.00"},
		{Figure: "burst-500: operator CPU / job (ms)", Value: 25, Goal: "<= 10"},
		{Figure: "burst-500: operator peak RSS (MiB)", Value: 80, Goal: "<= 60"},
		{Figure: "burst-500: reconciles / job", Value: 7, Goal: "<= 5"},
		{Figure: "burst-500: status writes / job (watch; max 5)", Value: 3.7, Goal: "<= 3, max <= 3"},
		{Figure: "burst-500: 409 conflicts", Value: 1, Goal: "0"},
		{Figure: "burst-500: API requests / job", Value: 14, Goal: "<= 14", Met: true},
		{Figure: "burst-500: API requests / job vs 8 creates + status writes + 4 Events", Value: 14, Goal: "<= 15.75", Met: true},
		{Figure: "burst-100: operator CPU / job (ms)", Value: 9, Goal: "<= 10", Met: true},
		{Figure: "burst-100: operator peak RSS (MiB)", Value: 60, Goal: "<= 60", Met: true},
		{Figure: "burst-100: reconciles / job", Value: 5, Goal: "<= 5", Met: true},
		{Figure: "burst-100: 409 conflicts", Value: 0, Goal: "0", Met: true},
		{Figure: "burst-100: API requests / job", Value: 14, Goal: "<= 14", Met: true},
		{Figure: "bigjob-1000: pods and services created, time vs raw-client-1x1000 (22.0 s vs 20.0 s)", Value: 1.1, Goal: "<= 1.10", Met: true},
		{Figure: "retained-5000: operator peak RSS (MiB)", Value: 200, Goal: "<= 200", Met: true},
		{Figure: "restart-5000: ready after restart (s)", Value: 4.2, Goal: "<= 10", Met: true},
		{Figure: "restart-5000: " + restartDoneWritesMetric, Value: 0, Goal: "0", Met: true},
		{Figure: "restart-5000: " + restartDoneEventsMetric, Value: 3, Goal: "0"},
		{Figure: "restart-5000: " + restartLiveWritesMetric, Value: 200, Goal: "0"},
		{Figure: "restart-5000: " + restartLiveEventsMetric, Value: 0, Goal: "0", Met: true},
		{Figure: "restart-5000: " + restartNewJobsMetric + " p99 (s)", Value: 2.5, Goal: "<= 2"},
	}
	if diff := cmp.Diff(want, targets(run), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if md := targetsMarkdown(targets(run)); !strings.Contains(md, "| burst-500: API requests / job | 14.00 | <= 14 | yes |") {
		t.Errorf("markdown:\n%s", md)
	}
}

// The issue's own definition of its request budget: every request beyond
// the children's creates, the status writes and v1's four Events of a 1+3
// job fails it, whatever the status writes were.
func TestRequestsAgainstV1Floor(t *testing.T) {
	burst := func(requests, statusWrites int) *Result {
		return &Result{Scenario: "burst-10", Jobs: 10, Pods: 40,
			API:      &APICost{Total: requests, ProxyTotal: -1},
			Activity: &JobActivity{Jobs: 10, StatusWrites: statusWrites, MaxStatusWrites: 3}}
	}
	const figure = "burst-10: API requests / job vs 8 creates + status writes + 4 Events"
	for _, c := range []struct {
		requests, statusWrites int
		goal                   string
		met                    bool
	}{
		{requests: 150, statusWrites: 30, goal: "<= 15.05", met: true},
		{requests: 147, statusWrites: 27, goal: "<= 14.75", met: true},
		// One more request per job than the floor: a GET, a retry, an Event too many.
		{requests: 160, statusWrites: 30, goal: "<= 15.05"},
	} {
		var got *Target
		for _, tg := range targets(&Run{Results: []*Result{burst(c.requests, c.statusWrites)}}) {
			if tg.Figure == figure {
				got = &tg
			}
		}
		if got == nil {
			t.Fatalf("no target %q", figure)
		}
		if got.Goal != c.goal || got.Met != c.met {
			t.Errorf("%d requests, %d status writes: goal %q met %v, want %q %v", c.requests, c.statusWrites, got.Goal, got.Met, c.goal, c.met)
		}
	}
}

// A restart scenario that measured nothing yet (it failed before the
// restart) has no targets rather than zeros that look met.
func TestRestartTargetsNeedTheirFigures(t *testing.T) {
	if got := restartTargets(&Result{Scenario: "restart-200", Metrics: []Metric{{"finished jobs", 200, ""}}}); len(got) != 0 {
		t.Errorf("restartTargets = %+v", got)
	}
}

// Each repetition is judged against the raw client of the same repetition,
// and the median of the repetitions is added.
func TestTargetsOfRepetitions(t *testing.T) {
	m := func(name string, v float64) Metric { return Metric{Name: name, Value: v, Unit: "s"} }
	const both = "all pods and services created"
	pair := func(suffix string, raw, ours float64) []*Result {
		return []*Result{
			{Scenario: "raw-client-500x4" + suffix, Metrics: []Metric{m(both, raw)}},
			{Scenario: "burst-500" + suffix, Jobs: 500, Metrics: []Metric{m(both, ours)}, Footprint: Footprint{CPUSeconds: 5, PeakRSSMiB: 50}},
		}
	}
	big := func(suffix string, raw, ours float64) []*Result {
		return []*Result{
			{Scenario: "raw-client-1x1000" + suffix, Metrics: []Metric{m(both, raw)}},
			{Scenario: "bigjob-1000" + suffix, Metrics: []Metric{m(both, ours)}},
		}
	}
	run := &Run{Results: slices.Concat(pair("", 40, 50), pair("-r2", 60, 50), pair("-r3", 45, 40), big("", 20, 26), big("-r2", 20, 21))}
	var got []Target
	for _, tg := range targets(run) {
		if !strings.Contains(tg.Figure, "CPU") && !strings.Contains(tg.Figure, "RSS") {
			got = append(got, tg)
		}
	}
	want := []Target{
		{Figure: "burst-500: pod+Service creation rate vs raw-client-500x4 (50.0 s vs 40.0 s)", Value: 0.8, Goal: ">= 1.00"},
		{Figure: "burst-500-r2: pod+Service creation rate vs raw-client-500x4-r2 (50.0 s vs 60.0 s)", Value: 1.2, Goal: ">= 1.00", Met: true},
		{Figure: "burst-500-r3: pod+Service creation rate vs raw-client-500x4-r3 (40.0 s vs 45.0 s)", Value: 1.125, Goal: ">= 1.00", Met: true},
		{Figure: "bigjob-1000: pods and services created, time vs raw-client-1x1000 (26.0 s vs 20.0 s)", Value: 1.3, Goal: "<= 1.10"},
		{Figure: "bigjob-1000-r2: pods and services created, time vs raw-client-1x1000-r2 (21.0 s vs 20.0 s)", Value: 1.05, Goal: "<= 1.10", Met: true},
		{Figure: "burst-500: median of 3 repetitions (0.80, 1.20, 1.12)", Value: 1.125, Goal: ">= 1.00", Met: true},
		// An even count takes the mean of the middle two; lower is better here.
		{Figure: "bigjob-1000: median of 2 repetitions (1.30, 1.05)", Value: 1.175, Goal: "<= 1.10"},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}

func TestRepeatedScenarioOrder(t *testing.T) {
	o := options{sizes: quickSizes, repeat: 2, only: map[string]bool{"raw": true, "burst": true, "bigjob": true}}
	var names []string
	for _, s := range o.scenarios() {
		names = append(names, s.name)
	}
	// The tracked burst runs once, after the pairs.
	want := []string{"raw-client-50x4", "burst-50", "raw-client-50x4-r2", "burst-50-r2", "burst-tracked-50",
		"raw-client-1x200", "bigjob-200", "raw-client-1x200-r2", "bigjob-200-r2"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("scenario order (-want +got):\n%s", diff)
	}
}

func TestScenarioLists(t *testing.T) {
	names := func(o options) []string {
		var out []string
		for _, s := range o.scenarios() {
			out = append(out, s.name)
		}
		return out
	}
	quick := names(options{sizes: quickSizes, repeat: 1})
	if want := []string{"raw-client-50x4", "burst-50", "burst-tracked-50", "raw-client-1x200", "bigjob-200", "steady-5ps-20s",
		"request-cost-50", "list-cost-2000", "restart-policy-128", "scale-25", "scale-50", "scale-100", "scale-200", "kueue-builtin-50", "kueue-operator-50", "restart-200"}; !slices.Equal(quick, want) {
		t.Errorf("quick scenarios = %v, want %v", quick, want)
	}
	full := names(options{sizes: fullSizes, repeat: 1})
	if last := full[len(full)-9:]; !slices.Equal(last, []string{"retained-5000", "restart-policy-128",
		"scale-250", "scale-500", "scale-1000", "scale-2000", "kueue-builtin-500", "kueue-operator-500", "restart-5000"}) {
		t.Errorf("full scenarios end with %v", last)
	}
	if !slices.Contains(full, "burst-tracked-500") {
		t.Errorf("full scenarios %v lack burst-tracked-500", full)
	}
	// "restart" is the operator's restart alone; the whole-job restart is
	// picked by its own name.
	for only, want := range map[string][]string{
		"restart":        {"restart-200"},
		"restart-":       {"restart-200"},
		"restart-policy": {"restart-policy-128"},
		"burst":          {"burst-50", "burst-tracked-50"},
		"burst-tracked":  {"burst-tracked-50"},
		"kueue":          {"kueue-builtin-50", "kueue-operator-50"},
		"scale":          {"scale-25", "scale-50", "scale-100", "scale-200"},
	} {
		if got := names(options{sizes: quickSizes, repeat: 1, only: map[string]bool{only: true}}); !slices.Equal(got, want) {
			t.Errorf("--scenarios %s = %v, want %v", only, got, want)
		}
	}
}

// The whole-job restart is judged against the fresh job of the same
// scenario, and only once both were measured; the operator restart's
// targets do not apply to it.
func TestRestartPolicyTarget(t *testing.T) {
	m := func(name string, v float64) Metric { return Metric{Name: name, Value: v, Unit: "s"} }
	run := &Run{Results: []*Result{
		{Scenario: "restart-policy-128", Jobs: 2, Metrics: []Metric{m(restartPolicyPods, 3), m(restartPolicyFreshPods, 2.4),
			m(restartReadyMetric, 99)}},
	}}
	want := []Target{{Figure: "restart-policy-128: " + restartPolicyPods + " vs " + restartPolicyFreshPods + " (3.0 s vs 2.4 s)",
		Value: 1.25, Goal: "<= 1.20"}}
	if diff := cmp.Diff(want, targets(run), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	// Not restarted (0: not reached): no target rather than one met.
	run.Results[0].Metrics[0].Value = 0
	if got := targets(run); len(got) != 0 {
		t.Errorf("targets without the restart = %+v", got)
	}
}

// A tracked burst may add one PATCH per pod (the finalizer's release) to
// the plain burst's floor, and is set beside the plain burst per job.
func TestTrackedBurst(t *testing.T) {
	result := func(name string, requests, patches int) *Result {
		return &Result{Scenario: name, Jobs: 10, Pods: 40,
			API: &APICost{Total: requests, ProxyTotal: -1, Reconciles: map[string]int{"success": 50},
				Methods: []MethodCount{{"PATCH", "200", patches}, {"POST", "201", requests - patches}}},
			Activity:  &JobActivity{Jobs: 10, StatusWrites: 30, MaxStatusWrites: 3},
			Footprint: Footprint{CPUSeconds: 0.1}}
	}
	run := &Run{Results: []*Result{result("burst-10", 150, 30), result("burst-tracked-10", 190, 70)}}
	var got []Target
	for _, tg := range targets(run) {
		if strings.HasPrefix(tg.Figure, "burst-tracked-10") {
			got = append(got, tg)
		}
	}
	want := []Target{
		{Figure: "burst-tracked-10: 409 conflicts", Value: 0, Goal: "0", Met: true},
		{Figure: "burst-tracked-10: API requests / job vs 8 creates + 4 finalizer PATCHes + status writes + 4 Events", Value: 19, Goal: "<= 19.05", Met: true},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("tracked burst targets (-want +got):\n%s", diff)
	}
	md := trackedCostMarkdown(run)
	for _, row := range []string{"| API requests | 15.00 | 19.00 | +4.00 |", "| PATCH requests | 3.00 | 7.00 | +4.00 |", "| status writes (watch) | 3.00 | 3.00 | +0.00 |"} {
		if !strings.Contains(md, row) {
			t.Errorf("tracked cost markdown lacks %q:\n%s", row, md)
		}
	}
	if trackedCostMarkdown(&Run{Results: run.Results[1:]}) != "" {
		t.Error("a tracked burst without its plain burst is set beside nothing")
	}
}

// The webhook histogram's quantile interpolates within the bucket, as
// Prometheus' histogram_quantile does.
func TestHistogramQuantile(t *testing.T) {
	text := `# TYPE controller_runtime_webhook_latency_seconds histogram
controller_runtime_webhook_latency_seconds_bucket{webhook="/a",le="0.005"} 50
controller_runtime_webhook_latency_seconds_bucket{webhook="/a",le="0.01"} 90
controller_runtime_webhook_latency_seconds_bucket{webhook="/a",le="0.025"} 100
controller_runtime_webhook_latency_seconds_bucket{webhook="/a",le="+Inf"} 100
controller_runtime_webhook_latency_seconds_bucket{webhook="/b",le="0.005"} 50
controller_runtime_webhook_latency_seconds_bucket{webhook="/b",le="0.01"} 90
controller_runtime_webhook_latency_seconds_bucket{webhook="/b",le="0.025"} 100
controller_runtime_webhook_latency_seconds_bucket{webhook="/b",le="+Inf"} 100
`
	h := bucketsOf(text, webhookLatencyMetric)
	if h.count() != 200 {
		t.Fatalf("count %v, want 200", h.count())
	}
	if got := h.quantile(0.5); math.Abs(got-0.005) > 1e-9 {
		t.Errorf("p50 %v, want 0.005", got)
	}
	// rank 198 of 200 is in (0.01, 0.025]: 180 below, 20 in it.
	if got, want := h.quantile(0.99), 0.01+0.015*18/20; math.Abs(got-want) > 1e-9 {
		t.Errorf("p99 %v, want %v", got, want)
	}
	if d := h.since(h); d.count() != 0 || !math.IsNaN(d.quantile(0.99)) {
		t.Errorf("an empty difference: count %v, p99 %v", d.count(), d.quantile(0.99))
	}
}

func TestKueueTargetsCompareTheModesOfOneRepetition(t *testing.T) {
	result := func(name string, totalCPU, p99 float64) *Result {
		return &Result{Scenario: name, Jobs: 500, Metrics: []Metric{
			{kueueTotalCPUMetric, totalCPU, "ms"}, {"create→Running p99", p99, "s"}}}
	}
	run := &Run{Results: []*Result{
		result("kueue-builtin-500", 100, 20), result("kueue-operator-500", 105, 21),
		result("kueue-builtin-500-r2", 100, 20), result("kueue-operator-500-r2", 120, 19),
	}}
	var got []string
	for _, tg := range targets(run) {
		got = append(got, fmt.Sprintf("%s %.2f %s %v", tg.Figure, tg.Value, tg.Goal, tg.Met))
	}
	want := []string{
		"kueue-operator-500: operator + Kueue CPU / job vs kueue-builtin-500 (105.0 ms vs 100.0 ms) 1.05 <= 1.10 true",
		"kueue-operator-500: create→Running p99 vs kueue-builtin-500 (21.0 s vs 20.0 s) 1.05 <= 1.00 false",
		"kueue-operator-500-r2: operator + Kueue CPU / job vs kueue-builtin-500-r2 (120.0 ms vs 100.0 ms) 1.20 <= 1.10 false",
		"kueue-operator-500-r2: create→Running p99 vs kueue-builtin-500-r2 (19.0 s vs 20.0 s) 0.95 <= 1.00 true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}

// The scale curve's targets compare its largest size with its smallest,
// whatever order the results came in; a failed size is left out.
func TestScaleTargets(t *testing.T) {
	point := func(n int, cpu, rss float64, err string) *Result {
		return &Result{Scenario: fmt.Sprintf("scale-%d", n), Jobs: n, Error: err,
			Footprint: Footprint{CPUSeconds: cpu, PeakRSSMiB: rss}}
	}
	for _, tc := range []struct {
		name    string
		results []*Result
		want    []bool // CPU, RSS
	}{
		{"flat cost, sub-linear RSS", []*Result{point(250, 2.5, 60, ""), point(2000, 20, 120, "")}, []bool{true, true}},
		{"CPU per job 1.3x", []*Result{point(2000, 26, 120, ""), point(250, 2.5, 60, "")}, []bool{false, true}},
		{"RSS super-linear", []*Result{point(250, 2.5, 10, ""), point(2000, 20, 100, "")}, []bool{true, false}},
		{"a failed largest size is left out", []*Result{point(250, 2.5, 60, ""), point(500, 5, 70, ""), point(2000, 40, 900, "timeout")}, []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := scaleTargets(&Run{Results: tc.results})
			var met []bool
			for _, x := range ts {
				met = append(met, x.Met)
			}
			if !slices.Equal(met, tc.want) {
				t.Errorf("targets met = %v, want %v (%+v)", met, tc.want, ts)
			}
			if md := scaleMarkdown(&Run{Results: tc.results}); !strings.Contains(md, "| 250 | 10.00 ms | 1.00x | 60.0 MiB |") && tc.results[0].Footprint.PeakRSSMiB == 60 {
				t.Errorf("scale table lacks the smallest size's row:\n%s", md)
			}
		})
	}
	if ts := scaleTargets(&Run{Results: []*Result{point(250, 2.5, 60, "")}}); len(ts) != 0 {
		t.Errorf("one size has no curve, got targets %+v", ts)
	}
}

// A burst's status writes meet their target only with both the mean and
// every job's count at most three.
func TestStatusWritesTargetNeedsTheMax(t *testing.T) {
	for _, tc := range []struct {
		writes, max int
		met         bool
	}{{300, 3, true}, {290, 4, false}, {310, 3, false}} {
		run := &Run{Results: []*Result{{Scenario: "burst-100", Jobs: 100,
			Activity: &JobActivity{Jobs: 100, StatusWrites: tc.writes, MaxStatusWrites: tc.max}}}}
		var found bool
		for _, x := range targets(run) {
			if strings.Contains(x.Figure, "status writes") {
				found = true
				if x.Met != tc.met {
					t.Errorf("%d writes, max %d: met %v, want %v", tc.writes, tc.max, x.Met, tc.met)
				}
			}
		}
		if !found {
			t.Errorf("%d writes, max %d: no status writes target", tc.writes, tc.max)
		}
	}
}
