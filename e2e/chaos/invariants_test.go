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
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func pod(s float64, uid, name string, phase corev1.PodPhase) podObs {
	return podObs{At: at(s), UID: uid, Name: name, Job: "ns/j", RType: "worker", Index: 0, Phase: phase, Created: at(s).Truncate(time.Second)}
}

func deleting(p podObs) podObs { p.Deleting = true; return p }
func gone(p podObs) podObs     { p.Gone = true; return p }

// backoffJob: the worker exits 137 under ExitCode, backoffLimit 2.
func backoffInput(rc int32, pods []podObs) checkInput {
	return checkInput{
		Expect: map[string]expectation{"ns/j": {Design: designBackoff, Outcome: "Failed", RestartCount: 2, Tracked: true,
			Replicas: 1, Incarnations: map[string]int{"j-worker-0": 3}}},
		Final: map[string]jobObs{"ns/j": {Job: "ns/j", Failed: true, RestartCount: rc, TerminalAt: at(30)}},
		History: history{Pods: pods, Jobs: []jobObs{
			{At: at(0), Job: "ns/j"},
			{At: at(30.2), Job: "ns/j", Failed: true, RestartCount: rc, TerminalAt: at(30)},
		}},
	}
}

// incarnation is one pod that runs and fails, then is deleted.
func incarnation(start float64, uid string) []podObs {
	p := pod(start, uid, "j-worker-0", corev1.PodPending)
	r := pod(start+1, uid, "j-worker-0", corev1.PodRunning)
	f := pod(start+2, uid, "j-worker-0", corev1.PodFailed)
	return []podObs{p, r, f, deleting(pod(start+3, uid, "j-worker-0", corev1.PodFailed)), gone(pod(start+3.1, uid, "j-worker-0", corev1.PodFailed))}
}

func rules(vs []violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return strings.Join(out, ",")
}

func TestCheck(t *testing.T) {
	three := append(append(incarnation(1, "a"), incarnation(10, "b")...), incarnation(20, "c")...)
	cases := map[string]struct {
		in   checkInput
		want string
	}{
		"as designed": {in: backoffInput(2, three)},
		// A failed pod counted twice (operator killed between the status
		// write and the pod's deletion): the job fails one incarnation early.
		"double count": {in: backoffInput(2, append(incarnation(1, "a"), incarnation(10, "b")...)), want: ruleIncarnations},
		"wrong count":  {in: backoffInput(1, three), want: ruleRestartCount},
		"two live pods": {in: backoffInput(2, append(three,
			pod(25, "x", "j-worker-0", corev1.PodRunning), pod(25.5, "y", "j-worker-0", corev1.PodRunning))),
			want: ruleTwoLive + "," + ruleIncarnations},
		"pod after finish": {in: backoffInput(2, append(three[:10:10], append(incarnation(20, "c"), pod(40, "d", "j-worker-0", corev1.PodPending))...)),
			want: ruleIncarnations + "," + ruleAfterFinish},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vs, _ := check(tc.in)
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, vs)
			}
		})
	}
}

func TestCheckCounters(t *testing.T) {
	three := append(append(incarnation(1, "a"), incarnation(10, "b")...), incarnation(20, "c")...)
	ok := backoffInput(2, three)
	ok.History.Jobs = append(ok.History.Jobs[:1:1], jobObs{At: at(5), Job: "ns/j", RestartCount: 1},
		jobObs{At: at(15), Job: "ns/j", RestartCount: 2}, ok.History.Jobs[1])
	if vs, _ := check(ok); len(vs) != 0 {
		t.Errorf("violations %+v, want none", vs)
	}
	// A status written from a view older than the last count.
	back := backoffInput(2, three)
	back.History.Jobs = append(back.History.Jobs[:1:1], jobObs{At: at(15), Job: "ns/j", RestartCount: 2},
		jobObs{At: at(16), Job: "ns/j", RestartCount: 1}, back.History.Jobs[1])
	if vs, _ := check(back); rules(vs) != ruleCounterBack {
		t.Errorf("violations %q, want %q: %+v", rules(vs), ruleCounterBack, vs)
	}
}

func TestCheckSticky(t *testing.T) {
	in := backoffInput(2, append(append(incarnation(1, "a"), incarnation(10, "b")...), incarnation(20, "c")...))
	in.History.Jobs = append(in.History.Jobs, jobObs{At: at(31), Job: "ns/j", RestartCount: 2})
	vs, _ := check(in)
	if got := rules(vs); got != ruleSticky {
		t.Errorf("violations %q, want %q", got, ruleSticky)
	}
}

