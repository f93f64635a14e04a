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
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Invariant names, as reported.
const (
	ruleOutcome      = "outcome"           // the designed terminal condition
	ruleRestartCount = "restart-count"     // status.restartCount as designed
	ruleTwoLive      = "two-live-pods"     // never two live pods in one job/replica-type/index
	ruleSticky       = "terminal-sticky"   // Succeeded/Failed never lost or swapped
	ruleIncarnations = "incarnations"      // pods created per name as designed (no duplicates)
	ruleLostPod      = "lost-pod"          // a pod hanging terminating is force-deleted once its node is lost, never before
	ruleRestarts     = "restarts"          // status.restarts and restartsCountTowardsMax as designed
	ruleAttempts     = "attempts"          // pods' restart-attempt labels match status.restarts, one pod per replica and attempt
	ruleOverlap      = "attempt-overlap"   // no pod of a new attempt while one of an older attempt still exists
	ruleCounterBack  = "counter-decreased" // restartCount, restarts, restartsCountTowardsMax never go down
	ruleAfterFinish  = "pod-after-finish"  // a finished job creates no pods
	ruleUnknownPod   = "unexpected-pod"    // pods outside the job's replica slots
	ruleOperatorExit = "operator-exit"     // the operator exited without being killed
	ruleNoTakeover   = "no-takeover"       // no standby took the lease within 4 lease durations of a leader kill
	ruleNotReady     = "not-ready"         // a restarted operator did not answer /readyz within readyWithin
	ruleNoReconcile  = "no-reconcile"      // the replica taking over reconciled nothing within reconcileWithin
	ruleCreate       = "job-create-failed" // the harness could not create a job
	ruleHistoryGap   = "history-gap"       // the recorder relisted: what happened before the list is unknown
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
	// Suspended are the jobs the harness suspended and resumed, by key
	// (for the report: their pods' suspension marks are what the checks read).
	Suspended map[string]bool
	// LostPods are the fp-lostnode jobs' hanging pods, by job key.
	LostPods map[string]lostPod
	// Leaderless are the spans with no operator reconciling: from a kill
	// to the replacement's first reconcile.
	Leaderless []timeSpan
}

// checkStats are facts found while checking, reported next to violations.
type checkStats struct {
	// InfraDeletions are live pods deleted by neither the operator nor the
	// harness (KWOK deletes by name and can hit a replacement): each is a
	// legitimate retry, so bounds on retries and incarnations widen by them.
	InfraDeletions int `json:"infraDeletions"`
}

// recorderJob names the harness's own recorder in violations about it.
const recorderJob = "(recorder)"

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
	checkCounters(in.History.Jobs, add)
	// The recorder's watches resume from their last revision; a relist
	// means one could not, and no bound below holds across what it missed
	// (a pod made and deleted meanwhile is in no list).
	for _, g := range in.History.Gaps {
		add(recorderJob, ruleHistoryGap, "the recorder's watch relisted at %s: changes before it may be missing", g.Format(time.TimeOnly))
	}

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
		dels := externalDeletions(pods, harness, finishedAt, final.TerminalAt)
		if e.MaxRestarts != nil {
			dels = policyDeletions(pods, harness, finishedAt, final.TerminalAt)
		}
		dels.seen = dels.seenBy(in.Leaderless)
		stats.InfraDeletions += dels.infraN

		lo, hi := restartCountBounds(e, dels)
		if rc := final.RestartCount; rc < lo || rc > hi {
			add(key, ruleRestartCount, "restartCount %d, want %s (%s)", rc, bounds(lo, hi), describe(e, dels))
		}
		lo, hi, counted := restartsBounds(e, dels)
		if r := final.Restarts; r < lo || r > hi {
			add(key, ruleRestarts, "restarts %d, want %s (%s)", r, bounds(lo, hi), describe(e, dels))
		}
		want := int32(0)
		if counted {
			want = final.Restarts
		}
		if final.RestartsCounted != want {
			add(key, ruleRestarts, "restartsCountTowardsMax %d of restarts %d, want %d (%s)", final.RestartsCounted, final.Restarts, want, describe(e, dels))
		}
		checkAttempts(key, e, final, pods, add)
		if e.LostPod != "" {
			checkLostPod(key, e, in.LostPods[key], add)
		}
		// A pass killed between its creates leaves a replica without a pod;
		// if the job's decisive pod finishes while no operator runs (KWOK
		// ends pods on a timer, rendezvous or not), the job is done when a
		// new leader looks, and its finishing pass rightly creates nothing
		// (seed 42 failover, pt-ok-096).
		decidedLeaderless := within(lastFinish(pods, finishedAt), in.Leaderless)
		checkIncarnations(key, e, final, pods, dels, in.Disrupted[key], decidedLeaderless, add)
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

