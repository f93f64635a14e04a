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

// Command bench measures a training operator on the local control plane
// (package harness/cluster): job throughput and latency, the API requests,
// reconciles, status writes and Events per job, its CPU and memory, a
// restart at scale and a whole-job restart by a failure policy, next to
// the raw limit of the same control plane, and evaluates the performance
// targets on them. The operator and the raw client talk to the apiserver
// directly; the operator's requests come from its own
// rest_client_requests_total, status writes and Events from the bench's
// watches (--proxy adds a per-verb and resource count through a proxy).
// See hack/bench.sh (make bench).
//
//	go run ./e2e/bench [--full] [--operator bin/manager] [--operator-args '...']
//	go run ./e2e/bench [--scenarios burst,restart] [--cpu-profile] [--proxy]
//	go run ./e2e/bench --compare A B
//
// Results go to _output/bench/<timestamp>/ as report.json and report.md,
// with the operator logs; the Markdown is also printed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/e2e/kueueproc"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// createParallelism is the number of create requests the bench keeps in flight.
const createParallelism = 32

// kwokPodParallelism is how many pod stages KWOK plays at once for the
// bench's clusters. Real kubelets work per node, in parallel; KWOK's
// default of 4 workers for all nodes paced the 20,000-pod scenarios (under
// 50 jobs a minute finished, with the CPU far from busy).
const kwokPodParallelism = 32

// sizes are the scenario sizes of a mode.
type sizes struct {
	nodes         int
	burst         []int
	bigJobWorkers int
	steadyRate    float64
	steadyFor     time.Duration
	retainedJobs  int // 0 skips the retained-memory scenario
	// restartFinished finished and restartRunning running jobs are in the
	// cluster when the restart scenario restarts the operator.
	restartFinished, restartRunning int
	// listCostPods pods are listed by the list-cost scenario.
	listCostPods int
	podRuntime   time.Duration
	// kueueJobs jobs go through one Kueue queue in each integration mode.
	kueueJobs int
	// scale are the scale curve's burst sizes, smallest first.
	scale []int
}

var (
	quickSizes = sizes{nodes: 20, burst: []int{50}, bigJobWorkers: 199, steadyRate: 5, steadyFor: 20 * time.Second,
		restartFinished: 200, restartRunning: 20, listCostPods: 2000, podRuntime: 10 * time.Second, kueueJobs: 50,
		scale: []int{25, 50, 100, 200}}
	fullSizes = sizes{nodes: 100, burst: []int{100, 500}, bigJobWorkers: 999, steadyRate: 10, steadyFor: time.Minute, retainedJobs: 5000,
		restartFinished: 5000, restartRunning: 200, listCostPods: 20000, podRuntime: 10 * time.Second, kueueJobs: 500,
		scale: []int{250, 500, 1000, 2000}}
)

type options struct {
	mode         string
	sizes        sizes
	operators    []string
	operatorArgs string
	heapProfile  bool
	cpuProfile   bool
	// proxy puts the counting proxy between the operator (and the raw
	// client) and the apiserver, for the per-verb and resource breakdown.
	proxy  bool
	outDir string
	only   map[string]bool
	// repeat runs each raw/operator pair this many times, interleaved.
	repeat int
}

// scenario is one measurement; run fills res.Jobs, res.Pods and
// res.Metrics. The operator's API requests, CPU and memory are measured
// around it.
type scenario struct {
	name string
	run  func(ctx context.Context, e *env, res *Result) error
	// before and after, when set, run outside the measurement window (e.g.
	// to start and stop a process the scenario needs); after runs even
	// when before or run failed, and may add figures to res.
	before, after func(ctx context.Context, e *env, res *Result) error
}

// repetition names the r-th run of s: "burst-500", "burst-500-r2", ... (the
// name is also the scenario's namespace).
func (s scenario) repetition(r int) scenario {
	if r > 1 {
		s.name += fmt.Sprintf("-r%d", r)
	}
	return s
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("[bench] ")
	ctrllog.SetLogger(logr.Discard()) // the bench's own informers and clients
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}

