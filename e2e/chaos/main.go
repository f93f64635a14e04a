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

// Command chaos injects faults into the operator and its control plane
// while a burst of jobs of all six kinds runs on the local control plane
// (package harness/cluster), then checks that nothing was lost or duplicated:
// every job ends as designed, restartCount is exact where the design fixes
// it (and for tracked jobs, with backoffLimit or failurePolicy, counts every
// deletion exactly once), a failure policy's restarts match its budget and
// the restart-attempt labels of its pods, no replica ever had two live pods,
// no finished job came back, no pod was created more often than its retries
// allow. See hack/chaos.sh (make chaos).
//
//	go run ./e2e/chaos [--quick] [--seed N] [--scenarios kill,failover,apiserver] [--jobs N]
//
// Scenarios: kill (the operator SIGKILLed every 5-10 s and restarted),
// failover (two replicas with leader election, the leader SIGKILLed),
// apiserver (kube-apiserver killed and restarted, etcd frozen with SIGSTOP).
// Results go to _output/chaos/<timestamp>/ as report.md and report.json
// with the operator and component logs; the Markdown is also printed. The
// exit code is 1 when any invariant is violated.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/seed-d8a409e9/training-operator/test/util"
)

// profile sizes a run.
type profile struct {
	name      string
	nodes     int
	jobs      int
	createFor time.Duration // the burst is spread over this
	// kill
	faultFor  time.Duration    // kills happen from the burst start for this long
	killEvery [2]time.Duration // random interval between kills
	// failover
	failovers   int
	failoverGap time.Duration
	// apiserver
	controlPlaneFaults []string // "apiserver" or "etcd", in order
	controlPlaneGap    time.Duration
	etcdPause          time.Duration

	finishTimeout time.Duration
	settle        time.Duration
}

var (
	// fullProfile is the sizes: 300 jobs per scenario.
	fullProfile = profile{
		name: "full", nodes: 4, jobs: 300, createFor: 60 * time.Second,
		faultFor: 120 * time.Second, killEvery: [2]time.Duration{5 * time.Second, 10 * time.Second},
		failovers: 3, failoverGap: 20 * time.Second,
		controlPlaneFaults: []string{"apiserver", "etcd", "apiserver", "etcd"}, controlPlaneGap: 15 * time.Second,
		etcdPause:     10 * time.Second,
		finishTimeout: 10 * time.Minute, settle: 5 * time.Second,
	}
	// quickProfile runs in make test: fewer jobs and faults, same checks.
	quickProfile = profile{
		name: "quick", nodes: 2, jobs: 60, createFor: 12 * time.Second,
		faultFor: 32 * time.Second, killEvery: [2]time.Duration{5 * time.Second, 10 * time.Second},
		failovers: 1, failoverGap: 8 * time.Second,
		controlPlaneFaults: []string{"apiserver", "etcd"}, controlPlaneGap: 6 * time.Second,
		etcdPause:     10 * time.Second,
		finishTimeout: 4 * time.Minute, settle: 3 * time.Second,
	}
	allScenarios = []scenario{killScenario, failoverScenario, apiserverScenario}
)

type options struct {
	profile   profile
	seed      uint64
	scenarios []scenario
	bin       string
	out       string
	// summary, when set, is make test's summary file: one line is added.
	summary string
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("[chaos] ")
	ctrllog.SetLogger(logr.Discard()) // the harness's own clients
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := runAll(ctx, o)
	if err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseFlags() (options, error) {
	var (
		o     options
		quick = flag.Bool("quick", false, "trimmed profile (60 jobs and a few faults per scenario) for make test")
		seed  = flag.Uint64("seed", 0, "random seed for the job mix and fault timing (default: from the clock; printed)")
		only  = flag.String("scenarios", "kill,failover,apiserver", "comma-separated scenarios to run: kill, failover, apiserver")
		jobs  = flag.Int("jobs", 0, "jobs per scenario (default 300, or 60 with --quick)")
	)
	flag.StringVar(&o.bin, "operator", "bin/manager", "operator binary under test")
	flag.StringVar(&o.summary, "summary", "", "append a line with the scenarios run and the violations found to this file (make test's summary)")
	flag.StringVar(&o.out, "out", filepath.Join(util.RepoRoot(), "_output", "chaos"), "results directory (a timestamped subdirectory is created)")
	flag.Parse()
	if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	o.profile = fullProfile
	if *quick {
		o.profile = quickProfile
	}
	if *jobs > 0 {
		o.profile.jobs = *jobs
	}
	o.seed = *seed
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	for _, name := range strings.Split(*only, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, s := range allScenarios {
			if s.name == name {
				o.scenarios = append(o.scenarios, s)
				found = true
			}
		}
		if !found {
			return o, fmt.Errorf("unknown scenario %q (want kill, failover, apiserver)", name)
		}
	}
	abs, err := filepath.Abs(o.bin)
	if err != nil {
		return o, err
	}
	if _, err := os.Stat(abs); err != nil {
		return o, fmt.Errorf("operator binary: %w (make build)", err)
	}
	o.bin = abs
	return o, nil
}

// runAll starts one control plane, runs the scenarios in their own
// namespaces one after the other and writes the report. ok is false when
// an invariant was violated or a scenario could not run.
func runAll(ctx context.Context, o options) (bool, error) {
	rep := &Report{Started: time.Now(), Profile: o.profile.name, Seed: o.seed,
		Lease: LeaseSettings{Duration: leaseDuration.String(), RenewDeadline: renewDeadline.String(), RetryPeriod: retryPeriod.String()}}
	dir := filepath.Join(o.out, rep.Started.Format("20060102-150405"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	log.Printf("profile %s, seed %d, results in %s", o.profile.name, o.seed, dir)
	// Restarts must run the binary under test even if bin/ is rebuilt meanwhile.
	bin := filepath.Join(dir, "manager")
	if err := copyFile(o.bin, bin); err != nil {
		return false, err
	}
	o.bin = bin
	e, cleanup, err := setupEnv(ctx, o.bin, dir, o.profile.nodes)
	if err != nil {
		return false, err
	}
	defer cleanup()
	for _, sc := range o.scenarios {
		res := execute(ctx, e, sc, o.profile, o.seed)
		rep.Results = append(rep.Results, res)
		log.Printf("[%s] done: %d jobs, %d faults, %d violations in %.0fs", sc.name, res.Jobs, res.FaultCount, len(res.Violations), res.WallSeconds)
		if err := writeReport(dir, rep); err != nil {
			return false, err
		}
		if ctx.Err() != nil {
			return false, errors.New("interrupted")
		}
	}
	rep.WallSeconds = time.Since(rep.Started).Seconds()
	if err := writeReport(dir, rep); err != nil {
		return false, err
	}
	fmt.Print(rep.Markdown())
	log.Printf("report: %s", filepath.Join(dir, "report.md"))
	if o.summary != "" {
		if err := appendSummary(o.summary, rep); err != nil {
			return false, err
		}
	}
	return rep.OK(), nil
}

// appendSummary adds the run's line to make test's summary: scenarios run
// (each one check of every invariant over its jobs) and those that failed.
func appendSummary(path string, rep *Report) error {
	failed, violations := 0, 0
	for _, res := range rep.Results {
		violations += len(res.Violations)
		if res.Error != "" || len(res.Violations) > 0 {
			failed++
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%-12s run %5d   skipped %3d   failed %3d   (scenarios; %d invariant violations, seed %d)\n",
		"chaos-"+rep.Profile, len(rep.Results), 0, failed, violations, rep.Seed)
	return errors.Join(err, f.Close())
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}
