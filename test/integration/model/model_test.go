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

package model

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/e2e/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// Knobs, all optional:
//
//	MODEL_SEED=<n>         seed of the scenarios (default: time based, always printed)
//	MODEL_SCENARIOS=<n>    how many scenarios (default 1000, 100 with -short)
//	MODEL_ONLY=<i>[,<j>]   run only these scenario indices of the seed (replay)
//	MODEL_CONCURRENCY=<n>  scenarios in flight (default 60)
//	MODEL_LOG=<file>       write the operator log there
//	MODEL_WORKDIR=<dir>    keep the cluster's work directory (component logs) there
const (
	// holdFinalizer keeps a pod deleted by the test (or evicted through the
	// API) visible while terminating, as a kubelet's grace period does,
	// until the operator has reacted; KWOK would otherwise remove it at once.
	holdFinalizer = "model.kubeflow.org/hold"
	// noScheduler is the schedulerName of every scenario pod. No scheduler
	// serves it, so pods stay unbound and KWOK never acts on them: KWOK
	// deletes terminating pods by name, without a UID precondition, and its
	// late deletes of one incarnation kill the same-named replacement (and
	// then the next one). The test plays the kubelet instead (see kubelet).
	noScheduler  = "model-test-kubelet"
	pollInterval = 50 * time.Millisecond
	// waitTimeout bounds one wait for the cluster or the operator.
	waitTimeout = 60 * time.Second
	// settle is how long a final state must hold, to catch late changes.
	settle = time.Second
)

// regressions are scenarios that once exposed a bug; they run with every seed.
var regressions = []Scenario{
	// A job failing before a retried pod ran again kept Restarting=True
	// next to Failed=True (MODEL_SEED=1 #12; controllers/engine/conditions.go).
	{Kind: kubeflowv1.TFJobKind, Replicas: []ReplicaSet{
		{Type: kubeflowv1.TFJobReplicaTypeWorker, Replicas: 1, Policy: kubeflowv1.RestartPolicyNever},
		{Type: kubeflowv1.TFJobReplicaTypePS, Replicas: 1, Policy: kubeflowv1.RestartPolicyNever},
	}, BackoffLimit: ptrTo(int32(3)), Steps: []Step{
		{Type: kubeflowv1.TFJobReplicaTypeWorker, Outcome: Delete},
		{Type: kubeflowv1.TFJobReplicaTypePS, Outcome: Fail, Code: 1},
	}},
	// The failure message of an evicted pod said "(Error)", not Evicted
	// (MODEL_SEED=1 #49; controllers/engine/status.go describeFailure).
	{Kind: kubeflowv1.TFJobKind, Replicas: []ReplicaSet{
		{Type: kubeflowv1.TFJobReplicaTypeChief, Replicas: 1, Policy: kubeflowv1.RestartPolicyOnFailure},
		{Type: kubeflowv1.TFJobReplicaTypeWorker, Replicas: 2, Policy: kubeflowv1.RestartPolicyNever},
	}, Steps: []Step{{Type: kubeflowv1.TFJobReplicaTypeWorker, Outcome: Evict, Code: 1}}},
	// A pod evicted through the API that ended Failed while terminating
	// failed a Never job instead of being retried (MODEL_SEED=2 #61;
	// controllers/engine/assess.go).
	{Kind: kubeflowv1.PaddleJobKind, Replicas: []ReplicaSet{
		{Type: kubeflowv1.PaddleJobReplicaTypeWorker, Replicas: 3, Policy: kubeflowv1.RestartPolicyNever},
	}, BackoffLimit: ptrTo(int32(4)), Steps: []Step{
		{Type: kubeflowv1.PaddleJobReplicaTypeWorker, Index: 0, Outcome: Succeed},
		{Type: kubeflowv1.PaddleJobReplicaTypeWorker, Index: 1, Outcome: APIEvict, Code: 1},
		{Type: kubeflowv1.PaddleJobReplicaTypeWorker, Index: 2, Outcome: Fail, Code: 128},
	}},
	// The same for a user's delete under Never, then success.
	{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{
		{Type: kubeflowv1.PyTorchJobReplicaTypeMaster, Replicas: 1, Policy: kubeflowv1.RestartPolicyNever},
		{Type: kubeflowv1.PyTorchJobReplicaTypeWorker, Replicas: 1, Policy: kubeflowv1.RestartPolicyNever},
	}, Steps: []Step{
		{Type: kubeflowv1.PyTorchJobReplicaTypeWorker, Outcome: Delete, Code: 143},
		{Type: kubeflowv1.PyTorchJobReplicaTypeMaster, Outcome: Succeed},
	}},
}

