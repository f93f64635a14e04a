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
	"context"
	"fmt"
	"slices"
	"strings"
)

// scalePrefix names the scale curve's bursts, scale-<n>: the burst of n
// 1+3 PyTorchJobs at each of the sizes' scale sizes, to show whether a
// job's cost stays flat as the cluster's job count grows.
const scalePrefix = "scale-"

// scaleCPUGoal bounds operator CPU per job at the largest size against the
// smallest: cost per job stays flat.
const scaleCPUGoal = 1.2

// scaleBurst is the burst of n jobs on a freshly started operator, so that
// its peak RSS is this size's own and not what a larger or earlier burst
// left in the heap (the restart is outside the measurement window).
func scaleBurst(n int) scenario {
	s := burstOf(fmt.Sprintf("%s%d", scalePrefix, n), n, nil)
	s.before = func(ctx context.Context, e *env, _ *Result) error { return e.operator.restartWith(ctx) }
	return s
}

// scalePoint is one size of the scale curve.
type scalePoint struct {
	jobs int
	res  *Result
}

// scaleCurve is the run's scale-<n> results without error, smallest first.
func scaleCurve(run *Run) []scalePoint {
	var out []scalePoint
	for _, res := range run.Results {
		var n int
		if _, err := fmt.Sscanf(res.Scenario, scalePrefix+"%d", &n); err != nil || res.Error != "" || res.Jobs == 0 {
			continue
		}
		out = append(out, scalePoint{jobs: res.Jobs, res: res})
	}
	slices.SortStableFunc(out, func(a, b scalePoint) int { return a.jobs - b.jobs })
	return out
}

func (p scalePoint) cpuPerJobMs() float64 {
	return 1000 * p.res.Footprint.CPUSeconds / float64(p.jobs)
}

// scaleTargets: CPU per job at the largest size at most scaleCPUGoal times
// that at the smallest; peak RSS growing at most linearly with the jobs the
// cache holds, i.e. peak RSS per job not above the smallest size's.
func scaleTargets(run *Run) []Target {
	c := scaleCurve(run)
	if len(c) < 2 {
		return nil
	}
	lo, hi := c[0], c[len(c)-1]
	cpu := hi.cpuPerJobMs() / lo.cpuPerJobMs()
	rssLo, rssHi := lo.res.Footprint.PeakRSSMiB/float64(lo.jobs), hi.res.Footprint.PeakRSSMiB/float64(hi.jobs)
	name := fmt.Sprintf("scale %d→%d jobs", lo.jobs, hi.jobs)
	return []Target{
		{Figure: name + ": operator CPU / job, ratio", Value: cpu, Goal: fmt.Sprintf("<= %g", scaleCPUGoal), Met: lo.cpuPerJobMs() > 0 && cpu <= scaleCPUGoal},
		{Figure: name + ": peak RSS / job, ratio (at most linear growth)", Value: rssHi / rssLo, Goal: "<= 1", Met: rssLo > 0 && rssHi <= rssLo},
	}
}

// scaleMarkdown is the scale curve as one table: per size, CPU per job,
// peak RSS and its growth per 1,000 more jobs since the previous size.
func scaleMarkdown(run *Run) string {
	c := scaleCurve(run)
	if len(c) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Scale curve (a fresh operator per size)\n\n")
	b.WriteString("| jobs | operator CPU / job | vs smallest | peak RSS | MiB per 1,000 more jobs | RSS at end: anonymous / file | create→all pods p99 | all jobs Succeeded |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, p := range c {
		f := p.res.Footprint
		growth := "–"
		if i > 0 {
			prev := c[i-1]
			growth = fmt.Sprintf("%.1f", 1000*(f.PeakRSSMiB-prev.res.Footprint.PeakRSSMiB)/float64(p.jobs-prev.jobs))
		}
		fmt.Fprintf(&b, "| %d | %.2f ms | %.2fx | %.1f MiB | %s | %.1f / %.1f MiB | %s | %s |\n",
			p.jobs, p.cpuPerJobMs(), p.cpuPerJobMs()/c[0].cpuPerJobMs(), f.PeakRSSMiB, growth, f.RSSAnonMiB, f.RSSFileMiB,
			formatValue(metric(p.res, "create→all pods p99"), "s"), formatValue(metric(p.res, "all jobs Succeeded"), "s"))
	}
	return b.String()
}
