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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Report is report.json.
type Report struct {
	Started     time.Time     `json:"started"`
	Profile     string        `json:"profile"`
	Seed        uint64        `json:"seed"`
	Lease       LeaseSettings `json:"lease"`
	Results     []*Result     `json:"results"`
	WallSeconds float64       `json:"wallSeconds"`
}

// LeaseSettings are the failover scenario's leader-election settings.
type LeaseSettings struct {
	Duration      string `json:"leaseDuration"`
	RenewDeadline string `json:"renewDeadline"`
	RetryPeriod   string `json:"retryPeriod"`
}

// Result is one scenario.
type Result struct {
	Scenario  string         `json:"scenario"`
	Seed      uint64         `json:"seed"`
	Started   time.Time      `json:"started"`
	Jobs      int            `json:"jobs"`
	Kinds     map[string]int `json:"kinds"`
	Designs   map[string]int `json:"designs"`
	Succeeded int            `json:"succeeded"`
	Failed    int            `json:"failed"`
	// Restarts is the sum of restartCount over all jobs.
	Restarts int `json:"restarts"`
	// WholeJobRestarts is the sum of status.restarts (failure policies).
	WholeJobRestarts int `json:"wholeJobRestarts"`
	// Tracked is how many jobs had backoffLimit or failurePolicy set.
	Tracked   int `json:"trackedJobs"`
	Pods      int `json:"pods"`
	Disrupted int `json:"disruptedPods"`
	// Suspended is how many jobs the harness suspended and resumed, and
	// SuspendedPods how many pods carried the operator's suspension mark.
	Suspended     int `json:"suspendedJobs"`
	SuspendedPods int `json:"suspendedPods"`

	FaultCount int     `json:"faultCount"`
	Faults     []fault `json:"faults"`

	Violations     []violation `json:"violations"`
	InfraDeletions int         `json:"infraDeletions"`
	WatchGaps      int         `json:"watchGaps"`

	MeanToProgressSeconds         float64 `json:"meanFaultToProgressSeconds"`
	MaxToProgressSeconds          float64 `json:"maxFaultToProgressSeconds"`
	MaxToLeaderSeconds            float64 `json:"maxKillToNewLeaderSeconds,omitempty"`
	AllTerminalSeconds            float64 `json:"burstToAllTerminalSeconds"`
	LastFaultToAllTerminalSeconds float64 `json:"lastFaultToAllTerminalSeconds"`
	WallSeconds                   float64 `json:"wallSeconds"`
	Error                         string  `json:"error,omitempty"`
}

// OK is true when every scenario ran and no invariant was violated.
func (r *Report) OK() bool {
	for _, res := range r.Results {
		if res.Error != "" || len(res.Violations) > 0 {
			return false
		}
	}
	return len(r.Results) > 0
}

func writeReport(dir string, r *Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644)
}

func secs(s float64) string {
	if s <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", s)
}

// Markdown renders the summary table, the faults and the violations.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Chaos report (%s profile, seed %d)\n\n", r.Profile, r.Seed)
	fmt.Fprintf(&b, "Started %s. Failover lease: duration %s, renew deadline %s, retry period %s.\n\n",
		r.Started.Format(time.RFC3339), r.Lease.Duration, r.Lease.RenewDeadline, r.Lease.RetryPeriod)
	b.WriteString("| Scenario | Jobs (ok/failed) | Pods | Restarts | Faults | Violations | Fault → progress (mean / max) | Kill → new leader (max) | Last fault → all terminal | Burst → all terminal | Wall |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, res := range r.Results {
		viol := fmt.Sprint(len(res.Violations))
		if res.Error != "" {
			viol += " + error"
		}
		fmt.Fprintf(&b, "| %s | %d (%d/%d) | %d | %d | %d | %s | %s / %s | %s | %s | %s | %s |\n",
			res.Scenario, res.Jobs, res.Succeeded, res.Failed, res.Pods, res.Restarts, res.FaultCount, viol,
			secs(res.MeanToProgressSeconds), secs(res.MaxToProgressSeconds), secs(res.MaxToLeaderSeconds),
			secs(res.LastFaultToAllTerminalSeconds), secs(res.AllTerminalSeconds), secs(res.WallSeconds))
	}
	b.WriteString("\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "## %s\n\n", res.Scenario)
		fmt.Fprintf(&b, "Jobs by kind: %s. By design: %s; tracked (backoffLimit or failurePolicy): %d. Whole-job restarts: %d. Pods deleted by the harness: %d; by others (infra): %d. Jobs suspended and resumed by the harness: %d (pods marked suspended: %d). Watch gaps (relists of the recorder, each a violation): %d.\n\n",
			counts(res.Kinds), counts(res.Designs), res.Tracked, res.WholeJobRestarts, res.Disrupted, res.InfraDeletions, res.Suspended, res.SuspendedPods, res.WatchGaps)
		if res.Error != "" {
			fmt.Fprintf(&b, "**Error:** %s\n\n", res.Error)
		}
		if len(res.Faults) > 0 {
			b.WriteString("| # | Fault | At | Duration | → first reconcile | → progress | → new leader | Operator ready | Note |\n|---|---|---|---|---|---|---|---|---|\n")
			for i, f := range res.Faults {
				fmt.Fprintf(&b, "| %d | %s | +%.1f s | %s | %s | %s | %s | %s | %s |\n", i+1, f.Type, f.At.Sub(res.Started).Seconds(),
					dur(f.End.Sub(f.At)), dur(f.ToReconcile), dur(f.ToProgress), dur(f.ToLeader), dur(f.Ready), strings.ReplaceAll(f.Note, "|", "/"))
			}
			b.WriteString("\n")
		}
		if len(res.Violations) == 0 {
			b.WriteString("No invariant violations.\n\n")
			continue
		}
		fmt.Fprintf(&b, "**%d invariant violations:**\n\n", len(res.Violations))
		for i, v := range res.Violations {
			if i == 50 {
				fmt.Fprintf(&b, "- ... %d more in report.json\n", len(res.Violations)-50)
				break
			}
			fmt.Fprintf(&b, "- `%s` %s: %s\n", v.Rule, v.Job, strings.ReplaceAll(v.Detail, "\n", " ⏎ "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func dur(d time.Duration) string {
	switch {
	case d < 0:
		return "none"
	case d == 0:
		return "-"
	}
	return d.Round(10 * time.Millisecond).String()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