type config struct {
	seed        uint64
	scenarios   int
	only        []int
	concurrency int
}

func readConfig(t *testing.T) config {
	c := config{seed: uint64(time.Now().UnixNano()), scenarios: 1000, concurrency: 60}
	if testing.Short() {
		c.scenarios = 100
	}
	if v := os.Getenv("MODEL_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MODEL_SEED: %v", err)
		}
		c.seed = n
	}
	num := func(name string, dst *int) {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive number", name, v)
			}
			*dst = n
		}
	}
	num("MODEL_SCENARIOS", &c.scenarios)
	num("MODEL_CONCURRENCY", &c.concurrency)
	if v := os.Getenv("MODEL_ONLY"); v != "" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("MODEL_ONLY=%q: %v", v, err)
			}
			c.only = append(c.only, n)
		}
	}
	return c
}

// env is the cluster, the in-process operator and the test's own clients.
type env struct {
	api     client.Client // direct, for writes and fresh reads
	cache   cache.Cache   // informer-backed, for cheap polling
	trace   *podTrace
	timings timings
}

// kubelet starts every new scenario pod, as KWOK's pod-ready stage would:
// phase Running, containers running, init containers completed.
type kubelet struct {
	api     client.Client
	queue   chan *corev1.Pod
	mu      sync.Mutex
	started map[types.UID]bool
}

func newKubelet(api client.Client, workers int) *kubelet {
	k := &kubelet{api: api, queue: make(chan *corev1.Pod, 10000), started: map[types.UID]bool{}}
	for i := 0; i < workers; i++ {
		go func() {
			for p := range k.queue {
				k.start(p)
			}
		}()
	}
	return k
}

// observe queues a pending pod once.
func (k *kubelet) observe(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Spec.SchedulerName != noScheduler || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
		return
	}
	k.mu.Lock()
	seen := k.started[p.UID]
	k.started[p.UID] = true
	k.mu.Unlock()
	if !seen {
		k.queue <- p
	}
}

func (k *kubelet) start(pod *corev1.Pod) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	// The first attempt writes over the informer's copy; only a conflict
	// costs a read (the machine is shared, requests are what is scarce).
	p := *pod.DeepCopy()
	for ctx.Err() == nil {
		now := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady} {
			setPodCondition(&p, t, corev1.ConditionTrue, "", now)
		}
		p.Status.InitContainerStatuses = nil
		for _, c := range p.Spec.InitContainers {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
			})
		}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true, Started: ptrTo(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			})
		}
		err := k.api.Status().Update(ctx, &p)
		if err == nil || !apierrors.IsConflict(err) {
			return
		}
		p = corev1.Pod{}
		if err := k.api.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil || p.UID != pod.UID ||
			p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
			return // gone, replaced, terminating or started
		}
	}
}

// podTrace records every pod change the test sees, per job, so that a
// mismatch shows what happened to the job's pods. It also notices pods that
// end without the script ending them: kube-controller-manager's PodGC
// force-deletes terminating unbound pods by name from a possibly stale list,
// which can hit a same-named replacement. That is the environment, not the
// operator, so such a scenario is replayed (see TestModel).
type podTrace struct {
	mu    sync.Mutex
	start time.Time
	lines map[string][]string
	// scripted are pod UIDs the script made fail or deleted; true when the
	// pod is to be deleted (by the test or by the operator's retry).
	scripted map[types.UID]bool
	// interfered lists, per job, pods that ended unscripted.
	interfered map[string][]string
}

// expect marks a pod incarnation the script is about to end, and whether
// it is to be deleted.
func (pt *podTrace) expect(uid types.UID, deleted bool) {
	pt.mu.Lock()
	pt.scripted[uid] = deleted
	pt.mu.Unlock()
}

// interfere records interference the test found itself.
func (pt *podTrace) interfere(job, line string) {
	pt.mu.Lock()
	pt.interfered[job] = append(pt.interfered[job], line)
	pt.mu.Unlock()
}

func (pt *podTrace) interference(job string) []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.interfered[job]
}

