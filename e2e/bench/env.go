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
	"cmp"
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/internal/kube/metacreate"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// env is one operator on one fresh control plane, plus the bench's client,
// tracker and (with --proxy) accounting proxies.
type env struct {
	cluster *cluster.Cluster
	client  client.Client
	// proxy counts the operator's requests by verb and resource (--proxy
	// only; nil otherwise).
	proxy *apiProxy
	// rawClient is the raw-limit scenario's client. It talks to the
	// apiserver directly like the operator, or with --proxy through a proxy
	// of its own, like the operator's, so that the two are compared on
	// equal terms.
	rawClient client.Client
	// metaCreateClient is rawClient creating pods and Services as the
	// operator does: in protobuf, with metadata-only replies.
	metaCreateClient client.Client
	operator         *operator
	tracker          *tracker
	cpu              *cpuSampler
	sizes            sizes
	// kueue is Kueue as the kueue scenarios run it (nil before the first).
	kueue *kueueRunner
}

// settle is how long a scenario's measurement window stays open after its
// last condition was met, so trailing requests (last status write, events)
// are attributed to it.
const settle = 3 * time.Second

// setupEnv starts the control plane, CRDs, proxy, tracker and operator. The
// returned cleanup stops everything started.
func setupEnv(ctx context.Context, o options, bin, dir string) (*env, func(), error) {
	e := &env{sizes: o.sizes}
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	fail := func(err error) (*env, func(), error) { cleanup(); return nil, nil, err }

	c, err := cluster.Start(ctx, cluster.Options{Nodes: o.sizes.nodes, GPUsPerNode: 8, KwokPodParallelism: kwokPodParallelism, Logf: log.Printf})
	if err != nil {
		return fail(err)
	}
	e.cluster = c
	cleanups = append(cleanups, func() { _ = c.Stop() })

	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 2000
	if err := util.InstallCRDs(ctx, cfg, filepath.Join(util.RepoRoot(), "config", "crd", "bases")); err != nil {
		return fail(err)
	}
	if e.client, err = client.New(cfg, client.Options{Scheme: util.Scheme()}); err != nil {
		return fail(err)
	}
	trackerCtx, stopTracker := context.WithCancel(ctx)
	cleanups = append(cleanups, stopTracker)
	if e.tracker, err = startTracker(trackerCtx, cfg); err != nil {
		return fail(err)
	}
	// Direct connections by default: the proxy's hop (TLS termination, a
	// second HTTP/2 connection, its goroutines on the same two cores) cost
	// the raw client and the operator differently and moved the ratio.
	api, rawCfg := c.RESTConfig(), rest.CopyConfig(cfg)
	if o.proxy {
		if e.proxy, err = startProxy(c.RESTConfig()); err != nil {
			return fail(err)
		}
		cleanups = append(cleanups, e.proxy.Close)
		api = e.proxy.RESTConfig()
		rawProxy, err := startProxy(c.RESTConfig())
		if err != nil {
			return fail(err)
		}
		cleanups = append(cleanups, rawProxy.Close)
		rawCfg = rawProxy.RESTConfig()
		rawCfg.QPS, rawCfg.Burst = cfg.QPS, cfg.Burst
	}
	// A connection of its own, as the operator has: with the same
	// configuration, client-go would share the tracker's, which carries the
	// bench's watches. (A custom dialer keeps the transport out of
	// client-go's cache.)
	rawCfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if e.rawClient, err = client.New(rawCfg, client.Options{Scheme: util.Scheme()}); err != nil {
		return fail(err)
	}
	httpClient, err := rest.HTTPClientFor(rawCfg)
	if err != nil {
		return fail(err)
	}
	if e.metaCreateClient, err = metacreate.New(e.rawClient, rawCfg, httpClient); err != nil {
		return fail(err)
	}
	log.Printf("starting operator %s", bin)
	args := o.operatorArgs
	if o.heapProfile || o.cpuProfile {
		args += " --pprof-bind-address={pprof}"
	}
	if e.operator, err = startOperator(ctx, bin, args, dir, api); err != nil {
		return fail(err)
	}
	cleanups = append(cleanups, e.operator.Stop)
	samplerCtx, stopSampler := context.WithCancel(ctx)
	cleanups = append(cleanups, stopSampler)
	e.cpu = startCPUSampler(samplerCtx, 250*time.Millisecond, e.pids)
	return e, cleanup, nil
}

// pids are the processes whose CPU the bench accounts: the control plane's,
// the operator's and its own.
func (e *env) pids() map[string]int {
	pids := e.controlPlanePIDs()
	pids[operatorProcess] = e.operator.pid()
	pids[benchProcess] = os.Getpid()
	return pids
}

// controlPlanePIDs are the control plane's processes, with Kueue while a
// kueue scenario runs it.
func (e *env) controlPlanePIDs() map[string]int {
	pids := e.cluster.PIDs()
	if e.kueue != nil && e.kueue.proc != nil && !e.kueue.proc.Exited() {
		pids[kueueProcess] = e.kueue.proc.Pid()
	}
	return pids
}