// checkLostPod: the pod whose kubelet the harness took away hangs
// terminating once the restart deletes it; the operator must force-delete
// it once its node is lost (loseAfter later), and not while the node is
// Ready, whatever its lost-pod timeout says.
func checkLostPod(key string, e expectation, lp lostPod, add func(job, rule, format string, args ...any)) {
	switch {
	case lp.UID == "" || lp.Deleting.IsZero() || lp.Annotated.IsZero() || lp.Annotated.After(lp.Deleting) || lp.Finished:
		// Never running in attempt 0, never deleted (the job failed first),
		// deleted before its kubelet was taken away, or finished (deleted
		// at once): nothing hung.
	case !lp.Gone.IsZero() && !lostAt(lp.NodeLostSpans, lp.Gone):
		add(key, ruleLostPod, "pod %s (uid %s) hanging since %s was gone at %s, while its node %q was not lost (lost: %v)",
			e.LostPod, lp.UID, lp.Deleting.Format(time.TimeOnly), lp.Gone.Format(time.TimeOnly), lp.Node, lp.NodeLostSpans)
	case !lp.NodeLost.IsZero() && lp.Gone.IsZero():
		add(key, ruleLostPod, "pod %s (uid %s) on node %q, lost at %s, was never force-deleted",
			e.LostPod, lp.UID, lp.Node, lp.NodeLost.Format(time.TimeOnly))
	}
}

// lostAt reports t within a span its node was lost, or up to watchSkew
// after one ended (the node comes back once the pod is gone; the
// recorder's watch may show the pod's deletion that much later).
func lostAt(spans []lostSpan, t time.Time) bool {
	for _, s := range spans {
		if !t.Before(s.From) && (s.To.IsZero() || !t.After(s.To.Add(watchSkew))) {
			return true
		}
	}
	return false
}

// suspendedUIDs are the pods seen with the operator's suspension mark: it
// deleted them because their job was suspended, which is neither a failure
// nor someone else's deletion, and their replacements after the resume
// belong to the same attempt.
func suspendedUIDs(pods []podObs) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		if p.Suspended {
			out[p.UID] = true
		}
	}
	return out
}