func (pt *podTrace) add(verb string, obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	var codes []string
	for _, cs := range p.Status.ContainerStatuses {
		c := fmt.Sprintf("restarts=%d", cs.RestartCount)
		if t := cs.State.Terminated; t != nil {
			c += fmt.Sprintf(" exit=%d", t.ExitCode)
		}
		codes = append(codes, c)
	}
	line := fmt.Sprintf("%7.3fs %s %s uid=%s rv=%s phase=%s reason=%s deleting=%v finalizers=%v %s",
		time.Since(pt.start).Seconds(), verb, p.Name, string(p.UID)[:8], p.ResourceVersion, p.Status.Phase, p.Status.Reason,
		p.DeletionTimestamp != nil, p.Finalizers, strings.Join(codes, ","))
	job := p.Labels[kubeflowv1.JobNameLabel]
	pt.mu.Lock()
	pt.lines[job] = append(pt.lines[job], line)
	deleted, scripted := pt.scripted[p.UID]
	gone := verb == "delete" || p.DeletionTimestamp != nil
	if (gone && !deleted) || (p.Status.Phase == corev1.PodFailed && !scripted) {
		pt.interfered[job] = append(pt.interfered[job], line)
	}
	pt.mu.Unlock()
}

// note records what the test itself did, in the same timeline.
func (pt *podTrace) note(job, format string, args ...any) {
	line := fmt.Sprintf("%7.3fs test: ", time.Since(pt.start).Seconds()) + fmt.Sprintf(format, args...)
	pt.mu.Lock()
	pt.lines[job] = append(pt.lines[job], line)
	pt.mu.Unlock()
}

func (pt *podTrace) of(job string) []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return append([]string(nil), pt.lines[job]...)
}

func startEnv(t *testing.T, ns string) *env {
	t.Helper()
	if f := os.Getenv("MODEL_LOG"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = out.Close() })
		ctrl.SetLogger(zap.New(zap.WriteTo(out), zap.UseDevMode(true)))
	} else {
		// A thousand jobs log too much to keep; MODEL_LOG keeps it.
		ctrl.SetLogger(logr.Discard())
	}
	// Scenario pods are never bound (see noScheduler): one node is enough.
	c := util.StartTestCluster(t, cluster.Options{Nodes: 1, WorkDir: os.Getenv("MODEL_WORKDIR")})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 500, 1000
	api, err := client.New(cfg, client.Options{Scheme: util.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	op, err := util.StartOperator(cfg, util.DefaultConfiguration())
	if err != nil {
		t.Fatalf("starting the operator: %v", err)
	}
	t.Cleanup(func() {
		if err := op.Stop(); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})

	ch, err := cache.New(cfg, cache.Options{
		Scheme:            util.Scheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		DefaultTransform:  cache.TransformStripManagedFields(),
	})
	if err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{&corev1.Pod{}}
	for _, k := range kinds {
		objs = append(objs, newJob(k))
	}
	for _, o := range objs {
		if _, err := ch.GetInformer(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	trace := &podTrace{start: time.Now(), lines: map[string][]string{}, scripted: map[types.UID]bool{}, interfered: map[string][]string{}}
	kl := newKubelet(api, 32)
	podInformer, err := ch.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := podInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			trace.add("add", obj)
			kl.observe(obj)
		},
		UpdateFunc: func(_, obj any) {
			trace.add("update", obj)
			kl.observe(obj)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			trace.add("delete", obj)
		},
	}); err != nil {
		t.Fatal(err)
	}
	cacheCtx, stopCache := context.WithCancel(context.Background())
	t.Cleanup(stopCache)
	go func() { _ = ch.Start(cacheCtx) }()
	if !ch.WaitForCacheSync(ctx) {
		t.Fatal("test cache did not sync")
	}
	return &env{api: api, cache: ch, trace: trace}
}