// A live pod deleted by someone else (KWOK deletes by name) is a legitimate
// retry: bounds widen by it, and the deletion is reported.
func TestCheckInfraDeletion(t *testing.T) {
	pods := append(incarnation(1, "a"), pod(10, "b", "j-worker-0", corev1.PodRunning),
		deleting(pod(11, "b", "j-worker-0", corev1.PodRunning)), gone(pod(11.1, "b", "j-worker-0", corev1.PodRunning)))
	pods = append(append(pods, incarnation(12, "c")...), incarnation(20, "d")...)
	vs, stats := check(backoffInput(2, pods))
	if len(vs) != 0 || stats.InfraDeletions != 1 {
		t.Errorf("violations %+v, infra deletions %d; want none and 1", vs, stats.InfraDeletions)
	}
}

// podOf is one observation of a pod of replica rt, index 0, of restart
// attempt (the label's value; "" for none).
func podOf(s float64, uid, rt, attempt string, phase corev1.PodPhase) podObs {
	return podObs{At: at(s), UID: uid, Name: "j-" + rt + "-0", Job: "ns/j", RType: rt, Index: 0, Phase: phase,
		Attempt: attempt, Created: at(s).Truncate(time.Second)}
}

// life is a pod made at start that runs from start+1; end (if any) is its
// last phase at end, then it is deleted at del and gone 0.1 s later.
func life(start float64, uid, rt, attempt string, end corev1.PodPhase, endAt, del float64) []podObs {
	out := []podObs{podOf(start, uid, rt, attempt, corev1.PodPending), podOf(start+1, uid, rt, attempt, corev1.PodRunning)}
	last := corev1.PodRunning
	if end != "" {
		out = append(out, podOf(endAt, uid, rt, attempt, end))
		last = end
	}
	return append(out, deleting(podOf(del, uid, rt, attempt, last)), gone(podOf(del+0.1, uid, rt, attempt, last)))
}

// byTime orders observations as one watch stream delivers them.
func byTime(pods ...[]podObs) []podObs {
	var out []podObs
	for _, p := range pods {
		out = append(out, p...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// disruptInput: the harness deletes the running worker at del (uid w1), its
// replacement w2 runs; the master succeeds at 29.5 and the job is seen
// Succeeded at 30.2; cleanup deletes the rest at 31.
func disruptInput(tracked bool, rc int32, del float64) checkInput {
	pods := byTime(life(1, "m", "master", "", corev1.PodSucceeded, 29.5, 31),
		life(1, "w1", "worker", "", "", 0, del), life(del+0.5, "w2", "worker", "", "", 0, 31))
	return checkInput{
		Expect: map[string]expectation{"ns/j": {Design: designDisrupt, Outcome: "Succeeded", Tracked: tracked, Replicas: 2,
			Incarnations: map[string]int{"j-worker-0": 2}, DisruptPod: "j-worker-0", DecisivePod: "j-master-0"}},
		Final: map[string]jobObs{"ns/j": {Job: "ns/j", Succeeded: true, RestartCount: rc, TerminalAt: at(30)}},
		History: history{Pods: pods, Jobs: []jobObs{
			{At: at(0), Job: "ns/j"},
			{At: at(30.2), Job: "ns/j", Succeeded: true, RestartCount: rc, TerminalAt: at(30)},
		}},
		Disrupted: map[string]disruption{"ns/j": {UID: "w1", At: at(del), Late: del > 15}},
	}
}

// leaderless adds a span with no operator running, from and to seconds.
func leaderless(in checkInput, from, to float64) checkInput {
	in.Leaderless = append(in.Leaderless, timeSpan{from: at(from), to: at(to)})
	return in
}

func withoutPod(in checkInput, uid string) checkInput {
	var pods []podObs
	for _, p := range in.History.Pods {
		if p.UID != uid {
			pods = append(pods, p)
		}
	}
	in.History.Pods = pods
	return in
}

// A tracked job counts the harness's deletion exactly once; so does an
// untracked one that a running operator watched, and it may miss one made
// while no operator ran (or just before or after); a deletion after the
// outcome was decided may go uncounted.
func TestCheckRestartCountTracked(t *testing.T) {
	cases := map[string]struct {
		in   checkInput
		want string
	}{
		"tracked, counted":         {in: disruptInput(true, 1, 5)},
		"tracked, lost":            {in: disruptInput(true, 0, 5), want: ruleRestartCount},
		"tracked, counted twice":   {in: disruptInput(true, 2, 5), want: ruleRestartCount},
		"untracked, counted":       {in: disruptInput(false, 1, 5)},
		"untracked, lost":          {in: disruptInput(false, 0, 5), want: ruleRestartCount},
		"untracked, counted twice": {in: disruptInput(false, 2, 5), want: ruleRestartCount},
		// Deleted while the operator was down, or shortly before its kill
		// (seen, not yet written) or after its successor's first pass.
		"untracked, lost while no operator ran":    {in: leaderless(disruptInput(false, 0, 5), 4, 6)},
		"untracked, lost before a kill":            {in: leaderless(disruptInput(false, 0, 5), 14.5, 20)},
		"untracked, lost after a takeover":         {in: leaderless(disruptInput(false, 0, 5), 1, 2.5)},
		"untracked, lost long after a takeover":    {in: leaderless(disruptInput(false, 0, 5), 1, 1.5), want: ruleRestartCount},
		"untracked, counted while no operator ran": {in: leaderless(disruptInput(false, 1, 5), 4, 6)},
		"tracked, after the master":                {in: disruptInput(true, 0, 29.8)},
		// The finishing pass counted a deletion whose event the recorder's
		// pod watch delivered after the job's status.
		"tracked, seen after the finish": {in: withoutPod(disruptInput(true, 1, 30.4), "w2")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vs, _ := check(tc.in)
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, vs)
			}
		})
	}
}