// window measures the operator between begin and end: API requests from
// its own metrics (and the proxy's counts with --proxy), CPU time and peak
// RSS. When the operator was restarted in between, the metrics' figures
// (requests, reconciles) and the peak RSS are the new process's from its
// start, whose counters began at zero; CPU time is that of both processes.
type window struct {
	e       *env
	counts  map[requestKey]int
	metrics operatorMetrics
	gen     int // the operator process's generation at begin
	cpu     float64
	hwmOK   bool
	start   time.Time
	cp      cpuSnapshot // control-plane processes
	bench   float64     // this process: the bench's clients, proxies and watches
}

func (e *env) begin(ctx context.Context) *window {
	w := &window{e: e, metrics: e.operator.scrape(ctx), gen: e.operator.generation()}
	if e.proxy != nil {
		w.counts = e.proxy.snapshot()
	}
	w.cpu, _ = e.operator.totalCPUSeconds()
	w.hwmOK = e.operator.resetPeakRSS()
	w.start, w.cp = time.Now(), snapshotCPU(e.controlPlanePIDs())
	w.bench, _ = processCPUSeconds(os.Getpid())
	return w
}

func (w *window) end(ctx context.Context, res *Result) {
	e := w.e
	if e.operator.generation() != w.gen { // restarted: the new process's counters start at zero
		w.metrics = operatorMetrics{ok: w.metrics.ok}
	}
	after := e.operator.scrape(ctx)
	api := &APICost{Total: -1, ProxyTotal: -1}
	if e.proxy != nil {
		api.Requests, api.ProxyTotal = diffCounts(w.counts, e.proxy.snapshot())
	}
	if w.metrics.ok && after.ok {
		api.Total = int(after.requests - w.metrics.requests)
		api.Methods = diffMethods(w.metrics.byMethod, after.byMethod)
		api.ThrottleSeconds = after.throttleSum - w.metrics.throttleSum
		api.MeanReconcileSeconds = meanDelta(w.metrics.reconcileSum, after.reconcileSum, w.metrics.reconcileCount, after.reconcileCount)
		api.MeanQueueWaitSeconds = meanDelta(w.metrics.queueSum, after.queueSum, w.metrics.queueCount, after.queueCount)
		api.EventsWaiting = after.eventsWaiting
		api.Reconciles = map[string]int{}
		for k, v := range after.reconcileTotal {
			if d := int(v - w.metrics.reconcileTotal[k]); d > 0 {
				api.Reconciles[k] = d
			}
		}
	}
	res.API = api
	if res.Jobs > 0 {
		ns := cmp.Or(res.namespace, res.Scenario)
		act := e.tracker.activity(e.tracker.jobKeysIn(ns), time.Time{}, time.Time{})
		res.Activity = &act
	}
	cpu, _ := e.operator.totalCPUSeconds()
	res.Footprint.CPUSeconds = cpu - w.cpu
	if m, err := e.operator.memoryStatus(); err == nil {
		res.Footprint.RSSMiB, res.Footprint.PeakRSSMiB = m.rss, m.hwm
		res.Footprint.RSSAnonMiB, res.Footprint.RSSFileMiB = m.anon, m.file
	}
	res.Footprint.ControlPlaneCPUSeconds = snapshotCPU(e.controlPlanePIDs()).since(w.cp)
	if bench, err := processCPUSeconds(os.Getpid()); err == nil {
		res.Footprint.BenchCPUSeconds = bench - w.bench
	}
	res.Footprint.WallSeconds = time.Since(w.start).Seconds()
	if !res.creationFrom.IsZero() && res.creationTo.After(res.creationFrom) {
		if cpu, span := e.cpu.between(res.creationFrom, res.creationTo); cpu != nil {
			res.Creation = &PhaseCPU{Seconds: span.Seconds(), CPUSeconds: cpu}
		}
	}
	if e.operator.Exited() {
		res.Error = joinErr(res.Error, "operator exited")
	}
}

// diffMethods is after-before by method and code, sorted by method and code.
func diffMethods(before, after map[methodCode]float64) []MethodCount {
	var out []MethodCount
	for k, v := range after {
		if d := int(v - before[k]); d > 0 {
			out = append(out, MethodCount{Method: k.method, Code: k.code, Count: d})
		}
	}
	slices.SortFunc(out, func(a, b MethodCount) int {
		return cmp.Or(cmp.Compare(a.Method, b.Method), cmp.Compare(a.Code, b.Code))
	})
	return out
}

