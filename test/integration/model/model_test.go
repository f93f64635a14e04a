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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
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

// regressions are scenarios that once exposed a bug, and a few pinned ones
// the random mix reaches rarely; they run with every seed.
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
	// Not bugs: a whole-job restart decided on a pod the test holds
	// terminating, once per strategy. BlockingRecreate makes no pod of the
	// new attempt while it is held (the trace's check); Recreate recreates
	// the other pod meanwhile (waitRecreated). The random mix reaches these
	// rarely (a held deletion that restarts, per strategy).
	{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{
		{Type: kubeflowv1.JAXJobReplicaTypeWorker, Replicas: 2, Policy: kubeflowv1.RestartPolicyNever},
	}, FailurePolicy: &kubeflowv1.FailurePolicy{MaxRestarts: 1, RestartStrategy: kubeflowv1.RestartStrategyBlockingRecreate}, Steps: []Step{
		{Type: kubeflowv1.JAXJobReplicaTypeWorker, Outcome: Delete},
		{Type: kubeflowv1.JAXJobReplicaTypeWorker, Index: 1, Outcome: APIEvict, Attempt: 1},
	}},
	{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{
		{Type: kubeflowv1.JAXJobReplicaTypeWorker, Replicas: 2, Policy: kubeflowv1.RestartPolicyNever},
	}, FailurePolicy: &kubeflowv1.FailurePolicy{MaxRestarts: 2, RestartStrategy: kubeflowv1.RestartStrategyRecreate}, Steps: []Step{
		{Type: kubeflowv1.JAXJobReplicaTypeWorker, Outcome: Delete},
		{Type: kubeflowv1.JAXJobReplicaTypeWorker, Index: 1, Outcome: APIEvict, Attempt: 1},
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
	// replayed are the mismatches that interference had a replay retry,
	// printed even when the replay passed: a timing-dependent mismatch
	// whose deletions look like interference must not pass unseen.
	replayedMu sync.Mutex
	replayed   []string
}

// operatorLog keeps the operator's log when MODEL_LOG does not.
var operatorLog lineLog

// lineLog is a log kept in memory, searchable by job.
type lineLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

// about returns the last lines that name the job or one of its pods.
func (l *lineLog) about(job string) []string {
	const keep = 200
	re := regexp.MustCompile(`(^|[^0-9A-Za-z])` + regexp.QuoteMeta(job) + `($|[^0-9A-Za-z]|-[a-z])`)
	l.mu.Lock()
	text := l.buf.String()
	l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if re.MatchString(line) {
			out = append(out, "  "+line)
		}
	}
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return out
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
	interfered map[string][]interference
	// restarted is, per job, the attempt a whole-job restart is expected to
	// bring: the operator deletes every pod of an older attempt.
	restarted map[string]int32
	// restartRV is, per job, the resourceVersion of the first job event
	// showing each status.restarts.
	restartRV map[string]map[int32]uint64
	// lives are, per job with a failure policy, when each pod came and went.
	lives map[string]map[types.UID]*podLife
	// finishedRV is, per job, the resourceVersion of the first job event
	// showing it finished: pods that end later cannot change its outcome
	// (the operator deletes the running pods of a failed job with a
	// failure policy).
	finishedRV map[string]uint64
}

// podLife is a pod's stay in the apiserver, by resourceVersion (one etcd
// revision sequence): first is the revision of the first event the watch
// showed (its creation, unless a relist showed it later), gone that of its
// delete event (0 while it exists).
type podLife struct {
	name        string
	attempt     int32
	first, gone uint64
}

// expectRestart marks the pods of attempts before attempt as going: a
// whole-job restart deletes them.
func (pt *podTrace) expectRestart(job string, attempt int32) {
	pt.mu.Lock()
	pt.restarted[job] = max(pt.restarted[job], attempt)
	pt.mu.Unlock()
}

// blockingViolations are the pods of a later attempt that existed while a
// pod of an earlier attempt did, which BlockingRecreate rules out. A watch
// delivers one resource's events in revision order, so a pod created after
// its predecessors were deleted has a higher first revision; a relist can
// only show a pod later than it came, and a missed delete (a tombstone
// carries an older revision) only earlier than it went: neither makes a
// violation up.
func (pt *podTrace) blockingViolations(job string) []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	var out []string
	for _, older := range pt.lives[job] {
		for _, newer := range pt.lives[job] {
			if newer.attempt > older.attempt && (older.gone == 0 || newer.first < older.gone) {
				out = append(out, fmt.Sprintf("pod %s of attempt %d (rv %d) came while pod %s of attempt %d was there (gone at rv %d, 0: still there)",
					newer.name, newer.attempt, newer.first, older.name, older.attempt, older.gone))
			}
		}
	}
	return out
}