// TestModel runs random pod-failure scenarios against the operator and
// compares every job's final state with the oracle.
func TestModel(t *testing.T) {
	cfg := readConfig(t)
	fmt.Printf("MODEL_SEED=%d\n", cfg.seed)
	t.Logf("MODEL_SEED=%d scenarios=%d concurrency=%d", cfg.seed, cfg.scenarios, cfg.concurrency)
	const ns = "model"
	begin := time.Now()
	e := startEnv(t, ns)
	t.Logf("control plane and operator up in %s", time.Since(begin).Round(time.Millisecond))

	var scenarios []Scenario
	if cfg.only != nil {
		for _, i := range cfg.only {
			scenarios = append(scenarios, Generate(cfg.seed, i, ns))
		}
	} else {
		for i := 0; i < cfg.scenarios; i++ {
			scenarios = append(scenarios, Generate(cfg.seed, i, ns))
		}
		for i, r := range regressions {
			r.Namespace, r.Name, r.Index = ns, fmt.Sprintf("r%d", i), -1-i
			scenarios = append(scenarios, r)
		}
	}

	runStart := time.Now()
	mismatches := make([][]string, len(scenarios))
	var next, done, replays atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < cfg.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(scenarios) {
					return
				}
				mismatches[i] = e.runReplaying(&scenarios[i], &replays)
				if n := done.Add(1); n%100 == 0 {
					t.Logf("%d/%d scenarios done after %s", n, len(scenarios), time.Since(runStart).Round(time.Second))
				}
			}
		}()
	}
	wg.Wait()

	phases := map[Phase]int{}
	failed := 0
	for i := range scenarios {
		s := &scenarios[i]
		final, _ := Predict(s)
		phases[final.Phase]++
		if len(mismatches[i]) == 0 {
			continue
		}
		failed++
		replay := fmt.Sprintf("MODEL_SEED=%d MODEL_ONLY=%d", cfg.seed, s.Index)
		if s.Index < 0 {
			replay = fmt.Sprintf("regression %d (runs with every seed)", -1-s.Index)
		}
		t.Errorf("MODEL_SEED=%d scenario %d mismatch (replay: %s)\n  scenario: %s\n  oracle:   %s\n  %s",
			cfg.seed, s.Index, replay, s.String(), final.String(), strings.Join(mismatches[i], "\n  "))
	}
	t.Logf("MODEL_SEED=%d: %d scenarios (oracle: %v), %d mismatched, %d replayed after PodGC interference, run took %s; %s",
		cfg.seed, len(scenarios), phases, failed, replays.Load(), time.Since(runStart).Round(time.Millisecond), &e.timings)
	if failed > 0 {
		fmt.Printf("MODEL_SEED=%d: %d of %d scenarios mismatched\n", cfg.seed, failed, len(scenarios))
	}
}

// timings add up where scenarios spend their time, to tune the run.
type timings struct {
	mu                                  sync.Mutex
	n                                   int
	start, podWait, sync, final, settle time.Duration
}

func (tm *timings) add(start, podWait, sync, final, settle time.Duration) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.n++
	tm.start += start
	tm.podWait += podWait
	tm.sync += sync
	tm.final += final
	tm.settle += settle
}

func (tm *timings) String() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.n == 0 {
		return "no scenario completed"
	}
	avg := func(d time.Duration) time.Duration { return (d / time.Duration(tm.n)).Round(time.Millisecond) }
	return fmt.Sprintf("mean per scenario: start %s, waiting for pods %s, waiting for the operator %s, final %s, settle %s",
		avg(tm.start), avg(tm.podWait), avg(tm.sync), avg(tm.final), avg(tm.settle))
}

// traceCatchUp is how long a mismatch waits for the pod trace to show
// interference that caused it.
const traceCatchUp = 5 * time.Second

// maxAttempts bounds replays of a scenario whose pods were ended by
// something other than the script or the operator.
const maxAttempts = 3