// fpInput: a PyTorchJob-like job with a master and a worker under a failure
// policy with maxRestarts 1 (fp-restart): the worker fails in attempt 0 at
// 4, the job restarts (seen at 4.5) and every pod of attempt 0 goes at
// 4.6; attempt 1 starts at 5, its worker fails at 8, the job is Failed.
// Cleanup at 9.
func fpInput(restarts, counted int32, strategy kubeflowv1.RestartStrategy, pods []podObs) checkInput {
	return checkInput{
		Expect: map[string]expectation{"ns/j": {Design: designFPRestart, Outcome: "Failed", Tracked: true, Replicas: 2,
			MaxRestarts: ptr.To(int32(1)), Strategy: string(strategy), Restarts: 1, Incarnations: map[string]int{"j-worker-0": 2}}},
		Final: map[string]jobObs{"ns/j": {Job: "ns/j", Failed: true, Restarts: restarts, RestartsCounted: counted, TerminalAt: at(8)}},
		History: history{Pods: pods, Jobs: []jobObs{
			{At: at(0), Job: "ns/j"},
			{At: at(4.5), Job: "ns/j", Restarts: 1, RestartsCounted: counted},
			{At: at(8.5), Job: "ns/j", Failed: true, Restarts: restarts, RestartsCounted: counted, TerminalAt: at(8)},
		}},
	}
}

// fpPods are the pods of fpInput; the attempt-0 master is deleted at 4.6
// but gone only at masterGone (a finalizer holds it).
func fpPods(attempt1 string, masterGone float64) []podObs {
	m0 := life(1, "m0", "master", "0", "", 0, 4.6)
	m0[len(m0)-1].At = at(masterGone)
	return byTime(m0, life(1, "w0", "worker", "0", corev1.PodFailed, 4, 4.6),
		life(5, "m1", "master", attempt1, "", 0, 9), life(5, "w1", "worker", attempt1, corev1.PodFailed, 8, 9))
}

func TestCheckFailurePolicy(t *testing.T) {
	blocking, recreate := kubeflowv1.RestartStrategyBlockingRecreate, kubeflowv1.RestartStrategyRecreate
	cases := map[string]struct {
		in   checkInput
		want string
	}{
		"as designed": {in: fpInput(1, 1, blocking, fpPods("1", 4.6))},
		// The restart was written, its budget not.
		"restart not counted": {in: fpInput(1, 0, blocking, fpPods("1", 4.6)), want: ruleRestarts},
		// Pods made for an attempt the status never recorded.
		"attempt ahead of status": {in: fpInput(1, 1, blocking, fpPods("2", 4.6)), want: ruleAttempts + "," + ruleAttempts},
		// The old master is still terminating when attempt 1 starts: only
		// Recreate allows that, and only for other replicas' pods.
		"old pod still there": {in: fpInput(1, 1, blocking, fpPods("1", 5.5)), want: ruleOverlap},
		"old pod still there, Recreate": {in: fpInput(1, 1, recreate, byTime(
			life(1, "m0", "master", "0", "", 0, 5.5), life(1, "w0", "worker", "0", corev1.PodFailed, 4, 4.6),
			life(5.6, "m1", "master", "1", "", 0, 9), life(5, "w1", "worker", "1", corev1.PodFailed, 8, 9)))},
		"same replica overlaps, Recreate": {in: fpInput(1, 1, recreate, fpPods("1", 5.5)), want: ruleOverlap},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vs, stats := check(tc.in)
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, vs)
			}
			if stats.InfraDeletions != 0 {
				t.Errorf("infra deletions %d, want 0: the operator's restart deletions are its own", stats.InfraDeletions)
			}
		})
	}
}

