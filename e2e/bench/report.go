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
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Report is everything one bench invocation measured; it is written as
// report.json and rendered as report.md.
type Report struct {
	Started time.Time `json:"started"`
	Mode    string    `json:"mode"`
	Runs    []*Run    `json:"runs"`
}

// Run is one operator binary benchmarked on its own fresh control plane.
type Run struct {
	Label    string    `json:"label"`
	Operator string    `json:"operator"`
	Args     []string  `json:"args"`
	Nodes    int       `json:"nodes"`
	Results  []*Result `json:"results"`
	// Footprint over the whole run (operator start to last scenario).
	Footprint Footprint `json:"footprint"`
	// Targets are the targets evaluated on this run.
	Targets []Target `json:"targets,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Result is one scenario.
type Result struct {
	Scenario string `json:"scenario"`
	// Jobs is the number of PyTorchJobs the scenario created (API cost is
	// divided by it); 0 for the raw-client scenario.
	Jobs    int      `json:"jobs"`
	Pods    int      `json:"pods"`
	Metrics []Metric `json:"metrics"`
	API     *APICost `json:"api,omitempty"`
	// Activity is what the bench's watches saw on the jobs.
	Activity  *JobActivity `json:"activity,omitempty"`
	Footprint Footprint    `json:"footprint"`
	// Creation is the CPU every process used from the scenario's start until
	// its last pod and Service existed: the phase its creation figures time.
	Creation *PhaseCPU `json:"creationPhase,omitempty"`
	Error    string    `json:"error,omitempty"`

	// creationFrom and creationTo bound Creation; set by the scenario.
	creationFrom, creationTo time.Time
	// namespace holds the scenario's jobs; the scenario's name if empty.
	namespace string
}

// PhaseCPU is the CPU time of each process (the operator, the bench client
// and every control-plane process) over a phase of a scenario.
type PhaseCPU struct {
	// Seconds is the sampled span covering the phase (up to one sampling
	// interval longer at each end).
	Seconds    float64            `json:"seconds"`
	CPUSeconds map[string]float64 `json:"cpuSeconds"`
}

// metrics are the phase's CPU per process and the cores they kept busy.
func (p *PhaseCPU) metrics(phase string) []Metric {
	if p == nil || p.Seconds <= 0 {
		return nil
	}
	out, total := processCPUMetrics(phase+": ", p.CPUSeconds)
	return append(out, Metric{phase + ": cores busy", total / p.Seconds, "cores"})
}

// processCPUMetrics is one "<prefix><process> CPU" metric per process, in
// name order, and their sum.
func processCPUMetrics(prefix string, cpu map[string]float64) (out []Metric, total float64) {
	for _, name := range slices.Sorted(maps.Keys(cpu)) {
		total += cpu[name]
		out = append(out, Metric{prefix + name + " CPU", cpu[name], "s"})
	}
	return out, total
}

// Metric is one named number of a scenario.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Footprint is the operator's resource use during a window.
type Footprint struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakRSSMiB is VmHWM: the peak since the window started when the
	// kernel allows resetting it (/proc/<pid>/clear_refs), else since start.
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// RSSMiB is VmRSS at the end of the window, and its anonymous (heap,
	// stacks) and file-backed (the binary's pages) parts.
	RSSMiB     float64 `json:"rssMiB"`
	RSSAnonMiB float64 `json:"rssAnonMiB,omitempty"`
	RSSFileMiB float64 `json:"rssFileMiB,omitempty"`
	// ControlPlaneCPUSeconds is each control-plane process's CPU time during
	// the window (kube-apiserver, etcd, ...), and BenchCPUSeconds the bench's
	// own (its clients, proxies and watches). With the operator's CPU and
	// WallSeconds they show how busy the machine's cores were, and where.
	ControlPlaneCPUSeconds map[string]float64 `json:"controlPlaneCPUSeconds,omitempty"`
	BenchCPUSeconds        float64            `json:"benchCPUSeconds,omitempty"`
	WallSeconds            float64            `json:"wallSeconds,omitempty"`
}

// cpuMetrics are the window's CPU figures: per control-plane process, the
// bench's, and the cores all of them kept busy on average.
func (f Footprint) cpuMetrics() []Metric {
	if f.WallSeconds <= 0 || len(f.ControlPlaneCPUSeconds) == 0 {
		return nil
	}
	out, cp := processCPUMetrics("", f.ControlPlaneCPUSeconds)
	total := cp + f.CPUSeconds + f.BenchCPUSeconds
	return append(out,
		Metric{"bench client CPU", f.BenchCPUSeconds, "s"},
		Metric{"cores busy (all processes / wall time)", total / f.WallSeconds, "cores"})
}

// APICost is what the operator sent to the apiserver during a scenario,
// counted by its own client metrics (rest_client_requests_total), and with
// --proxy also by the accounting proxy in front of the apiserver.
type APICost struct {
	// Total is the delta of the operator's rest_client_requests_total; -1
	// if its metrics could not be read (then the proxy's count, if any,
	// stands in: see Requests).
	Total int `json:"total"`
	// Methods is that delta by HTTP method and response code.
	Methods []MethodCount `json:"methods,omitempty"`
	// ProxyTotal and Requests are the proxy's count and its breakdown by
	// verb, resource and code (--proxy only; ProxyTotal is -1 without it).
	ProxyTotal int        `json:"proxyTotal"`
	Requests   []APICount `json:"requests,omitempty"`
	// ThrottleSeconds is the delta of
	// rest_client_rate_limiter_duration_seconds_sum: time requests waited in
	// the client-side rate limiter (QPS/burst), summed over requests.
	ThrottleSeconds float64 `json:"throttleSeconds"`
	// Reconciles is the delta of controller_runtime_reconcile_total by result.
	Reconciles map[string]int `json:"reconciles,omitempty"`
	// MeanReconcileSeconds and MeanQueueWaitSeconds are the means of
	// controller_runtime_reconcile_time_seconds and
	// workqueue_queue_duration_seconds (all controllers) in the window.
	MeanReconcileSeconds float64 `json:"meanReconcileSeconds"`
	MeanQueueWaitSeconds float64 `json:"meanQueueWaitSeconds"`
	// EventsWaiting is how many Events the operator had recorded and not
	// yet written when the scenario ended: Events that lag behind the jobs.
	EventsWaiting float64 `json:"eventsWaiting"`
}

// MethodCount is the number of requests with one HTTP method and code.
type MethodCount struct {
	Method string `json:"method"`
	Code   string `json:"code"`
	Count  int    `json:"count"`
}

// APICount is the number of requests with one verb, resource and status code.
type APICount struct {
	Verb     string `json:"verb"`
	Resource string `json:"resource"`
	Code     int    `json:"code"`
	Count    int    `json:"count"`
}

// fromMetrics reports whether the operator's metrics were read; else the
// counts come from the proxy.
func (a *APICost) fromMetrics() bool { return a.Total >= 0 }

// RequestTotal counts every request: the operator's metrics, else the proxy.
func (a *APICost) RequestTotal() int {
	if a.fromMetrics() {
		return a.Total
	}
	return max(a.ProxyTotal, 0)
}

// Conflicts counts 409 responses.
func (a *APICost) Conflicts() int {
	if a.fromMetrics() {
		return a.methods(func(c MethodCount) bool { return c.Code == "409" })
	}
	return a.count(func(c APICount) bool { return c.Code == 409 })
}

// Writes counts POST, PUT, PATCH and DELETE requests (create, update,
// patch, apply, delete and deletecollection).
func (a *APICost) Writes() int {
	if a.fromMetrics() {
		return a.methods(func(c MethodCount) bool {
			switch c.Method {
			case "POST", "PUT", "PATCH", "DELETE":
				return true
			}
			return false
		})
	}
	return a.count(func(c APICount) bool { return isWrite(c.Verb) })
}

// Patches counts PATCH requests (the patch and apply verbs).
func (a *APICost) Patches() int {
	if a.fromMetrics() {
		return a.methods(func(c MethodCount) bool { return c.Method == "PATCH" })
	}
	return a.count(func(c APICount) bool { return c.Verb == "patch" || c.Verb == "apply" })
}

// ProxyEvents counts event writes (core and events.k8s.io) seen by the proxy.
func (a *APICost) ProxyEvents() int {
	return a.count(func(c APICount) bool {
		return isWrite(c.Verb) && (c.Resource == "events" || c.Resource == "events.events.k8s.io")
	})
}

// ProxyStatusWrites counts writes to kubeflow.org status subresources seen
// by the proxy.
func (a *APICost) ProxyStatusWrites() int {
	return a.count(func(c APICount) bool {
		return isWrite(c.Verb) && strings.HasSuffix(c.Resource, ".kubeflow.org/status")
	})
}

func (a *APICost) count(match func(APICount) bool) int {
	n := 0
	for _, c := range a.Requests {
		if match(c) {
			n += c.Count
		}
	}
	return n
}

func (a *APICost) methods(match func(MethodCount) bool) int {
	n := 0
	for _, c := range a.Methods {
		if match(c) {
			n += c.Count
		}
	}
	return n
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "apply", "delete", "deletecollection":
		return true
	}
	return false
}

// JobActivity is what the bench's own watches saw happen to a scenario's
// jobs, whoever the client and however it connects: status writes (a
// MODIFIED event whose .status changed) and the Events whose involvedObject
// is one of the jobs.
type JobActivity struct {
	Jobs int `json:"jobs"`
	// StatusWrites is the sum over jobs, MaxStatusWrites the most on one job.
	StatusWrites    int `json:"statusWrites"`
	MaxStatusWrites int `json:"maxStatusWrites"`
	// EventObjects is the number of distinct Event objects, EventCount the
	// sum of their count fields (aggregated repeats included).
	EventObjects int `json:"eventObjects"`
	EventCount   int `json:"eventCount"`
	// OverGoalWrites counts the jobs with more status writes than the goal
	// by their sequence of writes: what each changed, and the seconds since
	// the write before.
	OverGoalWrites map[string]int `json:"overGoalWrites,omitempty"`
}

// Percentiles summarises a latency sample.
type Percentiles struct {
	N                  int
	P50, P95, P99, Max float64
}

// percentile returns the p-th percentile (0..100) of sorted values, linearly
// interpolated between the closest ranks (numpy's default). It returns 0 for
// an empty slice.
func percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	p = math.Max(0, math.Min(100, p))
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}

// summarize computes percentiles of durations in seconds.
func summarize(samples []time.Duration) Percentiles {
	v := make([]float64, len(samples))
	for i, d := range samples {
		v[i] = d.Seconds()
	}
	slices.Sort(v)
	if len(v) == 0 {
		return Percentiles{}
	}
	return Percentiles{N: len(v), P50: percentile(v, 50), P95: percentile(v, 95), P99: percentile(v, 99), Max: v[len(v)-1]}
}

// latencyMetrics renders a latency sample as p50/p95/p99/max metrics; it
// returns nothing for an empty sample.
func latencyMetrics(name string, samples []time.Duration) []Metric {
	p := summarize(samples)
	if p.N == 0 {
		return nil
	}
	return []Metric{
		{name + " p50", p.P50, "s"},
		{name + " p95", p.P95, "s"},
		{name + " p99", p.P99, "s"},
		{name + " max", p.Max, "s"},
	}
}

// Markdown renders the report: per run one table of scenario metrics and
// footprint, then the API requests of every job scenario per job.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# make bench (%s), %s\n", r.Mode, r.Started.Format(time.RFC3339))
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "\n## %s\n\n`%s %s` on %d nodes\n", run.Label, run.Operator, strings.Join(run.Args, " "), run.Nodes)
		if run.Error != "" {
			fmt.Fprintf(&b, "\n**error:** %s\n", run.Error)
		}
		b.WriteString("\n| scenario | metric | value |\n|---|---|---:|\n")
		for _, res := range run.Results {
			for _, m := range resultMetrics(res) {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", res.Scenario, m.Name, formatValue(m.Value, m.Unit))
			}
			if res.Error != "" {
				fmt.Fprintf(&b, "| %s | **error** | %s |\n", res.Scenario, strings.ReplaceAll(res.Error, "|", "/"))
			}
		}
		fmt.Fprintf(&b, "| whole run | operator CPU | %s |\n", formatValue(run.Footprint.CPUSeconds, "s"))
		fmt.Fprintf(&b, "| whole run | operator peak RSS | %s |\n", formatValue(run.Footprint.PeakRSSMiB, "MiB"))
		b.WriteString(targetsMarkdown(targets(run)))
		b.WriteString(trackedCostMarkdown(run))
		b.WriteString(scaleMarkdown(run))
		for _, res := range run.Results {
			b.WriteString(overGoalWritesMarkdown(res))
			if res.API == nil || res.Jobs == 0 {
				continue
			}
			j := float64(res.Jobs)
			if len(res.API.Methods) > 0 {
				fmt.Fprintf(&b, "\n### %s: operator API requests by method (rest_client_requests_total; %d jobs, %d pods)\n\n", res.Scenario, res.Jobs, res.Pods)
				b.WriteString("| method | code | total | per job |\n|---|---:|---:|---:|\n")
				for _, c := range res.API.Methods {
					fmt.Fprintf(&b, "| %s | %s | %d | %.2f |\n", c.Method, c.Code, c.Count, float64(c.Count)/j)
				}
			}
			if len(res.API.Requests) > 0 {
				fmt.Fprintf(&b, "\n### %s: operator API requests by resource (proxy; %d jobs, %d pods)\n\n", res.Scenario, res.Jobs, res.Pods)
				b.WriteString("| verb | resource | code | total | per job |\n|---|---|---:|---:|---:|\n")
				for _, c := range res.API.Requests {
					fmt.Fprintf(&b, "| %s | %s | %d | %d | %.2f |\n", c.Verb, c.Resource, c.Code, c.Count, float64(c.Count)/j)
				}
			}
		}
	}
	if len(r.Runs) == 2 {
		b.WriteString("\n" + compareMarkdown(r.Runs[0], r.Runs[1]))
	}
	return b.String()
}

// trackedCostMarkdown sets each tracked burst (burst-tracked-<n>, jobs
// with backoffLimit) beside the plain burst of the same size and
// repetition, per job: what failure accounting costs a job.
func trackedCostMarkdown(run *Run) string {
	byName := map[string]*Result{}
	for _, res := range run.Results {
		byName[res.Scenario] = res
	}
	perJob := func(res *Result, v float64) float64 { return v / float64(res.Jobs) }
	rows := []struct {
		name  string
		value func(*Result) float64
	}{
		{"API requests", func(r *Result) float64 { return perJob(r, float64(r.API.RequestTotal())) }},
		{"API writes", func(r *Result) float64 { return perJob(r, float64(r.API.Writes())) }},
		{"PATCH requests", func(r *Result) float64 { return perJob(r, float64(r.API.Patches())) }},
		{"status writes (watch)", func(r *Result) float64 {
			if r.Activity == nil {
				return 0
			}
			return perJob(r, float64(r.Activity.StatusWrites))
		}},
		{"reconciles", func(r *Result) float64 { return perJob(r, float64(r.API.reconciles())) }},
		{"operator CPU (ms)", func(r *Result) float64 { return perJob(r, 1000*r.Footprint.CPUSeconds) }},
	}
	var b strings.Builder
	for _, tracked := range run.Results {
		plain := byName["burst-"+strings.TrimPrefix(tracked.Scenario, trackedBurstPrefix)]
		if !strings.HasPrefix(tracked.Scenario, trackedBurstPrefix) || plain == nil {
			continue
		}
		if tracked.API == nil || plain.API == nil || tracked.Jobs == 0 || plain.Jobs == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### failure accounting: %s (backoffLimit) vs %s, per job\n\n| figure | %s | %s | difference |\n|---|---:|---:|---:|\n",
			tracked.Scenario, plain.Scenario, plain.Scenario, tracked.Scenario)
		for _, r := range rows {
			p, t := r.value(plain), r.value(tracked)
			fmt.Fprintf(&b, "| %s | %.2f | %.2f | %+.2f |\n", r.name, p, t, t-p)
		}
	}
	return b.String()
}

// overGoalWritesMarkdown lists the write sequences of the jobs with more
// status writes than the goal, most frequent first: what each write changed.
func overGoalWritesMarkdown(res *Result) string {
	if res.Activity == nil || len(res.Activity.OverGoalWrites) == 0 {
		return ""
	}
	seqs := make([]string, 0, len(res.Activity.OverGoalWrites))
	for s := range res.Activity.OverGoalWrites {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, k int) bool {
		a, b := res.Activity.OverGoalWrites[seqs[i]], res.Activity.OverGoalWrites[seqs[k]]
		return a > b || a == b && seqs[i] < seqs[k]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s: jobs with more than %d status writes, by what each write changed\n\n| jobs | writes |\n|---:|---|\n", res.Scenario, int(statusWritesPerJobGoal))
	for _, s := range seqs {
		fmt.Fprintf(&b, "| %d | %s |\n", res.Activity.OverGoalWrites[s], s)
	}
	return b.String()
}

// resultMetrics is a scenario's metrics followed by its derived API,
// activity and footprint figures.
func resultMetrics(res *Result) []Metric {
	out := slices.Clone(res.Metrics)
	j := float64(res.Jobs)
	if a := res.API; a != nil {
		if a.fromMetrics() {
			out = append(out, Metric{"API requests (operator's rest_client_requests_total)", float64(a.Total), "req"})
		}
		if a.ProxyTotal >= 0 {
			out = append(out, Metric{"API requests (proxy)", float64(a.ProxyTotal), "req"})
		}
		out = append(out, Metric{"409 conflicts", float64(a.Conflicts()), "req"})
		if res.Jobs > 0 {
			out = append(out,
				Metric{"API requests / job", float64(a.RequestTotal()) / j, "req"},
				Metric{"API writes / job", float64(a.Writes()) / j, "req"},
			)
			if a.ProxyTotal >= 0 {
				out = append(out,
					Metric{"status writes / job (proxy)", float64(a.ProxyStatusWrites()) / j, "req"},
					Metric{"event writes / job (proxy)", float64(a.ProxyEvents()) / j, "req"})
			}
			out = append(out, Metric{"reconciles / job", float64(a.reconciles()) / j, ""})
		}
		out = append(out,
			Metric{"mean reconcile duration", a.MeanReconcileSeconds, "s"},
			Metric{"mean workqueue wait", a.MeanQueueWaitSeconds, "s"},
			Metric{"Events not yet written at the end", a.EventsWaiting, ""})
		out = append(out, Metric{"client-side throttling (sum of waits)", a.ThrottleSeconds, "s"})
	}
	if act := res.Activity; act != nil && res.Jobs > 0 {
		out = append(out,
			Metric{"status writes / job (watch, mean)", float64(act.StatusWrites) / j, ""},
			Metric{"status writes / job (watch, max)", float64(act.MaxStatusWrites), ""},
			Metric{"Event objects / job", float64(act.EventObjects) / j, ""},
			Metric{"Events / job (sum of count)", float64(act.EventCount) / j, ""})
	}
	if res.Jobs > 0 {
		out = append(out, Metric{"operator CPU / job", 1000 * res.Footprint.CPUSeconds / j, "ms"})
	}
	return append(append(out,
		Metric{"operator CPU", res.Footprint.CPUSeconds, "s"},
		Metric{"operator peak RSS", res.Footprint.PeakRSSMiB, "MiB"},
		Metric{"operator RSS at end", res.Footprint.RSSMiB, "MiB"},
		Metric{"operator RSS at end: anonymous (heap, stacks)", res.Footprint.RSSAnonMiB, "MiB"},
		Metric{"operator RSS at end: file-backed (the binary's pages)", res.Footprint.RSSFileMiB, "MiB"},
	), append(res.Footprint.cpuMetrics(), res.Creation.metrics("until all created")...)...)
}

// reconciles is the number of reconciles of any result.
func (a *APICost) reconciles() int {
	total := 0
	for _, n := range a.Reconciles {
		total += n
	}
	return total
}

// compareMarkdown puts the metrics of two runs side by side with B/A ratios.
func compareMarkdown(a, b *Run) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "## compare: A = %s, B = %s\n\n| scenario | metric | A | B | B/A |\n|---|---|---:|---:|---:|\n", a.Label, b.Label)
	bIndex := map[string]Metric{}
	for _, res := range b.Results {
		for _, m := range resultMetrics(res) {
			bIndex[res.Scenario+"\x00"+m.Name] = m
		}
	}
	for _, res := range a.Results {
		for _, ma := range resultMetrics(res) {
			mb, ok := bIndex[res.Scenario+"\x00"+ma.Name]
			if !ok {
				continue
			}
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s |\n", res.Scenario, ma.Name,
				formatValue(ma.Value, ma.Unit), formatValue(mb.Value, mb.Unit), ratio(ma.Value, mb.Value))
		}
	}
	return sb.String()
}

func ratio(a, b float64) string {
	if a == 0 {
		if b == 0 {
			return "1.00"
		}
		return "n/a"
	}
	return fmt.Sprintf("%.2f", b/a)
}

func formatValue(v float64, unit string) string {
	var s string
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		s = fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		s = fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		s = fmt.Sprintf("%.2f", v)
	default:
		s = fmt.Sprintf("%.3f", v)
	}
	if unit == "" {
		return s
	}
	return s + " " + unit
}