// runReplaying runs a scenario; a mismatch that coincides with pods ended
// by someone else (PodGC) replays it under a fresh job name. A mismatch
// without such interference, or one that persists, is reported.
func (e *env) runReplaying(s *Scenario, replays *atomic.Int64) []string {
	var out []string
	for attempt := 0; attempt < maxAttempts; attempt++ {
		try := *s
		if attempt > 0 {
			try.Name = fmt.Sprintf("%s-r%d", s.Name, attempt)
			replays.Add(1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		m := e.run(ctx, &try)
		cancel()
		if len(m) == 0 {
			return nil
		}
		// A step that found its pod gone can be ahead of the trace's watch,
		// which has yet to deliver the deletion that says who ended it (CI
		// saw a running replacement vanish right after its predecessor's
		// deletion, with no delete in the trace yet): give the watch a moment.
		ended := e.trace.interference(try.Name)
		for until := time.Now().Add(traceCatchUp); len(ended) == 0 && time.Now().Before(until); {
			time.Sleep(100 * time.Millisecond)
			ended = e.trace.interference(try.Name)
		}
		out = append(out, fmt.Sprintf("attempt %d (job %s):", attempt+1, try.Name))
		out = append(out, m...)
		out = append(out, "pods:")
		out = append(out, e.trace.of(try.Name)...)
		if len(ended) == 0 {
			return out
		}
		out = append(out, "pods ended by someone else (replayed):")
		out = append(out, ended...)
	}
	return out
}

// run executes one scenario and returns its mismatches.
func (e *env) run(ctx context.Context, s *Scenario) []string {
	began := time.Now()
	var tStart, tPods, tSync, tFinal time.Duration
	final, results := Predict(s)
	job := buildJob(s)
	// Finished jobs are left in place: their pods are never bound, so they
	// cost nothing, while deleting them would cost the shared machine
	// requests and garbage collection.
	if err := e.api.Create(ctx, job); err != nil {
		return []string{fmt.Sprintf("creating the job: %v", err)}
	}

	// Each step waits for its own pod; failures do not wait for the other
	// pods or for the job to show Running, in real clusters neither.
	used := map[types.UID]bool{}
	tStart = time.Since(began)

	for k, st := range s.Steps {
		res := results[k]
		t0 := time.Now()
		pod, err := e.waitPod(ctx, s, Slot{st.Type, st.Index}, used)
		tPods += time.Since(t0)
		if err != nil {
			return []string{fmt.Sprintf("before step %d (%s): %v", k, st, err)}
		}
		if st.Delay > 0 {
			time.Sleep(st.Delay)
		}
		e.trace.note(s.Name, "step %d: %s on uid=%s", k, st, string(pod.UID)[:8])
		held, err := e.apply(ctx, s, st, res.Recreated, pod)
		if err != nil {
			if held {
				_ = e.release(ctx, s.Namespace, pod)
			}
			if errors.Is(err, errGone) {
				// The pod ended before the step could act on it, so someone
				// else ended it. The trace cannot always tell: a step that
				// deletes marks its pod as expected to go before acting.
				e.trace.interfere(s.Name, fmt.Sprintf("step %d: pod %s uid=%s gone before the step acted", k, pod.Name, string(pod.UID)[:8]))
			}
			return []string{fmt.Sprintf("step %d (%s): %v", k, st, err)}
		}
		if st.Outcome != Crash && (st.Outcome != Succeed || s.Replica(st.Type).Policy != kubeflowv1.RestartPolicyAlways) {
			used[pod.UID] = true
		}
		if res.Effect != EffectNone {
			// Wait for the operator to show this step before the next one, so
			// that steps are seen in script order.
			t0 := time.Now()
			err = e.waitJob(ctx, s, fmt.Sprintf("after step %d (%s): %s", k, st, res.State), func(js *kubeflowv1.JobStatus) (bool, string) {
				return reached(js, res)
			})
			tSync += time.Since(t0)
		}
		if held {
			e.trace.note(s.Name, "release uid=%s", string(pod.UID)[:8])
			if rerr := e.release(ctx, s.Namespace, pod); rerr != nil && err == nil {
				err = rerr
			}
		}
		if err != nil {
			return []string{err.Error()}
		}
	}

	t0 := time.Now()
	if final.Phase == PhaseRunning {
		// Retried pods come back before the job can show Running again.
		for _, sl := range NewOracleAt(s).LiveSlots() {
			if _, err := e.waitPod(ctx, s, sl, used); err != nil {
				return []string{fmt.Sprintf("end: %v", err)}
			}
		}
	}
	var diffs []string
	err := e.waitJob(ctx, s, "final state "+final.String(), func(js *kubeflowv1.JobStatus) (bool, string) {
		diffs = compareFinal(s, final, js)
		return len(diffs) == 0, ""
	})
	if err != nil {
		return append([]string{"final state never reached"}, diffs...)
	}
	tFinal = time.Since(t0)
	// The final state must hold: no late failure, restart or flip.
	time.Sleep(settle)
	e.timings.add(tStart, tPods, tSync, tFinal, settle)
	got, err := e.job(ctx, s)
	if err != nil {
		return []string{err.Error()}
	}
	if diffs := compareFinal(s, final, got); len(diffs) > 0 {
		return append([]string{fmt.Sprintf("final state changed within %s:", settle)}, diffs...)
	}
	return nil
}

// NewOracleAt is the oracle after all of the scenario's steps.
func NewOracleAt(s *Scenario) *Oracle {
	o := NewOracle(s)
	for _, st := range s.Steps {
		o.Apply(st)
	}
	return o
}

// reached reports whether the job shows a step's effect, and says why not
// once it never can (the count went past the prediction, or the job
// finished differently), so a mismatch does not wait for the timeout.
func reached(js *kubeflowv1.JobStatus, res StepResult) (bool, string) {
	phase := phaseOf(js)
	want := res.State
	if phase != PhaseRunning && phase != want.Phase {
		return false, fmt.Sprintf("job finished %s (%s) but the oracle says %s: %s", phase, terminalSummary(js), want.Phase, want)
	}
	if js.RestartCount > want.RestartCount {
		return false, fmt.Sprintf("restartCount=%d went past the oracle's %d", js.RestartCount, want.RestartCount)
	}
	if phase != want.Phase || js.RestartCount != want.RestartCount {
		return false, ""
	}
	if res.Effect == EffectSucceeded {
		for rt, n := range want.Succeeded {
			if rs := js.ReplicaStatuses[rt]; rs == nil || rs.Succeeded != n {
				return false, ""
			}
		}
	}
	return true, ""
}

// compareFinal checks the job against the oracle's final state and R9.
func compareFinal(s *Scenario, want State, js *kubeflowv1.JobStatus) []string {
	var d []string
	phase := phaseOf(js)
	if phase != want.Phase {
		d = append(d, fmt.Sprintf("phase: got %s (%s), want %s", phase, terminalSummary(js), want.Phase))
	}
	if js.RestartCount != want.RestartCount {
		d = append(d, fmt.Sprintf("restartCount: got %d, want %d", js.RestartCount, want.RestartCount))
	}
	conds := conditionList(js)
	if c := cond(js, kubeflowv1.JobCreated); c == nil || c.Status != corev1.ConditionTrue || c.Reason != s.Kind+"Created" {
		d = append(d, fmt.Sprintf("conditions %v: want Created=True with reason %sCreated", conds, s.Kind))
	}
	// A job may finish before it ever showed Running; if it did show it,
	// Running and Restarting replace each other.
	running, restarting := cond(js, kubeflowv1.JobRunning), cond(js, kubeflowv1.JobRestarting)
	if running != nil && restarting != nil {
		d = append(d, fmt.Sprintf("conditions %v: Running and Restarting replace each other", conds))
	}
	last := kubeflowv1.JobCondition{}
	if n := len(js.Conditions); n > 0 {
		last = js.Conditions[n-1]
	}
	switch want.Phase {
	case PhaseRunning:
		if last.Type != kubeflowv1.JobRunning || last.Status != corev1.ConditionTrue {
			d = append(d, fmt.Sprintf("conditions %v: a running job ends with Running=True", conds))
		}
	default:
		wantType := kubeflowv1.JobConditionType(want.Phase)
		if last.Type != wantType || last.Status != corev1.ConditionTrue {
			d = append(d, fmt.Sprintf("conditions %v: want %s=True last", conds, wantType))
		}
		for _, t := range []kubeflowv1.JobConditionType{kubeflowv1.JobRunning, kubeflowv1.JobRestarting, kubeflowv1.JobSucceeded, kubeflowv1.JobFailed} {
			if t != wantType && isTrue(js, t) {
				d = append(d, fmt.Sprintf("conditions %v: %s=True on a %s job", conds, t, want.Phase))
			}
		}
		if c := cond(js, wantType); c != nil {
			if c.Reason != want.Reason {
				d = append(d, fmt.Sprintf("%s reason: got %q, want %q", wantType, c.Reason, want.Reason))
			}
			if len(want.MessageParts) == 0 && c.Message != want.Message {
				d = append(d, fmt.Sprintf("%s message: got %q, want %q", wantType, c.Message, want.Message))
			}
			if len(want.MessageParts) > 0 {
				if !strings.HasPrefix(c.Message, want.Message) {
					d = append(d, fmt.Sprintf("%s message: got %q, want prefix %q", wantType, c.Message, want.Message))
				}
				for _, p := range want.MessageParts {
					if !strings.Contains(c.Message, p) {
						d = append(d, fmt.Sprintf("%s message: got %q, want it to name %q", wantType, c.Message, p))
					}
				}
			}
		}
		if js.CompletionTime == nil {
			d = append(d, "completionTime not set on a finished job")
		}
	}
	return d
}

func phaseOf(js *kubeflowv1.JobStatus) Phase {
	switch {
	case isTrue(js, kubeflowv1.JobFailed):
		return PhaseFailed
	case isTrue(js, kubeflowv1.JobSucceeded):
		return PhaseSucceeded
	}
	return PhaseRunning
}

func terminalSummary(js *kubeflowv1.JobStatus) string {
	for _, t := range []kubeflowv1.JobConditionType{kubeflowv1.JobFailed, kubeflowv1.JobSucceeded} {
		if c := cond(js, t); c != nil && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	return strings.Join(conditionList(js), ",")
}

func cond(js *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range js.Conditions {
		if js.Conditions[i].Type == t {
			return &js.Conditions[i]
		}
	}
	return nil
}

func isTrue(js *kubeflowv1.JobStatus, t kubeflowv1.JobConditionType) bool {
	c := cond(js, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

func conditionList(js *kubeflowv1.JobStatus) []string {
	out := make([]string, 0, len(js.Conditions))
	for _, c := range js.Conditions {
		out = append(out, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	return out
}

// job reads the scenario's job from the test cache.
func (e *env) job(ctx context.Context, s *Scenario) (*kubeflowv1.JobStatus, error) {
	obj := newJob(s.Kind)
	if err := e.cache.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, obj); err != nil {
		return nil, err
	}
	return jobStatus(obj), nil
}

// waitJob polls the job until ok. A non-empty reason with !ok means the
// state can no longer be reached: stop waiting.
func (e *env) waitJob(ctx context.Context, s *Scenario, what string, ok func(*kubeflowv1.JobStatus) (bool, string)) error {
	deadline := time.Now().Add(waitTimeout)
	last := ""
	for {
		js, err := e.job(ctx, s)
		if err == nil {
			done, why := ok(js)
			if done {
				return nil
			}
			last = fmt.Sprintf("restartCount=%d conditions=%v %s", js.RestartCount, conditionList(js), terminalSummary(js))
			if why != "" {
				return fmt.Errorf("%s: %s", what, why)
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: not reached in %s; job: %s", what, waitTimeout, last)
		}
		time.Sleep(pollInterval)
	}
}

// waitPod waits for a running incarnation of a slot that the script has not
// used up yet.
func (e *env) waitPod(ctx context.Context, s *Scenario, sl Slot, used map[types.UID]bool) (*corev1.Pod, error) {
	name := s.PodName(sl.Type, sl.Index)
	deadline := time.Now().Add(waitTimeout)
	last := "absent"
	for {
		var p corev1.Pod
		err := e.cache.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &p)
		switch {
		case err == nil && !used[p.UID] && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0:
			return &p, nil
		case err == nil:
			last = fmt.Sprintf("uid=%s used=%v phase=%s deleting=%v", p.UID, used[p.UID], p.Status.Phase, p.DeletionTimestamp != nil)
		case !apierrors.IsNotFound(err):
			last = err.Error()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("pod %s not running in %s (last: %s)", name, waitTimeout, last)
		}
		time.Sleep(pollInterval)
	}
}

var errGone = errors.New("the pod incarnation is gone")

// updatePod applies mutate to the current pod if it is still the same
// incarnation, retrying conflicts (KWOK and the apiserver write pods too).
func (e *env) updatePod(ctx context.Context, ns string, pod *corev1.Pod, status bool, mutate func(*corev1.Pod)) error {
	// The first attempt writes over the cached copy: the resourceVersion
	// makes a stale one conflict, and only then is the pod read.
	p := *pod.DeepCopy()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			p = corev1.Pod{}
			if err := e.api.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod.Name}, &p); err != nil {
				if apierrors.IsNotFound(err) {
					return errGone
				}
				return err
			}
			if p.UID != pod.UID {
				return errGone
			}
		}
		mutate(&p)
		var err error
		if status {
			err = e.api.Status().Update(ctx, &p)
		} else {
			err = e.api.Update(ctx, &p)
		}
		if apierrors.IsNotFound(err) {
			return errGone
		}
		if err == nil || !apierrors.IsConflict(err) || attempt > 20 {
			return err
		}
	}
}

// apply makes one outcome happen to the pod. held reports a pod kept
// terminating by holdFinalizer, to release once the operator has reacted.
func (e *env) apply(ctx context.Context, s *Scenario, st Step, recreated bool, pod *corev1.Pod) (held bool, err error) {
	container := defaultContainer(s.Kind)
	outcome, code := st.Outcome, st.Code
	if outcome == Succeed && s.Replica(st.Type).Policy == kubeflowv1.RestartPolicyAlways {
		outcome, code = Crash, 0
	}
	if outcome != Crash && outcome != Succeed {
		e.trace.expect(pod.UID, recreated || outcome == Delete || outcome == APIEvict)
	}
	now := metav1.Now()
	terminate := func(p *corev1.Pod, phase corev1.PodPhase, code int32, reason string) {
		p.Status.Phase = phase
		for i := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[i]
			if cs.Name != container {
				continue
			}
			started := now
			if cs.State.Running != nil {
				started = cs.State.Running.StartedAt
			}
			cs.Ready, cs.Started = false, ptrTo(false)
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: now,
			}}
		}
		setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", now)
		setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", now)
	}
	switch outcome {
	case Crash:
		return false, e.updatePod(ctx, s.Namespace, pod, true, func(p *corev1.Pod) {
			for i := range p.Status.ContainerStatuses {
				cs := &p.Status.ContainerStatuses[i]
				if cs.Name != container {
					continue
				}
				reason := "Error"
				if code == 0 {
					reason = "Completed"
				}
				cs.RestartCount++
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: code, Reason: reason, StartedAt: now, FinishedAt: now,
				}}
				cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
			}
		})
	case Fail:
		return false, e.updatePod(ctx, s.Namespace, pod, true, func(p *corev1.Pod) {
			terminate(p, corev1.PodFailed, code, "Error")
		})
	case Succeed:
		return false, e.updatePod(ctx, s.Namespace, pod, true, func(p *corev1.Pod) {
			terminate(p, corev1.PodSucceeded, 0, "Completed")
		})
	case Evict:
		return false, e.updatePod(ctx, s.Namespace, pod, true, func(p *corev1.Pod) {
			terminate(p, corev1.PodFailed, code, "Error")
			p.Status.Reason = "Evicted"
			p.Status.Message = "The node was low on resource: memory."
			setPodCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue, "TerminationByKubelet", now)
		})
	case Delete, APIEvict:
		if err := e.updatePod(ctx, s.Namespace, pod, false, func(p *corev1.Pod) {
			p.Finalizers = append(p.Finalizers, holdFinalizer)
		}); err != nil {
			return false, err
		}
		// PodGC force-deletes unscheduled terminating pods by name, from a
		// possibly stale list, which kills the same-named replacement. A
		// pod bound to a node that does not exist is left alone for PodGC's
		// 40 s quarantine of unknown nodes, and KWOK ignores it too.
		if err := e.api.SubResource("binding").Create(ctx, pod, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "model-held-" + string(pod.UID)},
		}); err != nil {
			return true, fmt.Errorf("binding before the delete: %w", err)
		}
		// Grace 0: the pod goes as soon as the hold is released.
		uid, grace := pod.UID, int64(0)
		if outcome == Delete {
			err = e.api.Delete(ctx, pod, client.Preconditions{UID: &uid}, client.GracePeriodSeconds(0))
		} else {
			err = e.api.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{
				ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, GracePeriodSeconds: &grace},
			})
		}
		if err != nil || code == 0 {
			return true, err
		}
		// The kubelet kills the containers and records the final phase
		// before the pod goes.
		return true, e.updatePod(ctx, s.Namespace, pod, true, func(p *corev1.Pod) {
			terminate(p, corev1.PodFailed, code, "Error")
		})
	}
	return false, fmt.Errorf("unknown outcome %q", outcome)
}

// release drops holdFinalizer so that a terminating pod goes away.
func (e *env) release(ctx context.Context, ns string, pod *corev1.Pod) error {
	err := e.updatePod(ctx, ns, pod, false, func(p *corev1.Pod) {
		kept := p.Finalizers[:0]
		for _, f := range p.Finalizers {
			if f != holdFinalizer {
				kept = append(kept, f)
			}
		}
		p.Finalizers = kept
	})
	if errors.Is(err, errGone) {
		return nil
	}
	return err
}

func setPodCondition(p *corev1.Pod, t corev1.PodConditionType, status corev1.ConditionStatus, reason string, now metav1.Time) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason = status, reason
			p.Status.Conditions[i].LastTransitionTime = now
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: now})
}
