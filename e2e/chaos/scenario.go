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
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// scenario is one fault type: how many operator replicas it runs and the
// fault loop it drives while the burst runs.
type scenario struct {
	name        string
	replicas    int
	leaderElect bool
	// inject runs faults until ctx ends or its schedule is done.
	inject func(ctx context.Context, r *run) error
}

// run is the state of one scenario execution.
type run struct {
	sc    scenario
	p     profile
	e     *env
	ns    string
	rng   *rand.Rand
	rec   *recorder
	ops   []*operator
	jobs  []plannedJob
	began time.Time

	mu     sync.Mutex
	faults []fault
}

// fault is one injected fault and how the system recovered from it.
type fault struct {
	Type string    `json:"type"`
	At   time.Time `json:"at"`
	// End is when the fault was over: the operator process restarted, the
	// apiserver ready again, etcd resumed.
	End time.Time `json:"end"`
	// ToProgress is from End to the first operator write (job status or new
	// pod) observed afterwards; after a kill, only writes observed once the
	// new process reconciles count (the dead one's last writes may still be
	// in flight on the watch).
	ToProgress time.Duration `json:"toProgress"`
	// ToReconcile (kill, failover) is from End to the first reconcile of the
	// replica that takes over, from its metrics.
	ToReconcile time.Duration `json:"toReconcile,omitempty"`
	// ToLeader (failover) is from the kill to the Lease changing holder.
	ToLeader time.Duration `json:"toLeader,omitempty"`
	// Ready is how long the restarted operator took to answer /readyz.
	Ready time.Duration `json:"ready,omitempty"`
	Note  string        `json:"note,omitempty"`
	// NotReady is why the operator restarted after the fault did not answer
	// /readyz in time.
	NotReady string `json:"notReady,omitempty"`
	// NoReconcile: the replica that must take over reconciled nothing
	// within reconcileWithin of the fault's end.
	NoReconcile bool `json:"noReconcile,omitempty"`
	// NoTakeover (failover): no other replica took the lease within 4 lease
	// durations of the leader kill.
	NoTakeover bool `json:"noTakeover,omitempty"`
}

// Limits of a fault's recovery; past them the run has a violation.
const (
	readyWithin     = 2 * time.Minute
	reconcileWithin = 60 * time.Second
)

// faultViolations are the faults the operator did not recover from: each
// fault was injected while jobs were running or still to be created, so
// the replica that takes over has something to reconcile.
func faultViolations(faults []fault) []violation {
	var vs []violation
	for _, f := range faults {
		what := fmt.Sprintf("%s at %s (%s)", f.Type, f.At.Format(time.TimeOnly+".000"), f.Note)
		if f.NotReady != "" {
			vs = append(vs, violation{Rule: ruleNotReady, Detail: fmt.Sprintf("%s: not ready within %s: %s", what, readyWithin, f.NotReady)})
		}
		if f.NoReconcile {
			vs = append(vs, violation{Rule: ruleNoReconcile, Detail: fmt.Sprintf("%s: no reconcile within %s", what, reconcileWithin)})
		}
		if f.NoTakeover {
			vs = append(vs, violation{Rule: ruleNoTakeover, Detail: fmt.Sprintf("%s: no replica took the lease within %s", what, 4*leaseDuration)})
		}
	}
	return vs
}

// leaderless are the spans from each kill to the first reconcile of the
// process that takes over (the end of the fault when that is unknown).
func (r *run) leaderless() []timeSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []timeSpan
	for _, f := range r.faults {
		if !strings.Contains(f.Type, "SIGKILL") {
			continue
		}
		to := f.End
		switch {
		case f.ToReconcile > 0:
			to = f.End.Add(f.ToReconcile)
		case f.ToLeader > 0:
			to = f.At.Add(f.ToLeader)
		}
		out = append(out, timeSpan{from: f.At, to: to})
	}
	return out
}

func (r *run) addFault(f fault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, f)
	log.Printf("[%s] fault %s: %s (fault %s, to progress %s%s)", r.sc.name, f.Type, f.Note,
		f.End.Sub(f.At).Round(time.Millisecond), f.ToProgress.Round(time.Millisecond), leaderNote(f))
}

func leaderNote(f fault) string {
	if f.ToLeader == 0 {
		return ""
	}
	return ", to new leader " + f.ToLeader.Round(time.Millisecond).String()
}