// attemptLabel is a pod's restart attempt; -1 for a pod without one.
func attemptLabel(p *corev1.Pod) int32 {
	n, err := strconv.ParseInt(p.Labels[kubeflowv1.RestartAttemptLabel], 10, 32)
	if err != nil {
		return -1
	}
	return int32(n)
}

// expect marks a pod incarnation the script is about to end, and whether
// it is to be deleted.
func (pt *podTrace) expect(uid types.UID, deleted bool) {
	pt.mu.Lock()
	pt.scripted[uid] = deleted
	pt.mu.Unlock()
}

// interference is a pod that ended unscripted: its restart attempt (-1:
// none, or not known) and the resourceVersion that showed it.
type interference struct {
	line    string
	attempt int32
	rv      uint64
}

// interfere records interference the test found itself.
func (pt *podTrace) interfere(job, line string) {
	pt.mu.Lock()
	pt.interfered[job] = append(pt.interfered[job], interference{line: line, attempt: -1})
	pt.mu.Unlock()
}

// job records when, by resourceVersion, a job's status.restarts first
// showed each value.
func (pt *podTrace) job(obj any) {
	j, ok := obj.(client.Object)
	if !ok {
		return
	}
	rv, _ := strconv.ParseUint(j.GetResourceVersion(), 10, 64)
	st := jobStatus(j)
	restarts := st.Attempt()
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if _, ok := pt.finishedRV[j.GetName()]; !ok && slices.ContainsFunc(st.Conditions, func(c kubeflowv1.JobCondition) bool {
		return (c.Type == kubeflowv1.JobSucceeded || c.Type == kubeflowv1.JobFailed) && c.Status == corev1.ConditionTrue
	}) {
		pt.finishedRV[j.GetName()] = rv
	}
	seen := pt.restartRV[j.GetName()]
	if seen == nil {
		seen = map[int32]uint64{}
		pt.restartRV[j.GetName()] = seen
	}
	for n := int32(1); n <= restarts; n++ {
		if _, ok := seen[n]; !ok {
			seen[n] = rv
		}
	}
}

// interference lists the job's pods that ended unscripted, but for pods
// that ended after the job's status had moved past their attempt: a
// whole-job restart the oracle did not expect deletes them, which is the
// operator's doing, and the mismatch it is part of must not be replayed
// away. One etcd revision sequence orders the job's status writes and the
// pods' deletions, so a pod someone else deleted (which may well bring
// about a restart) counts as interference, whatever its attempt.
func (pt *podTrace) interference(job string) []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	var out []string
	for _, i := range pt.interfered[job] {
		if at, ok := pt.restartRV[job][i.attempt+1]; i.attempt >= 0 && ok && at < i.rv {
			continue
		}
		if at, ok := pt.finishedRV[job]; ok && at < i.rv {
			continue
		}
		out = append(out, i.line)
	}
	return out
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
	attempt := attemptLabel(p)
	if attempt >= 0 {
		line += fmt.Sprintf(" attempt=%d", attempt)
	}
	rv, _ := strconv.ParseUint(p.ResourceVersion, 10, 64)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	pt.lines[job] = append(pt.lines[job], line)
	deleted, scripted := pt.scripted[p.UID]
	gone := verb == "delete" || p.DeletionTimestamp != nil
	// A whole-job restart deletes the pods of older attempts.
	deleted = deleted || (attempt >= 0 && attempt < pt.restarted[job])
	if (gone && !deleted) || (p.Status.Phase == corev1.PodFailed && !scripted) {
		pt.interfered[job] = append(pt.interfered[job], interference{line: line, attempt: attempt, rv: rv})
	}
	if attempt >= 0 {
		lives := pt.lives[job]
		if lives == nil {
			lives = map[types.UID]*podLife{}
			pt.lives[job] = lives
		}
		life := lives[p.UID]
		if life == nil {
			life = &podLife{name: p.Name, attempt: attempt, first: rv}
			lives[p.UID] = life
		}
		if verb == "delete" {
			life.gone = rv
		}
	}
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
		// Kept in memory (a few MB for a thousand jobs): a mismatch shows
		// the operator's lines on its job, which CI cannot replay.
		ctrl.SetLogger(zap.New(zap.WriteTo(&operatorLog), zap.UseDevMode(true)))
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
	trace := &podTrace{start: time.Now(), lines: map[string][]string{}, scripted: map[types.UID]bool{}, interfered: map[string][]interference{},
		restarted: map[string]int32{}, restartRV: map[string]map[int32]uint64{}, lives: map[string]map[types.UID]*podLife{},
		finishedRV: map[string]uint64{}}
	kl := newKubelet(api, 32)
	podInformer, err := ch.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	// The jobs' restarts tell the operator's own restart deletions from
	// interference (podTrace.interference).
	for _, k := range kinds {
		inf, err := ch.GetInformer(ctx, newJob(k))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    trace.job,
			UpdateFunc: func(_, obj any) { trace.job(obj) },
		}); err != nil {
			t.Fatal(err)
		}
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
	for _, r := range e.replayed {
		t.Logf("replayed after a mismatch: %s", r)
	}
	t.Logf("MODEL_SEED=%d: %d scenarios (oracle: %v; %s), %d mismatched, %d replayed after PodGC interference, run took %s; %s",
		cfg.seed, len(scenarios), phases, mix(scenarios), failed, replays.Load(), time.Since(runStart).Round(time.Millisecond), &e.timings)
	if failed > 0 {
		fmt.Printf("MODEL_SEED=%d: %d of %d scenarios mismatched\n", cfg.seed, failed, len(scenarios))
	}
}