// meanDelta is the mean of a histogram's observations between two scrapes.
func meanDelta(sum0, sum1, count0, count1 float64) float64 {
	if count1 <= count0 {
		return 0
	}
	return (sum1 - sum0) / (count1 - count0)
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// jobTemplate is a PyTorchJob with 1 master and workers workers whose pods
// KWOK completes with exit code 0 podRuntime after they run.
func jobTemplate(name, ns string, workers int32, podRuntime time.Duration) *kubeflowv1.PyTorchJob {
	w := testjobs.MakePyTorchJob(name, ns).Master(1)
	if workers > 0 {
		w = w.Workers(workers)
	}
	for rt := range w.Spec.PyTorchReplicaSpecs {
		w = w.Annotation(rt, cluster.ExitCodeAnnotation, "0").Annotation(rt, cluster.ExitDelayAnnotation, podRuntime.String())
	}
	return w.Obj()
}

func (e *env) createNamespace(ctx context.Context, ns string) error {
	return e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
}

// clear deletes a finished scenario's namespace and waits until it is gone,
// so that every scenario starts on the same nearly empty cluster. Kept, the
// finished pods of earlier scenarios made the scheduler, KWOK and the watch
// caches slower for later ones. The delete-alls only speed it up: one of
// 5,000 jobs can outlast the apiserver's 60 s request timeout, and then the
// namespace controller deletes what is left, in its own pages and retries.
func (e *env) clear(ctx context.Context, ns string) error {
	if err := e.client.DeleteAllOf(ctx, &kubeflowv1.PyTorchJob{}, client.InNamespace(ns)); err != nil {
		log.Printf("clear %s: delete the jobs: %v (the namespace's deletion finishes it)", ns, err)
	}
	// KWOK's pods need no kubelet to confirm their end.
	if err := e.client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil {
		log.Printf("clear %s: delete the pods: %v (the namespace's deletion finishes it)", ns, err)
	}
	if err := e.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return waitFor(ctx, 30*time.Minute, "namespace "+ns+" deleted", func() (bool, string) {
		err := e.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// createJob records the send time and creates the job, retrying briefly on
// errors (e.g. a webhook not yet reachable).
func (e *env) createJob(ctx context.Context, job *kubeflowv1.PyTorchJob) error {
	var err error
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
		e.tracker.markCreated(job.Namespace, job.Name, time.Now())
		err = e.client.Create(ctx, job.DeepCopy())
		if err == nil || (attempt > 0 && apierrors.IsAlreadyExists(err)) {
			return nil
		}
	}
	return fmt.Errorf("create PyTorchJob %s/%s: %w", job.Namespace, job.Name, err)
}

// createJobs creates jobs from parallel workers and returns their keys.
func (e *env) createJobs(ctx context.Context, jobs []*kubeflowv1.PyTorchJob, parallel int) ([]types.NamespacedName, error) {
	keys := make([]types.NamespacedName, len(jobs))
	for i, j := range jobs {
		keys[i] = client.ObjectKeyFromObject(j)
	}
	return keys, parallelDo(len(jobs), parallel, func(i int) error { return e.createJob(ctx, jobs[i]) })
}

// parallelDo runs fn(0..n-1) on up to parallel goroutines and returns the
// first error.
func parallelDo(n, parallel int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range min(n, parallel) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// jobGoal is what waitJobs waits for: every job has pods pods and services
// services (0: skip), is Running and Succeeded, as far as wanted.
type jobGoal struct {
	pods, services     int
	running, succeeded bool
}

// waitJobs waits until every job reached goal.
func (e *env) waitJobs(ctx context.Context, keys []types.NamespacedName, goal jobGoal, timeout time.Duration) error {
	return waitFor(ctx, timeout, fmt.Sprintf("%d jobs", len(keys)), func() (bool, string) {
		if e.operator.Exited() {
			return false, "operator exited"
		}
		var pods, svcs, running, succeeded, failed int
		for _, j := range e.tracker.jobsIn(keys) {
			if j.pods >= goal.pods {
				pods++
			}
			if j.services >= goal.services {
				svcs++
			}
			if !j.running.IsZero() {
				running++
			}
			if !j.succeeded.IsZero() {
				succeeded++
			}
			if j.failed {
				failed++
			}
		}
		n := len(keys)
		done := pods == n && svcs == n && (!goal.running || running == n) && (!goal.succeeded || succeeded == n)
		return done, fmt.Sprintf("jobs with all pods %d, all services %d, running %d, succeeded %d, failed %d of %d",
			pods, svcs, running, succeeded, failed, n)
	})
}

// jobStats are the per-job latencies from the create request.
type jobStats struct {
	toPods, toServices, toRunning, toSucceeded []time.Duration
	lastPod, lastService, lastRunning, lastOK  time.Time
}

func (e *env) jobStats(keys []types.NamespacedName) jobStats {
	var s jobStats
	for _, j := range e.tracker.jobsIn(keys) {
		if j.created.IsZero() {
			continue
		}
		add := func(samples *[]time.Duration, last *time.Time, at time.Time) {
			if at.IsZero() {
				return
			}
			*samples = append(*samples, at.Sub(j.created))
			if at.After(*last) {
				*last = at
			}
		}
		add(&s.toPods, &s.lastPod, j.lastPod)
		add(&s.toServices, &s.lastService, j.lastService)
		add(&s.toRunning, &s.lastRunning, j.running)
		add(&s.toSucceeded, &s.lastOK, j.succeeded)
	}
	return s
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func sinceSeconds(start, t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return t.Sub(start).Seconds()
}