func parseFlags() (options, error) {
	var (
		o       options
		full    = flag.Bool("full", false, "the issue's sizes (100 nodes; bursts of 100 and 500 jobs; a 1000-replica job; 10 jobs/s for 60 s; 5,000 kept jobs)")
		quick   = flag.Bool("quick", false, "small sizes finishing in a few minutes (the default)")
		bin     = flag.String("operator", "bin/manager", "operator binary under test")
		compare = flag.Bool("compare", false, "benchmark the two operator binaries given as arguments (A B) one after the other and print B/A ratios")
		only    = flag.String("scenarios", "", "comma-separated scenario name prefixes to run (raw,burst,burst-tracked,bigjob,steady,request-cost,list-cost,retained,restart-policy,scale,kueue,restart); "+
			"default all; restart picks the operator's restart, not restart-policy")
		runtime  = flag.Duration("pod-runtime", 0, "how long KWOK keeps each pod Running before it succeeds (default 10s)")
		restarts = flag.Int("restart-jobs", 0, "finished jobs in the restart scenario, with one running job per 25 (default 200, 5,000 with --full)")
	)
	flag.StringVar(&o.operatorArgs, "operator-args", defaultOperatorArgs,
		"extra operator arguments after --kubeconfig, --metrics-bind-address, --health-probe-bind-address and --leader-elect=false; "+
			"placeholders {kubeconfig} {metrics} {health} {webhook-port} {config} {dir}")
	leaderElect := flag.Bool("leader-elect", false,
		"run the operator with leader election (appends --leader-elect=true), so the bursts report its Lease's renewal intervals")
	flag.BoolVar(&o.heapProfile, "heap-profile", false,
		"pass --pprof-bind-address={pprof} to the operator and save its heap profile after each scenario as <scenario>.heap.pb.gz (go tool pprof -top)")
	flag.BoolVar(&o.cpuProfile, "cpu-profile", false,
		"pass --pprof-bind-address={pprof} to the operator and save its CPU profile over each scenario as <scenario>.cpu.pb.gz (go tool pprof -top)")
	flag.BoolVar(&o.proxy, "proxy", false,
		"send the operator's and the raw client's requests through counting proxies and add the requests by verb and resource; "+
			"without it both talk to the apiserver directly and the operator's requests are counted from its rest_client_requests_total")
	flag.IntVar(&o.repeat, "repeat", 1,
		"run each raw-client/operator pair (bursts, big job) this many times, interleaved, and add the median ratio to the targets: "+
			"the raw limit alone moves by ±15% between runs")
	flag.StringVar(&o.outDir, "out", filepath.Join(util.RepoRoot(), "_output", "bench"), "results directory (a timestamped subdirectory is created)")
	flag.Parse()

	if *leaderElect {
		o.operatorArgs += " --leader-elect=true"
	}
	if o.repeat < 1 {
		return o, errors.New("--repeat must be at least 1")
	}
	if *full && *quick {
		return o, errors.New("--full and --quick are exclusive")
	}
	o.mode, o.sizes = "quick", quickSizes
	if *full {
		o.mode, o.sizes = "full", fullSizes
	}
	if *runtime > 0 {
		o.sizes.podRuntime = *runtime
	}
	if *restarts > 0 {
		o.sizes.restartFinished, o.sizes.restartRunning = *restarts, max(1, *restarts/25)
	}
	o.operators = []string{*bin}
	if *compare {
		if flag.NArg() != 2 {
			return o, errors.New("--compare needs two operator binaries: --compare A B")
		}
		o.operators = flag.Args()
	} else if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q (did you mean --compare A B?)", flag.Args())
	}
	for i, b := range o.operators {
		abs, err := filepath.Abs(b)
		if err != nil {
			return o, err
		}
		if _, err := os.Stat(abs); err != nil {
			return o, fmt.Errorf("operator binary: %w (make build)", err)
		}
		o.operators[i] = abs
	}
	if *only != "" {
		o.only = map[string]bool{}
		for _, s := range strings.Split(*only, ",") {
			o.only[strings.TrimSpace(s)] = true
		}
	}
	return o, nil
}