func bounds(lo, hi int32) string {
	if hi == lo {
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

// deletions are a job's running pods deleted before it finished by others
// than the operator: the harness (its disruption) or anyone else (infra:
// KWOK deletes by name and can hit a replacement). Each is a legitimate
// retry, or under a failure policy a whole-job restart.
type deletions struct {
	infra  map[string]int // by pod name
	infraN int
	// infraDone are succeeded pods others deleted while the job ran (KWOK,
	// deleting by name after an apiserver restart): the operator makes the
	// slot's pod again, so each widens the incarnation bound, and nothing
	// else (a finished pod is no failure to count).
	infraDone map[string]int
	// endedOK are deleted running pods whose containers still exited 0
	// before the pod was gone: a pass that saw the pod terminating counted
	// it, one that saw it Succeeded did not. Either is right.
	endedOK int
	// revived are succeeded pods others deleted that were then seen running
	// while they terminated: KWOK, acting on a stale view, deletes a
	// succeeded pod by name and then patches it with its pod-ready status
	// (seed 42 kill, jax-disrupt-149: Succeeded, deleted, Running, gone). A
	// pass that saw it then saw a running pod deleted, a disruption to
	// count; one that did not counted nothing. Either is right: 0 or 1 each.
	revived int
	harness int
	// racing are those recorded after the pod finish that decided the job's
	// outcome: the pass that finished the job may have read its cache
	// before them, and a finished job counts nothing more. Those recorded
	// before it are in every cache that shows the decisive finish (one
	// watch on pods, in etcd order), so a tracked job has counted them.
	racing int
	// list is each deletion, in the order seen.
	list []deletion
	// seen are the deletions an untracked job must have counted: neither
	// racing the outcome nor ended 0, and far from any span with no
	// operator watching (seenBy). Without a finalizer the pod is gone within
	// milliseconds, so only a deletion the process saw is counted; a
	// running operator sees every one.
	seen int
}

// deletion is one pod deleted by others.
type deletion struct {
	at              time.Time
	racing, endedOK bool
}

func (d deletions) total() int { return d.infraN + d.harness }

// Around a span with no operator (kill to the replacement's first pass) a
// deletion may be lost by an untracked job: one seen shortly before it, by
// a process killed before its pass wrote the count (queues are seconds
// long under the full profile's load), or shortly after it, before the new
// process's handlers ran.
const (
	unseenBefore = 10 * time.Second
	unseenAfter  = 3 * time.Second
)

// seenBy counts the deletions a running operator watched and an untracked
// job therefore counted exactly.
func (d deletions) seenBy(leaderless []timeSpan) int {
	near := make([]timeSpan, len(leaderless))
	for i, s := range leaderless {
		near[i] = timeSpan{from: s.from.Add(-unseenBefore), to: s.to.Add(unseenAfter)}
	}
	n := 0
	for _, x := range d.list {
		if !x.racing && !x.endedOK && !within(x.at, near) {
			n++
		}
	}
	return n
}

func (d *deletions) add(p podObs, byHarness bool, decidedAt, terminalCond time.Time) {
	if byHarness {
		d.harness++
	} else {
		d.infra[p.Name]++
		d.infraN++
	}
	// After the deciding pod finish, or after the terminal condition's
	// (whole) second began: a relist after an apiserver restart replays a
	// finished job's cleanup deletions, without the pods' last phases, ahead
	// of the job's own terminal update.
	racing := (!decidedAt.IsZero() && p.At.After(decidedAt)) || (!terminalCond.IsZero() && p.At.After(terminalCond))
	if racing {
		d.racing++
	}
	d.list = append(d.list, deletion{at: p.At, racing: racing})
}

// addEndedOK marks the deletion just added as one whose containers still
// exited 0.
func (d *deletions) addEndedOK() {
	d.endedOK++
	d.list[len(d.list)-1].endedOK = true
}

// externalDeletions finds the live pods deleted before the job finished by
// anyone but the operator, which deletes only failed pods while a job runs
// and cleans up only after it finished.
func externalDeletions(pods []podObs, harness map[string]bool, terminalAt, terminalCond time.Time) deletions {
	d := deletions{infra: map[string]int{}, infraDone: map[string]int{}}
	decidedAt := lastFinish(pods, terminalAt)
	lastPhase := map[string]corev1.PodPhase{}
	finalPhase := map[string]corev1.PodPhase{}
	for _, p := range pods {
		finalPhase[p.UID] = p.Phase
	}
	counted := map[string]bool{}
	doneThenDeleted := map[string]bool{} // succeeded, then deleted by others
	suspended := suspendedUIDs(pods)
	for _, p := range pods {
		if doneThenDeleted[p.UID] && !finished(p.Phase) {
			delete(doneThenDeleted, p.UID)
			d.revived++
		}
		if counted[p.UID] {
			continue
		}
		if !p.Deleting && !p.Gone {
			lastPhase[p.UID] = p.Phase
			continue
		}
		counted[p.UID] = true
		if suspended[p.UID] || !beforeFinish(p, harness[p.UID], terminalAt) {
			continue
		}
		switch {
		case !finished(lastPhase[p.UID]):
			d.add(p, harness[p.UID], decidedAt, terminalCond)
			if finalPhase[p.UID] == corev1.PodSucceeded {
				d.addEndedOK()
			}
		case lastPhase[p.UID] == corev1.PodSucceeded && !harness[p.UID]:
			// The operator deletes no succeeded pod before the job finishes.
			d.infraDone[p.Name]++
			doneThenDeleted[p.UID] = true
		}
	}
	return d
}

// watchSkew is how far the recorder's pod watch may trail its job watch.
const watchSkew = time.Second

// beforeFinish reports whether a deletion seen at p.At may have come before
// the job finished (first seen terminal at terminalAt). The harness's
// deletion seen up to watchSkew later still may: the finishing pass may
// have counted it. Others' are not given that slack, as they cannot be
// told from the operator's cleanup deletions that follow the finish.
func beforeFinish(p podObs, byHarness bool, terminalAt time.Time) bool {
	switch {
	case terminalAt.IsZero():
		return true
	case byHarness:
		return p.At.Before(terminalAt.Add(watchSkew))
	}
	return p.At.Before(terminalAt)
}

// policyDeletions finds the deletions that ended an attempt of a
// failure-policy job. On a whole-job restart the operator deletes every pod
// of the attempt, running ones too, so a deletion is someone else's only if
// it is the attempt's first failure (in etcd order): the policy judges it,
// and any failure after it in the same attempt is not judged.
func policyDeletions(pods []podObs, harness map[string]bool, terminalAt, terminalCond time.Time) deletions {
	d := deletions{infra: map[string]int{}}
	decidedAt := lastFinish(pods, terminalAt)
	ended := map[string]bool{} // attempts whose first failure was seen
	lastPhase := map[string]corev1.PodPhase{}
	finalPhase := map[string]corev1.PodPhase{}
	for _, p := range pods {
		finalPhase[p.UID] = p.Phase
	}
	suspended := suspendedUIDs(pods)
	for _, p := range pods {
		if ended[p.Attempt] || (suspended[p.UID] && (p.Deleting || p.Gone)) {
			continue
		}
		if !p.Deleting && !p.Gone {
			if terminalAt.IsZero() || p.At.Before(terminalAt) {
				lastPhase[p.UID] = p.Phase
				ended[p.Attempt] = p.Phase == corev1.PodFailed
			}
			continue
		}
		if finished(lastPhase[p.UID]) || !beforeFinish(p, harness[p.UID], terminalAt) {
			continue
		}
		ended[p.Attempt] = true
		d.add(p, harness[p.UID], decidedAt, terminalCond)
		if finalPhase[p.UID] == corev1.PodSucceeded {
			d.addEndedOK()
		}
	}
	return d
}

func finished(ph corev1.PodPhase) bool { return ph == corev1.PodSucceeded || ph == corev1.PodFailed }

// lastFinish is when the last pod to finish before the job did was seen
// finishing: the pod event that decided the job's outcome (zero while the
// job has not finished).
func lastFinish(pods []podObs, terminalAt time.Time) time.Time {
	var at time.Time
	if terminalAt.IsZero() {
		return at
	}
	phase := map[string]corev1.PodPhase{}
	for _, p := range pods {
		if p.Deleting || p.Gone || !p.At.Before(terminalAt) {
			continue
		}
		if finished(p.Phase) && phase[p.UID] != p.Phase {
			at = p.At
		}
		phase[p.UID] = p.Phase
	}
	return at
}

// restartCountBounds is the range status.restartCount must end in.
func restartCountBounds(e expectation, d deletions) (lo, hi int32) {
	rc, n, racing := e.RestartCount, int32(d.total()), int32(d.racing)
	switch {
	case e.MaxRestarts != nil:
		// Under a failure policy every failure, deletions included, goes to
		// the policy: a whole-job restart is no per-pod retry.
		return rc, rc
	case e.Design == designBackoff:
		// The limit caps the count; a deletion uses up a retry, and one
		// counted in the same pass as a failure stops the job one short.
		return max(0, rc-n), rc
	case e.Tracked:
		// The finalizer keeps a deleted pod until a pass has counted it and
		// the count is written, whatever happens to the operator meanwhile:
		// each deletion counts exactly once, unless it came after the job's
		// outcome was decided.
		return rc + n - racing - int32(d.endedOK), rc + n + int32(d.revived)
	default:
		// Untracked: no finalizer holds a deleted pod and KWOK removes it
		// within milliseconds, so the operator counts it only if a pass saw
		// it terminating or the process saw its delete event. Each deletion
		// a running operator watched counts exactly once (seen); one deleted
		// while the operator is down, failing over or without a watch is
		// recreated uncounted: 0 or 1 each.
		return rc + int32(d.seen), rc + n + int32(d.revived)
	}
}

// restartsBounds is the range status.restarts must end in, and whether
// its restarts count toward maxRestarts (else none does).
func restartsBounds(e expectation, d deletions) (lo, hi int32, counted bool) {
	n, racing := int32(d.total()), int32(d.racing)
	switch e.Design {
	case designFPRestart, designFPLostNode:
		// Every attempt ends in a counted restart, whichever failure ends
		// it, until the budget is spent: exactly maxRestarts.
		return e.Restarts, e.Restarts, true
	case designFPFailJob:
		// A deletion before the designed failure restarts the job (within
		// the budget); one judged together with the failure may lose to it,
		// as the earliest by the pods' one-second timestamps decides.
		return 0, min(n, *e.MaxRestarts), true
	case designFPDisrupt, designFPSuspend:
		// Every deletion restarts the job uncounted, unless it came after
		// the success was decided, or the deleted pod still exited 0 before
		// the operator saw it terminating (then it is a success, as for
		// tracked jobs: seed 99, jax-fp-disrupt-107).
		return n - racing - int32(d.endedOK), n, false
	}
	return 0, 0, false // no failure policy, no whole-job restart
}

// describe is the design and the deletions found, for violations.
func describe(e expectation, d deletions) string {
	s := fmt.Sprintf("%s policy %s exit %d", e.Design, e.Policy, e.Code)
	switch {
	case e.MaxRestarts != nil:
		s += fmt.Sprintf(" maxRestarts %d %s", *e.MaxRestarts, e.Strategy)
	case e.Tracked:
		s += " tracked"
	}
	return s + fmt.Sprintf(", deletions: harness %d, infra %d, after the outcome %d, ended 0 while deleted %d, running again while deleted %d, seen by a running operator %d", d.harness, d.infraN, d.racing, d.endedOK, d.revived, d.seen)
}

// checkAttempts compares a job's pods' restart-attempt labels with its
// status: under a failure policy, status.restarts is the newest attempt
// any pod was made for and every attempt before it had pods (a restart is
// recorded, then carried out; no job finishes between the two), a replica
// has at most one pod per attempt, and the pods of a new attempt appear
// only once their predecessors are gone (all of the job's with
// BlockingRecreate, the same replica's with Recreate). Without a policy no
// pod carries the label.
func checkAttempts(key string, e expectation, final jobObs, pods []podObs,
	add func(job, rule, format string, args ...any)) {
	if e.MaxRestarts == nil {
		for _, p := range firstSeen(pods) {
			if p.Attempt != "" {
				add(key, ruleAttempts, "pod %s (uid %s) has restart attempt %q, the job has no failure policy", p.Name, p.UID, p.Attempt)
				return
			}
		}
		return
	}
	seen := map[int]bool{}
	perName := map[string]map[int]string{} // name -> attempt -> first UID
	suspended := suspendedUIDs(pods)
	newest := -1
	for _, p := range firstSeen(pods) {
		a, err := strconv.Atoi(p.Attempt)
		if err != nil || a < 0 {
			add(key, ruleAttempts, "pod %s (uid %s) has restart attempt %q", p.Name, p.UID, p.Attempt)
			continue
		}
		seen[a] = true
		newest = max(newest, a)
		if perName[p.Name] == nil {
			perName[p.Name] = map[int]string{}
		}
		if uid, dup := perName[p.Name][a]; dup && !suspended[uid] {
			add(key, ruleAttempts, "pod %s had two pods in attempt %d (uids %s, %s)", p.Name, a, uid, p.UID)
			continue
		}
		perName[p.Name][a] = p.UID
	}
	if newest > int(final.Restarts) {
		add(key, ruleAttempts, "a pod of attempt %d, restarts %d", newest, final.Restarts)
	}
	var missing []int
	for a := 0; a <= int(final.Restarts); a++ {
		if !seen[a] {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		add(key, ruleAttempts, "restarts %d, no pod of attempt(s) %v", final.Restarts, missing)
	}
	checkOverlap(key, e, pods, add)
}

// checkOverlap replays a failure-policy job's pods in etcd order and flags
// a pod of a newer attempt first seen while an older attempt's pod (of the
// job with BlockingRecreate, of its replica with Recreate) still exists,
// terminating or not.
func checkOverlap(key string, e expectation, pods []podObs, add func(job, rule, format string, args ...any)) {
	blocking := e.Strategy != string(kubeflowv1.RestartStrategyRecreate)
	present := map[string]podObs{} // by UID
	seen := map[string]bool{}
	// suspect are older pods that were present when a newer attempt's pod
	// appeared, with that pod. An overlap is proven only once the older pod
	// is seen again (terminating, or gone by its delete event) afterwards:
	// a relist after an apiserver restart delivers the new pods and the old
	// ones' disappearance one by one, so in between an old pod that was
	// already gone from the listed snapshot looked present. When it went is
	// then unknown, so it proves nothing.
	suspect := map[string]podObs{}
	for _, p := range pods {
		if p.Relisted {
			delete(suspect, p.UID)
			delete(present, p.UID)
			continue
		}
		if n, ok := suspect[p.UID]; ok {
			a, _ := strconv.Atoi(n.Attempt)
			b, _ := strconv.Atoi(p.Attempt)
			add(key, ruleOverlap, "pod %s of attempt %d (uid %s) created while %s of attempt %d (uid %s) exists (%s)",
				n.Name, a, n.UID, p.Name, b, p.UID, e.Strategy)
			return
		}
		if p.Gone {
			delete(present, p.UID)
			continue
		}
		if seen[p.UID] {
			continue
		}
		seen[p.UID] = true
		a, _ := strconv.Atoi(p.Attempt)
		for _, o := range present {
			b, _ := strconv.Atoi(o.Attempt)
			if b < a && (blocking || o.Name == p.Name) {
				if _, ok := suspect[o.UID]; !ok {
					suspect[o.UID] = p
				}
			}
		}
		present[p.UID] = p
	}
}

// checkCounters flags a job whose restartCount, restarts or
// restartsCountTowardsMax went down: a status written from a stale view
// undoes counted failures.
func checkCounters(jobs []jobObs, add func(job, rule, format string, args ...any)) {
	last := map[string]jobObs{}
	flagged := map[string]bool{}
	for _, j := range jobs {
		if j.Gone || flagged[j.Job] {
			continue
		}
		if p, ok := last[j.Job]; ok && (j.RestartCount < p.RestartCount || j.Restarts < p.Restarts || j.RestartsCounted < p.RestartsCounted) {
			add(j.Job, ruleCounterBack, "restartCount/restarts/restartsCountTowardsMax %d/%d/%d at %s, were %d/%d/%d",
				j.RestartCount, j.Restarts, j.RestartsCounted, j.At.Format(time.TimeOnly+".000"), p.RestartCount, p.Restarts, p.RestartsCounted)
			flagged[j.Job] = true
		}
		last[j.Job] = j
	}
}

// checkIncarnations compares distinct pod UIDs per name with the design.
func checkIncarnations(key string, e expectation, final jobObs, pods []podObs, dels deletions, d disruption, decidedLeaderless bool,
	add func(job, rule, format string, args ...any)) {
	uids := map[string]map[string]bool{}
	suspended := map[string]int{} // by name: pods a suspension ended
	for uid := range suspendedUIDs(pods) {
		for _, p := range pods {
			if p.UID == uid {
				suspended[p.Name]++
				break
			}
		}
	}
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
	if e.Outcome == "Succeeded" && len(uids) < e.Replicas && !decidedLeaderless {
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
		hi := lo + dels.infra[name] + dels.infraDone[name]
		if e.MaxRestarts != nil {
			// Every pod goes and comes back on a whole-job restart, one per
			// attempt at most (checkAttempts); a stray deletion can end an
			// attempt before this pod failed, or was made.
			lo, hi = max(1, lo-dels.infraN), int(final.Restarts)+1
		}
		// A suspension ends every pod, and the resume makes it again.
		hi += suspended[name]
		if name == e.DisruptPod && (d.UID == "" || d.Late) {
			lo = 1 // the harness did not delete it in time: a replacement is optional
		}
		if name == e.DisruptPod && final.Succeeded && e.MaxRestarts == nil {
			// The pass that saw the deletion may also have seen the job
			// succeed (an MPI launcher, a master): a finishing pass creates
			// nothing, so the replacement is optional.
			lo = min(lo, 1)
		}
		if name == e.DisruptPod && e.MaxRestarts != nil && e.Strategy == string(kubeflowv1.RestartStrategyRecreate) &&
			d.UID != "" && !goneBefore(pods, d.UID, final.TerminalAt) {
			// Recreate makes the pod's successor once the deleted pod is gone;
			// still terminating when the job finished (KWOK, like a slow
			// kubelet, can hold it for a minute after an apiserver restart),
			// it left the job without one.
			lo = min(lo, 1)
		}
		if got < lo || got > hi {
			add(key, ruleIncarnations, "pod %s had %d incarnations, want %s (%s)",
				name, got, bounds(int32(lo), int32(hi)), describe(e, dels))
		}
	}
}

// goneBefore reports whether the pod with uid was seen gone before the job
// finished at terminalAt (never, for a job still running: zero terminalAt).
func goneBefore(pods []podObs, uid string, terminalAt time.Time) bool {
	for _, p := range pods {
		if p.UID == uid && p.Gone {
			return terminalAt.IsZero() || p.At.Before(terminalAt)
		}
	}
	return terminalAt.IsZero()
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

// within reports whether t (not zero) falls in one of spans.
func within(t time.Time, spans []timeSpan) bool {
	for _, o := range spans {
		if !t.IsZero() && !t.Before(o.from) && !t.After(o.to) {
			return true
		}
	}
	return false
}