// mix says how much of the run exercised the failure policy and the
// test's hold, for the summary.
func mix(scenarios []Scenario) string {
	var policy, noHold, bursts, restarts, moot int
	for i := range scenarios {
		s := &scenarios[i]
		if s.NoHold {
			noHold++
		}
		if s.FailurePolicy == nil {
			continue
		}
		policy++
		_, results := Predict(s)
		for k, st := range s.Steps {
			if st.Burst && !s.Steps[k-1].Burst {
				bursts++
			}
			if results[k].Effect == EffectRestart {
				restarts++
			}
			if results[k].Moot {
				moot++
			}
		}
	}
	return fmt.Sprintf("%d with a failure policy: %d whole-job restarts, %d bursts, %d steps on an attempt that was over; %d without the test's hold",
		policy, restarts, bursts, moot, noHold)
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
		if js, err := e.job(context.Background(), &try); err == nil {
			out = append(out, fmt.Sprintf("job status: restartCount=%d restarts=%d/%d countedPods=%v conditions=%v %s", js.RestartCount, js.Attempt(),
				js.RestartsCountTowardsMax, js.CountedPods, conditionList(js), terminalSummary(js)))
		}
		out = append(out, "pods:")
		out = append(out, e.trace.of(try.Name)...)
		out = append(out, "operator log on the job:")
		out = append(out, operatorLog.about(try.Name)...)
		if len(ended) == 0 {
			return out
		}
		out = append(out, "pods ended by someone else (replayed):")
		out = append(out, ended...)
		e.replayedMu.Lock()
		e.replayed = append(e.replayed, fmt.Sprintf("scenario %d (job %s): %s; first pod ended by someone else: %s", s.Index, try.Name, m[0], ended[0]))
		e.replayedMu.Unlock()
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

	for k := 0; k < len(s.Steps); {
		n := 1
		for k+n < len(s.Steps) && s.Steps[k+n].Burst {
			n++
		}
		burst, res := s.Steps[k:k+n], results[k:k+n]
		// Every pod of a burst runs before the burst starts, so that its steps
		// come together.
		pods := make([]*corev1.Pod, n)
		t0 := time.Now()
		for i, st := range burst {
			pod, err := e.waitPod(ctx, s, st.Attempt, Slot{st.Type, st.Index}, used)
			if err != nil {
				return []string{fmt.Sprintf("before step %d (%s): %v", k+i, st, err)}
			}
			pods[i] = pod
		}
		tPods += time.Since(t0)
		if burst[0].Delay > 0 {
			time.Sleep(burst[0].Delay)
		}
		// What the operator shows once the burst is dealt with.
		want := res[n-1]
		for _, r := range res {
			if r.Effect == EffectRestart {
				// Set before the step: the restart's deletions may come at once.
				e.trace.expectRestart(s.Name, r.State.Restarts)
			}
			if r.Effect != EffectNone {
				want.Effect = r.Effect
			}
		}
		// A burst's failures are recorded a second apart, the last one now
		// (timestamps have whole seconds), so that their recorded order is
		// their script order.
		base := time.Now()
		var held []*corev1.Pod
		release := func() error {
			var errs []error
			for _, pod := range held {
				e.trace.note(s.Name, "release uid=%s", string(pod.UID)[:8])
				errs = append(errs, e.release(ctx, pod))
			}
			return errors.Join(errs...)
		}
		for i, st := range burst {
			pod := pods[i]
			at := metav1.NewTime(base.Add(-time.Duration(n-1-i) * time.Second))
			e.trace.note(s.Name, "step %d: %s on uid=%s", k+i, st, string(pod.UID)[:8])
			h, err := e.apply(ctx, s, st, res[i].Recreated, pod, at)
			if h {
				held = append(held, pod)
			}
			if err != nil && res[i].Moot {
				// A restart or the job's end, decided on an earlier step of the
				// burst, may have taken the pod first; nothing judges it now.
				e.trace.note(s.Name, "step %d on an attempt that is over: %v", k+i, err)
				err = nil
			}
			if err != nil {
				_ = release()
				if errors.Is(err, errGone) {
					// The pod ended before the step could act on it, so someone
					// else ended it. The trace cannot always tell: a step that
					// deletes marks its pod as expected to go before acting.
					e.trace.interfere(s.Name, fmt.Sprintf("step %d: pod %s uid=%s gone before the step acted", k+i, pod.Name, string(pod.UID)[:8]))
				}
				return []string{fmt.Sprintf("step %d (%s): %v", k+i, st, err)}
			}
			if !inPlace(s, st) {
				used[pod.UID] = true
			}
		}
		var err error
		if want.Effect != EffectNone {
			// Wait for the operator to show this step before the next one, so
			// that steps are seen in script order.
			t0 := time.Now()
			err = e.waitJob(ctx, s, fmt.Sprintf("after step %d (%s): %s", k+n-1, burst[n-1], want.State), func(js *kubeflowv1.JobStatus) (bool, string) {
				return reached(js, want)
			})
			if err == nil && want.State.Restarts > burst[0].Attempt && len(held) > 0 {
				// A whole-job restart while the test holds pods of the old
				// attempt: the strategy decides what comes meanwhile.
				if s.Blocking() {
					// Nothing: a pod of the new attempt made while these are
					// held is what the trace's check finds.
					time.Sleep(blockingHold)
				} else {
					err = e.waitRecreated(ctx, s, want.State.Restarts, held)
				}
			}
			tSync += time.Since(t0)
		}
		if rerr := release(); rerr != nil && err == nil {
			err = rerr
		}
		if err != nil {
			return []string{err.Error()}
		}
		k += n
	}

	t0 := time.Now()
	if final.Phase == PhaseRunning {
		// Retried pods come back before the job can show Running again.
		for _, sl := range NewOracleAt(s).LiveSlots() {
			if _, err := e.waitPod(ctx, s, final.Restarts, sl, used); err != nil {
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
	if s.Blocking() {
		if v := e.trace.blockingViolations(s.Name); len(v) > 0 {
			return append([]string{"BlockingRecreate: pods of two attempts at once:"}, v...)
		}
	}
	return nil
}

// inPlace reports a step the kubelet deals with by restarting the container
// in place: the pod stays, for later steps too.
func inPlace(s *Scenario, st Step) bool {
	return st.Outcome == Crash ||
		(st.Outcome == Succeed && s.Replica(st.Type).Policy == kubeflowv1.RestartPolicyAlways && s.FailurePolicy == nil)
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
	if js.Attempt() > want.Restarts {
		return false, fmt.Sprintf("restarts=%d went past the oracle's %d", js.Attempt(), want.Restarts)
	}
	if phase != want.Phase || js.RestartCount != want.RestartCount ||
		js.Attempt() != want.Restarts || js.RestartsCountTowardsMax != want.RestartsCountTowardsMax {
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
	if js.Attempt() != want.Restarts || js.RestartsCountTowardsMax != want.RestartsCountTowardsMax {
		d = append(d, fmt.Sprintf("restarts/restartsCountTowardsMax: got %d/%d, want %d/%d",
			js.Attempt(), js.RestartsCountTowardsMax, want.Restarts, want.RestartsCountTowardsMax))
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
			last = fmt.Sprintf("restartCount=%d restarts=%d/%d conditions=%v %s", js.RestartCount, js.Attempt(), js.RestartsCountTowardsMax,
				conditionList(js), terminalSummary(js))
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
// used up yet, of the given restart attempt when the job has a failure policy.
func (e *env) waitPod(ctx context.Context, s *Scenario, attempt int32, sl Slot, used map[types.UID]bool) (*corev1.Pod, error) {
	name := s.PodName(sl.Type, sl.Index)
	deadline := time.Now().Add(waitTimeout)
	last := "absent"
	for {
		var p corev1.Pod
		err := e.cache.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &p)
		switch {
		case err == nil && !used[p.UID] && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0 &&
			(s.FailurePolicy == nil || attemptLabel(&p) == attempt):
			return &p, nil
		case err == nil:
			last = fmt.Sprintf("uid=%s used=%v phase=%s deleting=%v attempt=%d", p.UID, used[p.UID], p.Status.Phase, p.DeletionTimestamp != nil, attemptLabel(&p))
		case !apierrors.IsNotFound(err):
			last = err.Error()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("pod %s not running in %s (last: %s)", name, waitTimeout, last)
		}
		time.Sleep(pollInterval)
	}
}

// blockingHold is how long a restart's held pods stay once the restart
// shows, for BlockingRecreate to be caught creating too early; the engine
// acts on a pod event within milliseconds.
const blockingHold = 300 * time.Millisecond

// waitRecreated waits, under the Recreate strategy, until every slot but
// the held pods' has a pod of the new attempt: each pod is recreated as
// soon as its own predecessor is gone, not once the old attempt is.
func (e *env) waitRecreated(ctx context.Context, s *Scenario, attempt int32, held []*corev1.Pod) error {
	holding := map[string]bool{}
	for _, p := range held {
		holding[p.Name] = true
	}
	deadline := time.Now().Add(waitTimeout)
	for _, r := range s.Replicas {
		for i := 0; i < r.Replicas; i++ {
			name := s.PodName(r.Type, i)
			if holding[name] {
				continue
			}
			for {
				var p corev1.Pod
				err := e.cache.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &p)
				if err == nil && attemptLabel(&p) == attempt {
					break
				}
				if time.Now().After(deadline) || ctx.Err() != nil {
					return fmt.Errorf("Recreate: no pod %s of attempt %d in %s while pods of attempt %d are held", name, attempt, waitTimeout, attempt-1)
				}
				time.Sleep(pollInterval)
			}
		}
	}
	return nil
}

var errGone = errors.New("the pod incarnation is gone")

// updateStatus applies mutate to the current pod's status if it is still the
// same incarnation, retrying conflicts (the apiserver writes pods too).
func (e *env) updateStatus(ctx context.Context, ns string, pod *corev1.Pod, mutate func(*corev1.Pod)) error {
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
		err := e.api.Status().Update(ctx, &p)
		if apierrors.IsNotFound(err) {
			return errGone
		}
		if err == nil || !apierrors.IsConflict(err) || attempt > 20 {
			return err
		}
	}
}

// hold adds (or, with add false, removes) holdFinalizer and nothing else.
// A strategic merge patch of the finalizer list never touches the
// operator's tracking finalizer, whatever the test's copy of the pod says
// (a full update from a copy taken before the operator removed or added
// its own would put it back or take it away). The patch carries the pod's
// uid, which is immutable, so it fails on a same-named replacement.
func (e *env) hold(ctx context.Context, pod *corev1.Pod, add bool) error {
	list := `"finalizers"`
	if !add {
		list = `"$deleteFromPrimitiveList/finalizers"`
	}
	patch := client.RawPatch(types.StrategicMergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"uid":%q,%s:[%q]}}`, pod.UID, list, holdFinalizer)))
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	err := e.api.Patch(ctx, target, patch)
	if err == nil || apierrors.IsNotFound(err) {
		if err != nil {
			return errGone
		}
		return nil
	}
	// A uid mismatch is refused as an invalid (immutable) field: tell it
	// from other refusals by the pod that is there now. So is a finalizer
	// added to a pod someone else is already deleting (PodGC, by name, with
	// a stale list): the incarnation is ending before the step acted.
	var now corev1.Pod
	gerr := e.api.Get(ctx, client.ObjectKeyFromObject(target), &now)
	if apierrors.IsNotFound(gerr) || (gerr == nil && (now.UID != pod.UID || add && now.DeletionTimestamp != nil)) {
		return errGone
	}
	return err
}

// apply makes one outcome happen to the pod, at the given time (the
// container's finishedAt and the DisruptionTarget condition's time). held
// reports a pod kept terminating by holdFinalizer, to release once the
// operator has reacted.
func (e *env) apply(ctx context.Context, s *Scenario, st Step, recreated bool, pod *corev1.Pod, at metav1.Time) (held bool, err error) {
	container := s.MainContainer(st.Type)
	outcome, code := st.Outcome, st.Code
	if inPlace(s, st) && outcome == Succeed {
		outcome, code = Crash, 0
	}
	if outcome != Crash && outcome != Succeed {
		e.trace.expect(pod.UID, recreated || outcome == Delete || outcome == APIEvict)
	}
	now := metav1.Now()
	// end terminates a container; the main one with the step's code,
	// others (the sidecar) as the kubelet stops them once the pod ends.
	end := func(p *corev1.Pod, name string, code int32, reason string) {
		for i := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[i]
			if cs.Name != name {
				continue
			}
			started := at
			if cs.State.Running != nil && cs.State.Running.StartedAt.Before(&at) {
				started = cs.State.Running.StartedAt
			}
			cs.Ready, cs.Started = false, ptrTo(false)
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: at,
			}}
		}
	}
	terminate := func(p *corev1.Pod, phase corev1.PodPhase, code int32, reason string) {
		p.Status.Phase = phase
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == container {
				end(p, cs.Name, code, reason)
			} else if cs.State.Terminated == nil {
				end(p, cs.Name, 0, "Completed")
			}
		}
		setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", now)
		setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", now)
	}
	switch outcome {
	case Crash:
		return false, e.updateStatus(ctx, s.Namespace, pod, func(p *corev1.Pod) {
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
		return false, e.updateStatus(ctx, s.Namespace, pod, func(p *corev1.Pod) {
			terminate(p, corev1.PodFailed, code, "Error")
		})
	case MainExit:
		// The sidecar keeps running, so the pod does (restartPolicy Never).
		return false, e.updateStatus(ctx, s.Namespace, pod, func(p *corev1.Pod) {
			end(p, container, code, "Error")
			setPodCondition(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", now)
			setPodCondition(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", now)
		})
	case Succeed:
		return false, e.updateStatus(ctx, s.Namespace, pod, func(p *corev1.Pod) {
			terminate(p, corev1.PodSucceeded, 0, "Completed")
		})
	case Evict:
		return false, e.updateStatus(ctx, s.Namespace, pod, func(p *corev1.Pod) {
			terminate(p, corev1.PodFailed, code, "Error")
			p.Status.Reason = "Evicted"
			p.Status.Message = "The node was low on resource: memory."
			setPodCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue, "TerminationByKubelet", at)
		})
	case Delete, APIEvict:
		// Without the hold, a pod of an untracked job goes at once, and one
		// of a tracked job stays by the operator's finalizer alone.
		held = !s.NoHold
		if held {
			if err := e.hold(ctx, pod, true); err != nil {
				return false, err
			}
		}
		// PodGC force-deletes unscheduled terminating pods by name, from a
		// possibly stale list, which kills the same-named replacement. A
		// pod bound to a node that does not exist is left alone for PodGC's
		// 40 s quarantine of unknown nodes, and KWOK ignores it too. A pod
		// that nothing keeps goes with its delete: it needs no binding.
		if held || s.Tracked() {
			if err := e.api.SubResource("binding").Create(ctx, pod, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
				Target:     corev1.ObjectReference{Kind: "Node", Name: "model-held-" + string(pod.UID)},
			}); err != nil {
				return held, fmt.Errorf("binding before the delete: %w", err)
			}
		}
		// Grace 0: the pod goes as soon as the finalizers are gone.
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
			return held, err
		}
		// The kubelet kills the containers and records the final phase
		// before the pod goes.
		return held, e.updateStatus(ctx, s.Namespace, pod, func(p *corev1.Pod) {
			terminate(p, corev1.PodFailed, code, "Error")
		})
	}
	return false, fmt.Errorf("unknown outcome %q", outcome)
}

// release drops holdFinalizer so that a terminating pod goes away.
func (e *env) release(ctx context.Context, pod *corev1.Pod) error {
	if err := e.hold(ctx, pod, false); err != nil && !errors.Is(err, errGone) {
		return err
	}
	return nil
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