// scenarios in run order. Each burst and the big job run right after the
// raw client creating the same objects, so that both meet the control plane
// in the same state (etcd history, compaction, the scheduler's and garbage
// collector's caches): with all raw scenarios first, the later operator
// scenarios paid for the cluster's age. Every scenario's namespace is
// cleared before the next one starts. With --repeat, the pairs repeat in
// turn; repetition r > 1 carries the suffix "-r<r>" (see repetition).
func (o options) scenarios() []scenario {
	sz := o.sizes
	var list []scenario
	pairs := func(a, b scenario) {
		for r := 1; r <= o.repeat; r++ {
			list = append(list, a.repetition(r), b.repetition(r))
		}
	}
	for _, n := range sz.burst {
		pairs(raw(n, 4), burst(n))
	}
	// Once, at the largest size: its requests per job are what it is for,
	// next to the plain burst's.
	list = append(list, trackedBurst(sz.burst[len(sz.burst)-1]))
	pairs(raw(1, sz.bigJobWorkers+1), bigJob(sz.bigJobWorkers))
	list = append(list, steady(sz.steadyRate, sz.steadyFor), requestCost(sz.burst[len(sz.burst)-1]), listCost(sz.listCostPods))
	if sz.retainedJobs > 0 {
		list = append(list, retained(sz.retainedJobs))
	}
	list = append(list, restartPolicy(restartPolicyReplicas))
	for _, n := range sz.scale {
		list = append(list, scaleBurst(n))
	}
	// Kueue's own integration, then the operator's, with the same jobs.
	pairs(kueueBurst(kueueproc.Builtin, sz.kueueJobs), kueueBurst(kueueproc.Operator, sz.kueueJobs))
	// Last: the operator it restarts serves no later scenario.
	list = append(list, restart(sz.restartFinished, sz.restartRunning))
	if o.only == nil {
		return list
	}
	var out []scenario
	for _, s := range list {
		for p := range o.only {
			if selects(p, s.name) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// selects reports whether the --scenarios prefix p picks the scenario name:
// every scenario it begins, except the whole-job restart (restart-policy-…),
// which only a prefix naming it picks, so that "restart" keeps meaning the
// operator's restart alone, as it did before there was another.
func selects(p, name string) bool {
	if strings.HasPrefix(name, restartPolicyPrefix) && !strings.HasPrefix(p, restartPolicyPrefix) {
		return false
	}
	return strings.HasPrefix(name, p)
}

func run(ctx context.Context, o options) error {
	rep := &Report{Started: time.Now(), Mode: o.mode}
	dir := filepath.Join(o.outDir, rep.Started.Format("20060102-150405"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, bin := range o.operators {
		label := filepath.Base(bin)
		if len(o.operators) == 2 {
			label = fmt.Sprintf("%c: %s", 'A'+i, bin)
		}
		runDir := filepath.Join(dir, fmt.Sprintf("run-%d-%s", i+1, filepath.Base(bin)))
		if err := os.MkdirAll(runDir, 0o755); err != nil {
			return err
		}
		r := benchOperator(ctx, o, bin, label, runDir)
		rep.Runs = append(rep.Runs, r)
		if err := writeReport(dir, rep); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	md := rep.Markdown()
	fmt.Println(md)
	log.Printf("results in %s", dir)
	for _, r := range rep.Runs {
		if r.Error != "" {
			return errors.New(r.Error)
		}
	}
	return nil
}

func writeReport(dir string, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(rep.Markdown()), 0o644)
}

// benchOperator runs every scenario against bin on a fresh control plane.
// copyBinary copies the operator binary into dir with plain writes and
// returns the copy's path. The binary's resident pages (RSS's file-backed
// part) depend on how its file entered the page cache: the same build ran
// with about 6 MiB more of them straight from the linker's output than from
// a copy, so each binary under test runs from a copy, as from an image's
// extracted file.
func copyBinary(bin, dir string) (string, error) {
	src, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer func() { _ = src.Close() }()
	path := filepath.Join(dir, filepath.Base(bin))
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(struct{ io.Writer }{dst}, src); err != nil {
		_ = dst.Close()
		return "", fmt.Errorf("copying the operator binary: %w", err)
	}
	return path, dst.Close()
}

func benchOperator(ctx context.Context, o options, bin, label, dir string) *Run {
	r := &Run{Label: label, Operator: bin, Nodes: o.sizes.nodes}
	run, err := copyBinary(bin, dir)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	e, cleanup, err := setupEnv(ctx, o, run, dir)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer cleanup()
	r.Args = e.operator.args
	whole := e.begin(ctx)
	if err := warmUp(ctx, e); err != nil {
		r.Error = fmt.Sprintf("warm-up job: %v (log: %s)", err, filepath.Join(dir, "operator.log"))
		return r
	}
	list := o.scenarios()
	for i, s := range list {
		log.Printf("%s: scenario %s", label, s.name)
		res := &Result{Scenario: s.name}
		if s.before != nil {
			if err := s.before(ctx, e, res); err != nil {
				res.Error = err.Error()
			}
		}
		if res.Error == "" {
			measure(ctx, o, e, s, res, label, dir)
		}
		if s.after != nil {
			if err := s.after(ctx, e, res); err != nil {
				res.Error = joinErr(res.Error, err.Error())
			}
		}
		r.Results = append(r.Results, res)
		log.Printf("%s: %s done%s", label, s.name, errSuffix(res.Error))
		if ctx.Err() != nil || e.operator.Exited() {
			break
		}
		if i < len(list)-1 {
			start := time.Now()
			if err := e.clear(ctx, s.name); err != nil {
				log.Printf("%s: clearing %s: %v", label, s.name, err)
			}
			log.Printf("%s: cleared %s in %.1f s", label, s.name, time.Since(start).Seconds())
			time.Sleep(settle) // the operator's deletion traffic belongs to no scenario
		}
	}
	var total Result
	whole.end(ctx, &total)
	r.Footprint = total.Footprint // CPU and RSS; VmHWM was reset per scenario:
	for _, res := range r.Results {
		r.Footprint.PeakRSSMiB = max(r.Footprint.PeakRSSMiB, res.Footprint.PeakRSSMiB)
	}
	if !whole.hwmOK {
		log.Printf("note: could not reset VmHWM; per-scenario peak RSS is the peak since operator start")
	}
	r.Targets = targets(r)
	return r
}

// measure runs one scenario inside a measurement window, with the
// profiles asked for.
func measure(ctx context.Context, o options, e *env, s scenario, res *Result, label, dir string) {
	var prof *cpuProfile
	// The raw client's scenarios stop the operator (SIGSTOP): nothing to profile.
	if o.cpuProfile && !strings.HasPrefix(s.name, "raw-client") {
		prof = e.operator.profileCPU(ctx)
	}
	w := e.begin(ctx)
	if err := s.run(ctx, e, res); err != nil {
		res.Error = err.Error()
	}
	time.Sleep(settle)
	w.end(ctx, res)
	if prof != nil {
		if err := prof.save(filepath.Join(dir, s.name+".cpu.pb.gz")); err != nil {
			log.Printf("%s: CPU profile: %v", label, err)
		}
	}
	if o.heapProfile {
		if err := e.operator.saveHeapProfile(ctx, filepath.Join(dir, s.name+".heap.pb.gz")); err != nil {
			log.Printf("%s: heap profile: %v", label, err)
		}
	}
}

func errSuffix(err string) string {
	if err == "" {
		return ""
	}
	return ": " + err
}

// warmUp runs one small job end to end, so that the webhooks, caches and
// connections are up before anything is measured.
func warmUp(ctx context.Context, e *env) error {
	const ns = "bench-warmup"
	if err := e.createNamespace(ctx, ns); err != nil {
		return err
	}
	job := jobTemplate("warmup", ns, 1, time.Second)
	keys, err := e.createJobs(ctx, []*kubeflowv1.PyTorchJob{job}, 1)
	if err != nil {
		return err
	}
	if err := e.waitJobs(ctx, keys, jobGoal{pods: 2, services: 2, succeeded: true}, 2*time.Minute); err != nil {
		return err
	}
	time.Sleep(settle) // its trailing requests belong to no scenario
	return nil
}