// A stray deletion before a FailJob failure restarts the job (counted);
// without one, a restart is a violation.
func TestCheckFailJob(t *testing.T) {
	in := func(restarts int32, pods []podObs) checkInput {
		return checkInput{
			Expect: map[string]expectation{"ns/j": {Design: designFPFailJob, Outcome: "Failed", Tracked: true, Replicas: 1,
				MaxRestarts: ptr.To(int32(1)), Strategy: string(kubeflowv1.RestartStrategyBlockingRecreate)}},
			Final: map[string]jobObs{"ns/j": {Job: "ns/j", Failed: true, Restarts: restarts, RestartsCounted: restarts, TerminalAt: at(8)}},
			History: history{Pods: pods, Jobs: []jobObs{
				{At: at(0), Job: "ns/j"},
				{At: at(8.5), Job: "ns/j", Failed: true, Restarts: restarts, RestartsCounted: restarts, TerminalAt: at(8)},
			}},
		}
	}
	stray := byTime(life(1, "w0", "worker", "0", "", 0, 3), life(5, "w1", "worker", "1", corev1.PodFailed, 7.5, 9))
	vs, stats := check(in(1, stray))
	if len(vs) != 0 || stats.InfraDeletions != 1 {
		t.Errorf("violations %+v, infra deletions %d; want none and 1", vs, stats.InfraDeletions)
	}
	vs, _ = check(in(1, byTime(life(1, "w0", "worker", "0", corev1.PodFailed, 3, 3.5), life(5, "w1", "worker", "1", corev1.PodFailed, 7.5, 9))))
	if got := rules(vs); got != ruleRestarts {
		t.Errorf("violations %q, want %q: %+v", got, ruleRestarts, vs)
	}
}

// Pods of a job without a failure policy carry no attempt.
func TestCheckAttemptWithoutPolicy(t *testing.T) {
	in := disruptInput(true, 1, 5)
	for i := range in.History.Pods {
		if in.History.Pods[i].UID == "m" {
			in.History.Pods[i].Attempt = "0"
		}
	}
	if vs, _ := check(in); rules(vs) != ruleAttempts {
		t.Errorf("violations %q, want %q: %+v", rules(vs), ruleAttempts, vs)
	}
}

// Recreate: the harness deletes worker-0, the restart replaces the master,
// and the new master finishes the job while the deleted worker is still
// terminating; its successor was never due. Gone before the job finished,
// it must have had one.
func TestCheckRecreateSuccessorNotDue(t *testing.T) {
	in := func(workerGone float64) checkInput {
		w0 := life(1, "w0", "worker", "0", "", 0, 4)
		w0[len(w0)-1].At = at(workerGone)
		pods := byTime(life(1, "m0", "master", "0", "", 0, 4.6), w0,
			life(5, "m1", "master", "1", corev1.PodSucceeded, 29.5, 31))
		if workerGone < 30 {
			pods = byTime(pods, life(workerGone+0.5, "w1", "worker", "1", "", 0, 31))
		}
		return checkInput{
			Expect: map[string]expectation{"ns/j": {Design: designFPDisrupt, Outcome: "Succeeded", Tracked: true, Replicas: 2,
				MaxRestarts: ptr.To(int32(0)), Strategy: string(kubeflowv1.RestartStrategyRecreate),
				Incarnations: map[string]int{"j-worker-0": 2}, DisruptPod: "j-worker-0", DecisivePod: "j-master-0"}},
			Final: map[string]jobObs{"ns/j": {Job: "ns/j", Succeeded: true, Restarts: 1, TerminalAt: at(30)}},
			History: history{Pods: pods, Jobs: []jobObs{
				{At: at(0), Job: "ns/j"},
				{At: at(4.5), Job: "ns/j", Restarts: 1},
				{At: at(30.2), Job: "ns/j", Succeeded: true, Restarts: 1, TerminalAt: at(30)},
			}},
			Disrupted: map[string]disruption{"ns/j": {UID: "w0", At: at(4)}},
		}
	}
	if vs, _ := check(in(40)); len(vs) != 0 {
		t.Errorf("deleted worker gone after the job finished: violations %+v, want none", vs)
	}
	if vs, _ := check(in(6)); len(vs) != 0 {
		t.Errorf("deleted worker gone at 6, replaced: violations %+v, want none", vs)
	}
	// Gone at 6 but never replaced: the successor was due.
	noSuccessor := in(6)
	var kept []podObs
	for _, p := range noSuccessor.History.Pods {
		if p.UID != "w1" {
			kept = append(kept, p)
		}
	}
	noSuccessor.History.Pods = kept
	if vs, _ := check(noSuccessor); rules(vs) != ruleIncarnations {
		t.Errorf("violations %q, want %q: %+v", rules(vs), ruleIncarnations, vs)
	}
}

