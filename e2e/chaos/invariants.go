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
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Invariant names, as reported.
const (
	ruleOutcome      = "outcome"           // the designed terminal condition
	ruleRestartCount = "restart-count"     // status.restartCount as designed
	ruleTwoLive      = "two-live-pods"     // never two live pods in one job/replica-type/index
	ruleSticky       = "terminal-sticky"   // Succeeded/Failed never lost or swapped
	ruleIncarnations = "incarnations"      // pods created per name as designed (no duplicates)
	ruleAfterFinish  = "pod-after-finish"  // a finished job creates no pods
	ruleUnknownPod   = "unexpected-pod"    // pods outside the job's replica slots
	ruleOperatorExit = "operator-exit"     // the operator exited without being killed
	ruleCreate       = "job-create-failed" // the harness could not create a job
)

// violation is one broken invariant.
type violation struct {
	Job    string `json:"job,omitempty"`
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// disruption is the harness's deletion of one running pod of a disrupt job.
type disruption struct {
	UID string    `json:"uid"`
	At  time.Time `json:"at"`
	// Late: the decisive pod had run long enough that it might finish the
	// job before the operator saw the deletion; the replacement is optional.
	Late bool `json:"late,omitempty"`
}

// checkInput is everything the checker needs; it is pure data so the
// checker can be unit-tested.
type checkInput struct {
	Expect    map[string]expectation // by namespace/name
	Final     map[string]jobObs      // latest state from the apiserver; missing: gone
	History   history
	Disrupted map[string]disruption // by job key
}

// checkStats are facts found while checking, reported next to violations.
type checkStats struct {
	// InfraDeletions are live pods deleted by neither the operator nor the
	// harness (KWOK deletes by name and can hit a replacement): each is a
	// legitimate retry, so bounds on retries and incarnations widen by them.
	InfraDeletions int `json:"infraDeletions"`
	// GapJobs are jobs that lived across a watch gap; their incarnations
	// are checked only from above.
	GapJobs int `json:"gapJobs"`
}

// check applies every invariant and returns the violations sorted by job.
func check(in checkInput) ([]violation, checkStats) {
	var vs []violation
	var stats checkStats
	add := func(job, rule, format string, args ...any) {
		vs = append(vs, violation{Job: job, Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}
	podsByJob := map[string][]podObs{}
	for _, p := range in.History.Pods {
		podsByJob[p.Job] = append(podsByJob[p.Job], p)
	}
	checkTwoLive(in.History.Pods, add)
	checkSticky(in.History.Jobs, add)

	span := jobSpans(in.History.Jobs)
	harness := map[string]bool{}
	for _, d := range in.Disrupted {
		harness[d.UID] = true
	}
	keys := make([]string, 0, len(in.Expect))
	for k := range in.Expect {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		e := in.Expect[key]
		final, ok := in.Final[key]
		if !ok || final.Gone {
			add(key, ruleOutcome, "job is gone, want %s", e.Outcome)
			continue
		}
		got := terminalType(final)
		switch {
		case final.Succeeded && final.Failed:
			add(key, ruleOutcome, "both Succeeded and Failed are True")
		case got == "":
			add(key, ruleOutcome, "not finished, want %s (restartCount %d)", e.Outcome, final.RestartCount)
		case got != e.Outcome:
			add(key, ruleOutcome, "%s, want %s (%s policy %s exit %d)", got, e.Outcome, e.Design, e.Policy, e.Code)
		}

		pods := podsByJob[key]
		// Cleanup deletions follow the terminal status write; its observation
		// is precise to the millisecond, the condition's time only to the second.
		finishedAt := span[key].to
		if finishedAt.IsZero() {
			finishedAt = final.TerminalAt
		}
		ext := externalDeletions(pods, harness, finishedAt)
		extTotal := 0
		for _, n := range ext {
			extTotal += n
		}
		stats.InfraDeletions += extTotal

		lo, hi := e.RestartCount, e.RestartCount+int32(extTotal)
		if e.Design == designBackoff {
			// The limit caps the count; a counted infra deletion uses up a retry.
			lo, hi = max(0, e.RestartCount-int32(extTotal)), e.RestartCount
		}
		if !e.RestartExact {
			lo = 0
		}
		if rc := final.RestartCount; rc < lo || rc > hi {
			add(key, ruleRestartCount, "restartCount %d, want %s (%s policy %s exit %d, infra deletions %d)",
				rc, bounds(lo, hi), e.Design, e.Policy, e.Code, extTotal)
		}

		gap := overlapsGap(span[key], in.History.Gaps)
		if gap {
			stats.GapJobs++
		}
		checkIncarnations(key, e, pods, ext, in.Disrupted[key], gap, add)
		if !final.TerminalAt.IsZero() {
			for _, p := range firstSeen(pods) {
				// Both times have one-second resolution.
				if p.Created.After(final.TerminalAt.Add(time.Second)) {
					add(key, ruleAfterFinish, "pod %s (uid %s) created %s, job finished %s",
						p.Name, p.UID, p.Created.Format(time.TimeOnly), final.TerminalAt.Format(time.TimeOnly))
				}
			}
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Job < vs[j].Job })
	return vs, stats
}

func bounds(lo, hi int32) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

func terminalType(j jobObs) string {
	switch {
	case j.Succeeded:
		return "Succeeded"
	case j.Failed:
		return "Failed"
	}
	return ""
}

// checkTwoLive replays pod observations in arrival order (one watch stream,
// so in etcd order) and flags a slot holding two live pods at once.
func checkTwoLive(pods []podObs, add func(job, rule, format string, args ...any)) {
	live := map[string]podObs{} // slot -> live pod
	for _, p := range pods {
		slot := p.slot()
		cur, ok := live[slot]
		switch {
		case p.live():
			if ok && cur.UID != p.UID {
				add(p.Job, ruleTwoLive, "%s: pod %s (uid %s) is live while %s (uid %s) still is",
					slot, p.Name, p.UID, cur.Name, cur.UID)
			}
			live[slot] = p
		case ok && cur.UID == p.UID:
			delete(live, slot)
		}
	}
}

// checkSticky flags a job whose terminal condition disappears or changes.
func checkSticky(jobs []jobObs, add func(job, rule, format string, args ...any)) {
	first := map[string]string{}
	flagged := map[string]bool{}
	for _, j := range jobs {
		if j.Gone || flagged[j.Job] {
			continue
		}
		t := terminalType(j)
		want, done := first[j.Job]
		switch {
		case !done:
			if t != "" {
				first[j.Job] = t
			}
		case t != want || (j.Succeeded && j.Failed):
			add(j.Job, ruleSticky, "was %s, later observed Succeeded=%v Failed=%v at %s",
				want, j.Succeeded, j.Failed, j.At.Format(time.TimeOnly+".000"))
			flagged[j.Job] = true
		}
	}
}

// externalDeletions counts, per pod name, live pods deleted before the job
// finished by someone other than the harness. The operator deletes only
// failed pods while a job runs, and cleans up only after it finished.
func externalDeletions(pods []podObs, harness map[string]bool, terminalAt time.Time) map[string]int {
	out := map[string]int{}
	lastPhase := map[string]corev1.PodPhase{}
	counted := map[string]bool{}
	for _, p := range pods {
		if counted[p.UID] {
			continue
		}
		if !p.Deleting && !p.Gone {
			lastPhase[p.UID] = p.Phase
			continue
		}
		counted[p.UID] = true
		ph := lastPhase[p.UID]
		if ph == corev1.PodFailed || ph == corev1.PodSucceeded || harness[p.UID] {
			continue
		}
		if terminalAt.IsZero() || p.At.Before(terminalAt) {
			out[p.Name]++
		}
	}
	return out
}

// checkIncarnations compares distinct pod UIDs per name with the design.
func checkIncarnations(key string, e expectation, pods []podObs, ext map[string]int, d disruption, gap bool,
	add func(job, rule, format string, args ...any)) {
	uids := map[string]map[string]bool{}
	for _, p := range pods {
		if p.Index < 0 || p.RType == "" {
			add(key, ruleUnknownPod, "pod %s has no replica type/index labels", p.Name)
			continue
		}
		if uids[p.Name] == nil {
			uids[p.Name] = map[string]bool{}
		}
		uids[p.Name][p.UID] = true
	}
	if len(uids) > e.Replicas {
		add(key, ruleUnknownPod, "%d pod names, the job has %d replicas", len(uids), e.Replicas)
	}
	if e.Outcome == "Succeeded" && len(uids) < e.Replicas && !gap {
		add(key, ruleIncarnations, "only %d of %d replicas ever had a pod", len(uids), e.Replicas)
	}
	names := make([]string, 0, len(uids))
	for n := range uids {
		names = append(names, n)
	}
	for n := range e.Incarnations {
		if uids[n] == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		got := len(uids[name])
		lo := 1
		if n, ok := e.Incarnations[name]; ok {
			lo = n
		}
		hi := lo + ext[name]
		if name == e.DisruptPod && (d.UID == "" || d.Late) {
			lo = 1 // the harness did not delete it in time: a replacement is optional
		}
		if gap {
			lo = 0 // pods created and deleted during a watch gap are not seen
		}
		if got < lo || got > hi {
			add(key, ruleIncarnations, "pod %s had %d incarnations, want %s (%s policy %s exit %d, infra deletions %d)",
				name, got, bounds(int32(lo), int32(hi)), e.Design, e.Policy, e.Code, ext[name])
		}
	}
}

// firstSeen returns the first observation of every pod UID.
func firstSeen(pods []podObs) []podObs {
	seen := map[string]bool{}
	var out []podObs
	for _, p := range pods {
		if !seen[p.UID] {
			seen[p.UID] = true
			out = append(out, p)
		}
	}
	return out
}

type timeSpan struct{ from, to time.Time }

// jobSpans is each job's observed life: first observation to first terminal one.
func jobSpans(jobs []jobObs) map[string]timeSpan {
	out := map[string]timeSpan{}
	for _, j := range jobs {
		s, ok := out[j.Job]
		if !ok {
			s.from = j.At
		}
		if s.to.IsZero() && j.terminal() {
			s.to = j.At
		}
		out[j.Job] = s
	}
	return out
}

func overlapsGap(s timeSpan, gaps []time.Time) bool {
	for _, g := range gaps {
		if !g.Before(s.from.Add(-2*time.Second)) && (s.to.IsZero() || !g.After(s.to.Add(2*time.Second))) {
			return true
		}
	}
	return false
}
