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
	"slices"
	"strings"
)

// Target is one of the targets, evaluated on one run: the operator's
// figure, the raw limit's from the same run where the target is a ratio.
type Target struct {
	Figure string  `json:"figure"`
	Value  float64 `json:"value"`
	Goal   string  `json:"goal"`
	Met    bool    `json:"met"`
}

// targets evaluates the targets on the scenarios of one run that
// have them: each burst and the big job against the raw client creating the
// same objects (the same repetition of it), and the API cost of a burst's
// 4-replica jobs. With repetitions, the median ratio of each pair follows.
func targets(run *Run) []Target {
	byName := map[string]*Result{}
	for _, res := range run.Results {
		byName[res.Scenario] = res
	}
	var out []Target
	// Each ratio target's repetitions, per base scenario in run order.
	type series struct {
		base string
		ts   []Target
		met  func(float64) bool
	}
	var all []*series
	ratio := func(base string, t Target, met func(float64) bool) {
		out = append(out, t)
		for _, s := range all {
			if s.base == base {
				s.ts = append(s.ts, t)
				return
			}
		}
		all = append(all, &series{base: base, ts: []Target{t}, met: met})
	}
	for _, res := range run.Results {
		if res.Error != "" {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(res.Scenario, "burst-%d", &n); err == nil {
			base := fmt.Sprintf("burst-%d", n)
			// Rate over the same pods: the raw client's time / ours.
			if t, ok := vsRaw(res, byName[fmt.Sprintf("raw-client-%dx4", n)+strings.TrimPrefix(res.Scenario, base)], "all pods created",
				"pod creation rate", true, ">= 0.80", atLeast80); ok {
				ratio(base, t, atLeast80)
			}
			if a := res.API; a != nil && res.Jobs > 0 {
				perJob := float64(a.Total) / float64(res.Jobs)
				out = append(out,
					Target{Figure: res.Scenario + ": API requests / job", Value: perJob, Goal: "<= 10", Met: perJob <= 10},
					Target{Figure: res.Scenario + ": 409 conflicts / job", Value: float64(a.Conflicts()) / float64(res.Jobs), Goal: "0", Met: a.Conflicts() == 0})
			}
		}
		if _, err := fmt.Sscanf(res.Scenario, "bigjob-%d", &n); err == nil {
			base := fmt.Sprintf("bigjob-%d", n)
			if t, ok := vsRaw(res, byName[fmt.Sprintf("raw-client-1x%d", n)+strings.TrimPrefix(res.Scenario, base)], "all pods and services created",
				"pods and services created, time", false, "<= 1.25", atMost125); ok {
				ratio(base, t, atMost125)
			}
		}
		if strings.HasPrefix(res.Scenario, "retained-") {
			rss := res.Footprint.PeakRSSMiB
			out = append(out, Target{Figure: res.Scenario + ": operator peak RSS (MiB)", Value: rss, Goal: "< 300", Met: rss > 0 && rss < 300})
		}
	}
	for _, s := range all {
		if len(s.ts) > 1 {
			out = append(out, median(s.base, s.ts, s.met))
		}
	}
	return out
}

func atLeast80(r float64) bool { return r >= 0.80 }
func atMost125(r float64) bool { return r <= 1.25 }

// median summarises the repetitions of one ratio target.
func median(base string, ts []Target, met func(float64) bool) Target {
	vals := make([]float64, len(ts))
	for i, t := range ts {
		vals[i] = t.Value
	}
	shown := make([]string, len(vals))
	for i, v := range vals {
		shown[i] = fmt.Sprintf("%.2f", v)
	}
	slices.Sort(vals)
	m := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		m = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	return Target{
		Figure: fmt.Sprintf("%s: median of %d repetitions (%s)", base, len(ts), strings.Join(shown, ", ")),
		Value:  m, Goal: ts[0].Goal, Met: met(m),
	}
}

// vsRaw compares a figure of an operator scenario with the same figure of
// the raw client in the same run: raw/ours when rate is set (higher is
// better), else ours/raw. It reports false when either side is missing.
func vsRaw(res, raw *Result, figure, what string, rate bool, goal string, met func(float64) bool) (Target, bool) {
	if raw == nil || raw.Error != "" {
		return Target{}, false
	}
	op, lim := metric(res, figure), metric(raw, figure)
	if op <= 0 || lim <= 0 {
		return Target{}, false
	}
	r := op / lim
	if rate {
		r = lim / op
	}
	return Target{
		Figure: fmt.Sprintf("%s: %s vs %s (%.1f s vs %.1f s)", res.Scenario, what, raw.Scenario, op, lim),
		Value:  r, Goal: goal, Met: met(r),
	}, true
}

func metric(res *Result, name string) float64 {
	for _, m := range res.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return 0
}

func targetsMarkdown(ts []Target) string {
	if len(ts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### targets (this run)\n\n| figure | value | target | met |\n|---|---:|---|---|\n")
	for _, t := range ts {
		met := "no"
		if t.Met {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %.2f | %s | %s |\n", t.Figure, t.Value, t.Goal, met)
	}
	return b.String()
}