// Someone else deletes the succeeded worker while the job runs (KWOK by name
// after an apiserver restart): the operator makes it again, a legitimate
// extra incarnation.
func TestCheckSucceededPodDeletedByOthers(t *testing.T) {
	in := disruptInput(false, 1, 5)
	extra := byTime(life(10, "w3", "worker", "", corev1.PodSucceeded, 12, 13), life(13.5, "w4", "worker", "", "", 0, 31))
	var pods []podObs
	for _, p := range in.History.Pods {
		if p.UID == "w2" && (p.Deleting || p.Gone) {
			continue // w2 lives on until the cleanup below
		}
		pods = append(pods, p)
	}
	// w2 is replaced by w3 at 10 (deleted by others while running), w3
	// succeeds and is deleted by others at 13, w4 runs to the end.
	w2 := life(5.5, "w2", "worker", "", "", 0, 9.5)
	in.History.Pods = byTime(pods[:0:0], filterUID(pods, "w2"), w2, extra)
	in.Expect["ns/j"] = withIncarnations(in.Expect["ns/j"], "j-worker-0", 2)
	vs, _ := check(in)
	for _, v := range vs {
		if v.Rule == ruleIncarnations {
			t.Errorf("incarnations violation for a succeeded pod others deleted: %+v", v)
		}
	}
}

func filterUID(pods []podObs, uid string) []podObs {
	var out []podObs
	for _, p := range pods {
		if p.UID != uid {
			out = append(out, p)
		}
	}
	return out
}

func withIncarnations(e expectation, name string, n int) expectation {
	e.Incarnations = map[string]int{name: n}
	return e
}

// A tracked job's deleted worker whose container still exits 0 before the
// pod is gone may be counted (a pass saw it terminating) or not (one saw it
// Succeeded); one that ends Failed, or is gone while running, must be.
func TestCheckDeletedPodThatSucceeds(t *testing.T) {
	withEnd := func(phase corev1.PodPhase) checkInput {
		in := disruptInput(true, 0, 5)
		var pods []podObs
		for _, p := range in.History.Pods {
			if p.UID == "w1" && p.Gone {
				end := deleting(p)
				end.At, end.Phase = at(5.05), phase
				pods = append(pods, end)
				p.Phase = phase
			}
			pods = append(pods, p)
		}
		in.History.Pods = byTime(pods)
		return in
	}
	if vs, _ := check(withEnd(corev1.PodSucceeded)); len(vs) != 0 {
		t.Errorf("deleted worker that exited 0, not counted: violations %+v, want none", vs)
	}
	if vs, _ := check(withEnd(corev1.PodRunning)); rules(vs) != ruleRestartCount {
		t.Errorf("deleted running worker not counted: violations %q, want %q", rules(vs), ruleRestartCount)
	}
}

// An apiserver restart ends the watches with "too old resource version":
// the recorder relists and learns at once that the attempt-0 pods are gone
// and the attempt-1 pods exist, one name at a time. An old pod whose
// disappearance the relist reports proves no overlap (seed 7, pt-fp-restart-216);
// one whose delete event comes after the new attempt's pod still does.
func TestCheckOverlapAcrossRelist(t *testing.T) {
	in := func(m0Gone podObs) checkInput {
		relistedGone := func(p podObs) podObs { p.Gone, p.Relisted = true, true; return p }
		pods := []podObs{
			podOf(1, "m0", "master", "0", corev1.PodPending), podOf(1, "w0", "worker", "0", corev1.PodPending),
			podOf(2, "m0", "master", "0", corev1.PodRunning), podOf(2, "w0", "worker", "0", corev1.PodRunning),
			// Relist at 6: w0 replaced by w1 under the same name, then m0 by m1.
			relistedGone(podOf(6, "w0", "worker", "0", corev1.PodRunning)), podOf(6, "w1", "worker", "1", corev1.PodRunning),
			m0Gone, podOf(6, "m1", "master", "1", corev1.PodRunning),
		}
		pods = append(pods, life(6, "m1", "master", "1", "", 0, 9)[2:]...)
		pods = append(pods, life(6, "w1", "worker", "1", corev1.PodFailed, 8, 9)[2:]...)
		return fpInput(1, 1, kubeflowv1.RestartStrategyBlockingRecreate, pods)
	}
	relisted := podOf(6, "m0", "master", "0", corev1.PodRunning)
	relisted.Gone, relisted.Relisted = true, true
	if vs, _ := check(in(relisted)); len(vs) != 0 {
		t.Errorf("old pods gone in the relisted snapshot: violations %+v, want none", vs)
	}
	deleted := gone(podOf(6.2, "m0", "master", "0", corev1.PodRunning))
	if vs, _ := check(in(deleted)); rules(vs) != ruleOverlap {
		t.Errorf("old master's delete event after the new worker: violations %q, want %q: %+v", rules(vs), ruleOverlap, vs)
	}
}