// progressAfter waits up to limit for the first operator write after t.
func (r *run) progressAfter(ctx context.Context, t time.Time, limit time.Duration) time.Duration {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p := r.rec.firstProgressAfter(t); !p.IsZero() {
			return p.Sub(t)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1
}

// execute runs the scenario end to end and checks the invariants.
func execute(ctx context.Context, e *env, sc scenario, p profile, seed uint64) *Result {
	r := &run{sc: sc, p: p, e: e, ns: "chaos-" + sc.name, rng: rand.New(rand.NewPCG(seed, uint64(len(sc.name)))), began: time.Now()}
	res := &Result{Scenario: sc.name, Seed: seed, Started: r.began}
	if err := r.execute(ctx, res); err != nil {
		res.Error = err.Error()
	}
	res.WallSeconds = time.Since(r.began).Seconds()
	return res
}

func (r *run) execute(ctx context.Context, res *Result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := r.e.createNamespace(ctx, r.ns); err != nil {
		return err
	}
	r.rec = newRecorder()
	r.jobs = planBurst(r.rng, r.ns, r.p.jobs)
	dis := newDisruptor(ctx, r.e, r.jobs)
	sus := newSuspender(ctx, r.e, r.jobs)
	loser := newNodeLoser(ctx, r.e, r.jobs)
	r.rec.onPod = func(p podObs) {
		dis.observe(p)
		sus.observe(p)
		loser.observe(p)
	}
	if err := r.rec.start(ctx, r.e.cfg, r.ns); err != nil {
		return err
	}
	if err := r.startOperators(ctx); err != nil {
		return err
	}
	defer func() {
		for _, o := range r.ops {
			o.stop()
		}
	}()

	log.Printf("[%s] creating %d jobs over %s (seed %d)", r.sc.name, len(r.jobs), r.p.createFor, res.Seed)
	burstStart := time.Now()
	var createFailed map[string]error
	var wg sync.WaitGroup
	wg.Go(func() { createFailed = r.e.createJobs(ctx, r.jobs, r.p.createFor, 3*time.Minute) })
	faultCtx, stopFaults := context.WithCancel(ctx)
	var injectErr error
	var fwg sync.WaitGroup
	fwg.Go(func() { injectErr = r.sc.inject(faultCtx, r) })
	wg.Wait()
	log.Printf("[%s] all creates sent after %s", r.sc.name, time.Since(burstStart).Round(time.Millisecond))

	// Faults follow their own bounded schedule (all of it is injected, even
	// if jobs finish first); then every job must finish.
	fwg.Wait()
	stopFaults()
	allDone := r.waitTerminal(ctx, len(r.jobs)-len(createFailed), r.p.finishTimeout)
	if injectErr != nil {
		res.Error = joinErr(res.Error, "fault injection: "+injectErr.Error())
	}
	// Let late writes arrive: a job flipping back or a late pod would show now.
	time.Sleep(r.p.settle)

	final, err := r.e.finalJobs(ctx, r.ns)
	if err != nil {
		return fmt.Errorf("listing jobs: %w", err)
	}
	in := checkInput{Expect: map[string]expectation{}, Final: final, History: r.rec.snapshot(), Disrupted: dis.results(), Suspended: sus.results(), LostPods: loser.stop(),
		Leaderless: r.leaderless()}
	for _, j := range r.jobs {
		if _, bad := createFailed[j.key()]; !bad {
			in.Expect[j.key()] = j.expect
		}
	}
	vs, stats := check(in)
	if err := r.e.dumpEvents(ctx, r.ns, filepath.Join(r.e.dir, r.sc.name+"-events.txt")); err != nil {
		log.Printf("[%s] dumping events: %v", r.sc.name, err)
	}
	if err := writeHistory(filepath.Join(r.e.dir, r.sc.name+"-history.json"), in); err != nil {
		log.Printf("[%s] writing history: %v", r.sc.name, err)
	}
	for key, err := range createFailed {
		vs = append(vs, violation{Job: key, Rule: ruleCreate, Detail: err.Error()})
	}
	r.mu.Lock()
	vs = append(vs, faultViolations(r.faults)...)
	r.mu.Unlock()
	for _, o := range r.ops {
		for _, msg := range o.exitedUnexpectedly() {
			vs = append(vs, violation{Rule: ruleOperatorExit, Detail: msg})
		}
	}
	r.summarize(res, in, vs, stats, burstStart, allDone)
	return nil
}

// startOperators starts the scenario's replicas, each ready before the next.
func (r *run) startOperators(ctx context.Context) error {
	var addrs []string
	for i := range r.sc.replicas {
		name := fmt.Sprintf("%s-%c", r.sc.name, 'a'+i)
		o, err := newOperator(r.e.bin, r.e.dir, name, r.e.cluster.KubeconfigPath(), r.e.fwd.url(), r.sc.leaderElect)
		if err != nil {
			return err
		}
		r.ops = append(r.ops, o)
		addrs = append(addrs, o.webhookAddr)
	}
	r.e.fwd.setBackends(addrs...)
	for _, o := range r.ops {
		if err := o.start(); err != nil {
			return err
		}
		if err := o.waitReady(ctx, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// waitTerminal waits until n jobs are terminal and returns when the last
// one got there (zero on timeout).
func (r *run) waitTerminal(ctx context.Context, n int, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	lastLog := time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		done := r.rec.terminalJobs()
		if done >= n {
			return time.Now()
		}
		if time.Since(lastLog) > 15*time.Second {
			log.Printf("[%s] %d/%d jobs finished", r.sc.name, done, n)
			lastLog = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	log.Printf("[%s] timed out after %s waiting for jobs to finish", r.sc.name, timeout)
	return time.Time{}
}

// summarize fills the result from the check and the faults.
func (r *run) summarize(res *Result, in checkInput, vs []violation, stats checkStats, burstStart, allDone time.Time) {
	r.mu.Lock()
	faults := append([]fault(nil), r.faults...)
	r.mu.Unlock()
	sort.Slice(faults, func(i, j int) bool { return faults[i].At.Before(faults[j].At) })
	res.Jobs = len(r.jobs)
	res.Kinds = map[string]int{}
	res.Designs = map[string]int{}
	for _, j := range r.jobs {
		res.Kinds[j.kind.kind]++
		res.Designs[j.expect.Design]++
		if j.expect.Tracked {
			res.Tracked++
		}
	}
	for _, f := range in.Final {
		switch {
		case f.Succeeded:
			res.Succeeded++
		case f.Failed:
			res.Failed++
		}
		res.Restarts += int(f.RestartCount)
		res.WholeJobRestarts += int(f.Restarts)
	}
	res.Pods = len(firstSeen(in.History.Pods))
	res.Disrupted = len(in.Disrupted)
	res.Suspended = len(in.Suspended)
	res.SuspendedPods = len(suspendedUIDs(in.History.Pods))
	res.Faults = faults
	res.FaultCount = len(faults)
	res.Violations = vs
	res.InfraDeletions = stats.InfraDeletions
	res.WatchGaps = len(in.History.Gaps)
	var sum, worst time.Duration
	var n int
	var lastEnd time.Time
	for _, f := range faults {
		if f.End.After(lastEnd) {
			lastEnd = f.End
		}
		if f.ToProgress < 0 {
			continue
		}
		sum += f.ToProgress
		worst = max(worst, f.ToProgress)
		n++
	}
	if n > 0 {
		res.MeanToProgressSeconds = (sum / time.Duration(n)).Seconds()
		res.MaxToProgressSeconds = worst.Seconds()
	}
	for _, f := range faults {
		if f.ToLeader > 0 {
			res.MaxToLeaderSeconds = max(res.MaxToLeaderSeconds, f.ToLeader.Seconds())
		}
	}
	if !allDone.IsZero() {
		// The recorder's first terminal observation of the last job is more
		// precise than the polling loop's.
		var last time.Time
		for _, s := range jobSpans(in.History.Jobs) {
			if s.to.After(last) {
				last = s.to
			}
		}
		if !last.IsZero() {
			allDone = last
		}
		res.AllTerminalSeconds = allDone.Sub(burstStart).Seconds()
		if !lastEnd.IsZero() {
			res.LastFaultToAllTerminalSeconds = max(0, allDone.Sub(lastEnd).Seconds())
		}
	}
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// writeHistory keeps every observation for post-mortems of a violation.
func writeHistory(path string, in checkInput) error {
	data, err := json.Marshal(struct {
		Pods      []podObs               `json:"pods"`
		Jobs      []jobObs               `json:"jobs"`
		Gaps      []time.Time            `json:"gaps"`
		Final     map[string]jobObs      `json:"final"`
		Expect    map[string]expectation `json:"expect"`
		Disrupted map[string]disruption  `json:"disrupted"`
		Suspended map[string]bool        `json:"suspended"`
		LostPods  map[string]lostPod     `json:"lostPods"`
	}{in.History.Pods, in.History.Jobs, in.History.Gaps, in.Final, in.Expect, in.Disrupted, in.Suspended, in.LostPods})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