// A replacement made and deleted while the watch was down (seed 7,
// tf-disrupt-181) is counted by the operator but never seen by the
// recorder: no bound holds across a relist, so the relist itself is a
// violation, and the bounds stay what they are without one.
func TestCheckHistoryGap(t *testing.T) {
	in := disruptInput(true, 2, 5)
	if vs, _ := check(in); rules(vs) != ruleRestartCount {
		t.Errorf("no gap: violations %q, want %q: %+v", rules(vs), ruleRestartCount, vs)
	}
	in.History.Gaps = []time.Time{at(10)}
	if vs, _ := check(in); rules(vs) != ruleHistoryGap+","+ruleRestartCount {
		t.Errorf("across a gap: violations %q, want %q: %+v", rules(vs), ruleHistoryGap+","+ruleRestartCount, vs)
	}
	ok := disruptInput(true, 1, 5)
	if vs, _ := check(ok); len(vs) != 0 {
		t.Fatalf("no gap, as designed: violations %+v, want none", vs)
	}
	ok.History.Gaps = []time.Time{at(10)}
	if vs, _ := check(ok); rules(vs) != ruleHistoryGap || vs[0].Job != recorderJob {
		t.Errorf("a gap in an otherwise clean run: violations %+v, want one %q of %s", vs, ruleHistoryGap, recorderJob)
	}
}

// Under a failure policy too, a deleted running pod whose containers still
// exit 0 before the operator sees it terminating is a success, not a
// restart (seed 99, jax-fp-disrupt-107: 46 restarts for 47 deletions).
func TestCheckPolicyDeletedPodThatSucceeds(t *testing.T) {
	in := func(end corev1.PodPhase) checkInput {
		w0 := []podObs{podOf(1, "w0", "worker", "0", corev1.PodPending), podOf(2, "w0", "worker", "0", corev1.PodRunning),
			deleting(podOf(4, "w0", "worker", "0", corev1.PodRunning)), deleting(podOf(4.05, "w0", "worker", "0", end)),
			gone(podOf(4.1, "w0", "worker", "0", end))}
		return checkInput{
			Expect: map[string]expectation{"ns/j": {Design: designFPDisrupt, Outcome: "Succeeded", Tracked: true, Replicas: 2,
				MaxRestarts: ptr.To(int32(0)), Strategy: string(kubeflowv1.RestartStrategyRecreate),
				DisruptPod: "j-worker-0", DecisivePod: "j-master-0"}},
			Final: map[string]jobObs{"ns/j": {Job: "ns/j", Succeeded: true, TerminalAt: at(5)}},
			History: history{Pods: byTime(life(1, "m0", "master", "0", corev1.PodSucceeded, 4.5, 6), w0), Jobs: []jobObs{
				{At: at(0), Job: "ns/j"},
				{At: at(5.2), Job: "ns/j", Succeeded: true, TerminalAt: at(5)},
			}},
			Disrupted: map[string]disruption{"ns/j": {UID: "w0", At: at(4)}},
		}
	}
	if vs, _ := check(in(corev1.PodSucceeded)); len(vs) != 0 {
		t.Errorf("deleted worker that exited 0, no restart: violations %+v, want none", vs)
	}
	if vs, _ := check(in(corev1.PodRunning)); !strings.Contains(rules(vs), ruleRestarts) {
		t.Errorf("deleted running worker, no restart: violations %q, want %q", rules(vs), ruleRestarts)
	}
}

// A leader killed between its creates: the master was made, the worker not,
// and the master finished before a new leader reconciled (seed 42 failover,
// pt-ok-096). The job is done; a finishing pass creates nothing. With the
// master finishing while an operator ran, the missing worker is a violation.
func TestCheckReplicaMissingWhileLeaderless(t *testing.T) {
	in := checkInput{
		Expect: map[string]expectation{"ns/j": {Design: designOK, Outcome: "Succeeded", Replicas: 2,
			Incarnations: map[string]int{}}},
		Final: map[string]jobObs{"ns/j": {Job: "ns/j", Succeeded: true, TerminalAt: at(12)}},
		History: history{Pods: life(1, "m", "master", "", corev1.PodSucceeded, 4, 13), Jobs: []jobObs{
			{At: at(0), Job: "ns/j"},
			{At: at(12.2), Job: "ns/j", Succeeded: true, TerminalAt: at(12)},
		}},
	}
	for i := range in.History.Pods {
		in.History.Pods[i].Name, in.History.Pods[i].Attempt = "j-master-0", ""
	}
	if vs, _ := check(in); rules(vs) != ruleIncarnations {
		t.Errorf("no kill: violations %q, want %q: %+v", rules(vs), ruleIncarnations, vs)
	}
	in.Leaderless = []timeSpan{{from: at(1.5), to: at(11)}}
	if vs, _ := check(in); len(vs) != 0 {
		t.Errorf("master finished while no operator ran: violations %+v, want none", vs)
	}
}

// A relist is a plain list or, with client-go's WatchListClient, a watch
// that sends the initial objects; a resumed watch is not (seed 42 apiserver:
// 21 violations with "watch gaps: 0").
func TestIsList(t *testing.T) {
	for url, want := range map[string]bool{
		"/api/v1/namespaces/n/pods?labelSelector=x&limit=500":                                         true,
		"/api/v1/namespaces/n/pods?allowWatchBookmarks=true&sendInitialEvents=true&watch=true":        true,
		"/api/v1/namespaces/n/pods?allowWatchBookmarks=true&resourceVersion=12&watch=true":            false,
		"/apis/kubeflow.org/v1/namespaces/n/pytorchjobs?resourceVersionMatch=NotOlderThan&watch=true": false,
	} {
		req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1"+url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := isList(req); got != want {
			t.Errorf("isList(%s) = %v, want %v", url, got, want)
		}
	}
}

// KWOK, acting on a stale view, deleted a succeeded worker by name and then
// patched its pod-ready status back onto it (seed 42 kill, jax-disrupt-149:
// restartCount 23 for 22 deletions). A pass that saw the running pod
// terminating counts it; one that saw it only succeeded does not.
func TestCheckRestartCountRevivedPod(t *testing.T) {
	in := func(rc int32, revived bool) checkInput {
		in := disruptInput(true, rc, 5)
		in = withoutPod(in, "w2")
		last := corev1.PodSucceeded
		if revived {
			last = corev1.PodRunning
		}
		w2 := []podObs{podOf(5.5, "w2", "worker", "", corev1.PodPending), podOf(6, "w2", "worker", "", corev1.PodRunning),
			podOf(20, "w2", "worker", "", corev1.PodSucceeded), deleting(podOf(20.02, "w2", "worker", "", corev1.PodSucceeded)),
			deleting(podOf(20.1, "w2", "worker", "", last)), gone(podOf(20.2, "w2", "worker", "", last))}
		in.History.Pods = byTime(in.History.Pods, w2, life(20.3, "w3", "worker", "", "", 0, 31))
		in.Expect["ns/j"].Incarnations["j-worker-0"] = 2
		return in
	}
	cases := map[string]struct {
		in   checkInput
		want string
	}{
		"revived, not counted":           {in: in(1, true)},
		"revived, counted":               {in: in(2, true)},
		"revived, counted twice":         {in: in(3, true), want: ruleRestartCount},
		"succeeded and deleted, counted": {in: in(2, false), want: ruleRestartCount},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vs, _ := check(tc.in)
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, vs)
			}
		})
	}
}

// suspendInput: the harness suspends the job at 5: the operator marks and
// deletes both pods of attempt 0 (m0, w0), and after the resume makes them
// again (m1, w1), still attempt 0 under a failure policy; the master
// succeeds at 29.5. counted is what the operator made of the suspension:
// nothing, or (the bug) a failure counted in restartCount or a whole-job
// restart, whose pods then carry attempt 1.
func suspendInput(policy bool, restartCount, restarts int32) checkInput {
	attempt := func(a int) string {
		if !policy {
			return ""
		}
		return strconv.Itoa(a)
	}
	marked := func(ps []podObs) []podObs {
		for i := range ps {
			if ps[i].At.After(at(5)) {
				ps[i].Suspended = true
			}
		}
		return ps
	}
	next := attempt(int(restarts))
	pods := byTime(marked(life(1, "m0", "master", attempt(0), "", 0, 5.2)), marked(life(1, "w0", "worker", attempt(0), "", 0, 5.2)),
		life(8, "m1", "master", next, corev1.PodSucceeded, 29.5, 31), life(8, "w1", "worker", next, "", 0, 31))
	e := expectation{Design: designSuspend, Outcome: "Succeeded", Tracked: true, Replicas: 2, DecisivePod: "j-master-0", Suspend: true}
	if policy {
		e.Design, e.MaxRestarts, e.Strategy = designFPSuspend, ptr.To(int32(0)), string(kubeflowv1.RestartStrategyBlockingRecreate)
	}
	final := jobObs{Job: "ns/j", Succeeded: true, RestartCount: restartCount, Restarts: restarts, TerminalAt: at(30)}
	return checkInput{
		Expect: map[string]expectation{"ns/j": e},
		Final:  map[string]jobObs{"ns/j": final},
		History: history{Pods: pods, Jobs: []jobObs{
			{At: at(0), Job: "ns/j"},
			{At: at(6), Job: "ns/j", RestartCount: restartCount, Restarts: restarts},
			{At: at(30.2), Job: "ns/j", Succeeded: true, RestartCount: restartCount, Restarts: restarts, TerminalAt: at(30)},
		}},
		Suspended: map[string]bool{"ns/j": true},
	}
}

// A suspension is no failure: the pods it deletes count nowhere, and their
// replacements are the same attempt's.
func TestCheckSuspension(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		policy                bool
		restartCount, restart int32
		want                  string
	}{
		{name: "backoffLimit: nothing counted", policy: false},
		{name: "backoffLimit: the suspension counted as two retries", policy: false, restartCount: 2, want: ruleRestartCount},
		{name: "failure policy: no restart", policy: true},
		{name: "failure policy: the suspension taken for a failure", policy: true, restart: 1, want: ruleRestarts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, _ := check(suspendInput(tc.policy, tc.restartCount, tc.restart))
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, vs)
			}
		})
	}
	// Unmarked, the same deletions are someone else's: each counts.
	in := suspendInput(false, 2, 0)
	for i := range in.History.Pods {
		in.History.Pods[i].Suspended = false
	}
	if vs, _ := check(in); len(vs) != 0 {
		t.Errorf("unmarked deletions, counted: violations %+v, want none", vs)
	}
}

// The pod hanging on a lost node: force-deleted after its node was lost.
func TestCheckLostPod(t *testing.T) {
	e := expectation{LostPod: "j-master-0"}
	for _, tc := range []struct {
		name string
		lp   lostPod
		want string
	}{
		{name: "force-deleted after its node was lost", lp: lostPod{UID: "m0", Node: "n", Annotated: at(2), Deleting: at(10), NodeLost: at(35), Gone: at(40),
			NodeLostSpans: []lostSpan{{From: at(35), To: at(40.5)}}}},
		{name: "force-deleted while another job had its node lost", lp: lostPod{UID: "m0", Node: "n", Annotated: at(2), Deleting: at(10), Gone: at(30),
			NodeLostSpans: []lostSpan{{From: at(20), To: at(31)}}}},
		{name: "force-deleted while its node was Ready", lp: lostPod{UID: "m0", Node: "n", Annotated: at(2), Deleting: at(10), Gone: at(30),
			NodeLostSpans: []lostSpan{{From: at(5), To: at(8)}, {From: at(40)}}}, want: ruleLostPod},
		{name: "never force-deleted", lp: lostPod{UID: "m0", Node: "n", Annotated: at(2), Deleting: at(10), NodeLost: at(35)}, want: ruleLostPod},
		{name: "never deleted", lp: lostPod{UID: "m0", Node: "n", Annotated: at(2)}},
		{name: "deleted before its kubelet was taken away", lp: lostPod{UID: "m0", Node: "n", Annotated: at(11), Deleting: at(10), Gone: at(10.1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vs []violation
			checkLostPod("ns/j", e, tc.lp, func(job, rule, format string, args ...any) { vs = append(vs, violation{Job: job, Rule: rule}) })
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFaultViolations(t *testing.T) {
	ok := fault{Type: "operator SIGKILL", At: at(1), End: at(2), ToReconcile: time.Second, Ready: time.Second}
	for _, tc := range []struct {
		name string
		f    fault
		want []string
	}{
		{"recovered", ok, nil},
		{"not ready after the restart", func() fault { f := ok; f.NotReady = "context deadline exceeded"; return f }(), []string{ruleNotReady}},
		{"no reconcile", func() fault { f := ok; f.ToReconcile, f.ToProgress, f.NoReconcile = -1, -1, true; return f }(), []string{ruleNoReconcile}},
		{"no takeover", func() fault { f := ok; f.NoTakeover = true; return f }(), []string{ruleNoTakeover}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range faultViolations([]fault{tc.f}) {
				got = append(got, v.Rule)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("rules %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTookOver(t *testing.T) {
	for _, tc := range []struct {
		before, after string
		want          bool
	}{
		{"a_1", "b_2", true},
		{"a_1", "a_1", false},
		// A failed read before the kill: the dead leader's name is no takeover.
		{"", "a_1", false},
		{"a_1", "", false},
	} {
		if got := tookOver(tc.before, tc.after); got != tc.want {
			t.Errorf("tookOver(%q, %q) = %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
}
