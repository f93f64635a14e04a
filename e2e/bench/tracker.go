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
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// tracker watches pods, services, PyTorchJobs and the Events about
// PyTorchJobs with informers and records when the bench first saw each pod
// and service, each pod Running and finished, each job Running and
// Succeeded, each write to a job's status and each Event (or repeat of one)
// about a job. Times are the bench's clock when the watch event arrived.
// These watches see the apiserver's objects, so they count the same for any
// operator and any connection (with or without the proxy).
type tracker struct {
	mu     sync.Mutex
	jobs   map[types.NamespacedName]*jobTimes
	ns     map[string]*nsTimes
	pods   map[types.UID]uint8 // seen: podRunning | podDone | podTerminating | podReleased
	svcs   map[types.UID]bool
	events map[types.UID]int32 // last count seen per Event
}

const (
	podRunning uint8 = 1 << iota
	podDone
	podTerminating // seen with a deletionTimestamp
	podReleased    // seen with a deletionTimestamp and without the pod-tracking finalizer
)

// jobTimes are the observations for one job.
type jobTimes struct {
	created        time.Time // when the bench sent the create request
	pods, services int
	lastPod        time.Time
	lastService    time.Time
	running        time.Time
	succeeded      time.Time
	failed         bool
	// statusWrites are the MODIFIED events that changed .status: one per
	// effective status write (a write that changes nothing is no event).
	statusWrites []statusWrite
	// events are the Events about the job: a new object or a higher count.
	events []eventObs
	// attempts are its pods by restart attempt (the value of
	// kubeflowv1.RestartAttemptLabel), for jobs with a failure policy only.
	attempts map[string]attemptTimes
	// firstFailed is when a pod of the job was first seen Failed.
	firstFailed time.Time
	// restarting is when the job was first seen Restarting, and resumed
	// when it was first seen Running again after that.
	restarting, resumed time.Time
}

// attemptTimes are the observations of the pods of one restart attempt of
// a job: how many were seen created, Running (or beyond), terminating (a
// deletionTimestamp), released (terminating without the pod-tracking
// finalizer: only the kubelet's, here KWOK's, confirmation holds them) and
// gone, and when the last of each was seen. They tell the operator's part
// of a restart's deletions from the node's.
type attemptTimes struct {
	pods, running, terminating, released, gone                    int
	lastPod, lastRunning, lastTerminating, lastReleased, lastGone time.Time
}

// statusWrite is one effective status write: when the watch saw it and
// what it changed (statusChange).
type statusWrite struct {
	at   time.Time
	what string
}

// eventObs is one observation of an Event about a job: a new Event object
// (count increments n from 0) or a repeat of one (count increments n).
type eventObs struct {
	at    time.Time
	isNew bool
	n     int
}

// nsTimes aggregates all pods and services in one namespace.
type nsTimes struct {
	pods, services, running, done int
	lastPod, lastService          time.Time
	lastRunning, lastDone         time.Time
}

func startTracker(ctx context.Context, cfg *rest.Config) (*tracker, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme: util.Scheme(), DefaultTransform: cache.TransformStripManagedFields(),
		// Only the Events about jobs: the scheduler's and KWOK's about pods
		// are many and not the operator's.
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Event{}: {Field: fields.OneTermEqualSelector("involvedObject.kind", kubeflowv1.PyTorchJobKind)},
		},
	})
	if err != nil {
		return nil, err
	}
	t := &tracker{jobs: map[types.NamespacedName]*jobTimes{}, ns: map[string]*nsTimes{}, pods: map[types.UID]uint8{},
		svcs: map[types.UID]bool{}, events: map[types.UID]int32{}}
	handlers := map[client.Object]func(old, obj any){
		&corev1.Pod{}:            func(_, o any) { t.onPod(o) },
		&corev1.Service{}:        func(_, o any) { t.onService(o) },
		&kubeflowv1.PyTorchJob{}: t.onJob,
		&corev1.Event{}:          func(_, o any) { t.onEvent(o) },
	}
	for obj, h := range handlers {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		funcs := toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { h(nil, o) },
			UpdateFunc: h,
		}
		if _, isPod := obj.(*corev1.Pod); isPod {
			funcs.DeleteFunc = t.onPodDeleted // a restart's old pods going
		}
		if _, err := inf.AddEventHandler(funcs); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("tracker: caches did not sync")
	}
	return t, nil
}

// ownerJob returns the PyTorchJob controlling obj, if any.
func ownerJob(obj metav1.Object) (types.NamespacedName, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != kubeflowv1.PyTorchJobKind {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, true
}

func (t *tracker) job(key types.NamespacedName) *jobTimes {
	j := t.jobs[key]
	if j == nil {
		j = &jobTimes{}
		t.jobs[key] = j
	}
	return j
}

func (t *tracker) namespace(ns string) *nsTimes {
	n := t.ns[ns]
	if n == nil {
		n = &nsTimes{}
		t.ns[ns] = n
	}
	return n
}

func (t *tracker) onPod(o any) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	state, seen := t.pods[pod.UID]
	n := t.namespace(pod.Namespace)
	key, owned := ownerJob(pod)
	// the pod's restart attempt, for jobs with a failure policy
	attempt := func(update func(a *attemptTimes)) {
		if v, ok := pod.Labels[kubeflowv1.RestartAttemptLabel]; ok && owned {
			t.job(key).updateAttempt(v, update)
		}
	}
	if !seen {
		n.pods++
		n.lastPod = now
		if owned {
			j := t.job(key)
			j.pods++
			j.lastPod = now
		}
		attempt(func(a *attemptTimes) { a.pods++; a.lastPod = now })
	}
	phase := pod.Status.Phase
	if state&podRunning == 0 && (phase == corev1.PodRunning || phase == corev1.PodSucceeded || phase == corev1.PodFailed) {
		state |= podRunning
		n.running++
		n.lastRunning = now
		attempt(func(a *attemptTimes) { a.running++; a.lastRunning = now })
	}
	if state&podTerminating == 0 && pod.DeletionTimestamp != nil {
		state |= podTerminating
		attempt(func(a *attemptTimes) { a.terminating++; a.lastTerminating = now })
	}
	if state&podReleased == 0 && pod.DeletionTimestamp != nil && !slices.Contains(pod.Finalizers, kubeflowv1.PodTrackingFinalizer) {
		state |= podReleased
		attempt(func(a *attemptTimes) { a.released++; a.lastReleased = now })
	}
	if state&podDone == 0 && (phase == corev1.PodSucceeded || phase == corev1.PodFailed) {
		state |= podDone
		n.done++
		n.lastDone = now
		if j := t.jobs[key]; owned && phase == corev1.PodFailed && j != nil && j.firstFailed.IsZero() {
			j.firstFailed = now
		}
	}
	t.pods[pod.UID] = state
}

// onPodDeleted records the deletion of a pod of a restart attempt.
func (t *tracker) onPodDeleted(o any) {
	if tomb, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = tomb.Obj
	}
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	v, hasAttempt := pod.Labels[kubeflowv1.RestartAttemptLabel]
	key, owned := ownerJob(pod)
	if !hasAttempt || !owned {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	// Released and removed at once (no update in between): released now.
	released := t.pods[pod.UID]&podReleased != 0
	t.pods[pod.UID] |= podReleased
	t.job(key).updateAttempt(v, func(a *attemptTimes) {
		if !released {
			a.released++
			a.lastReleased = now
		}
		a.gone++
		a.lastGone = now
	})
}

// updateAttempt applies update to the observations of one attempt.
func (j *jobTimes) updateAttempt(attempt string, update func(a *attemptTimes)) {
	if j.attempts == nil {
		j.attempts = map[string]attemptTimes{}
	}
	a := j.attempts[attempt]
	update(&a)
	j.attempts[attempt] = a
}

func (t *tracker) onService(o any) {
	svc, ok := o.(*corev1.Service)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.svcs[svc.UID] {
		return
	}
	t.svcs[svc.UID] = true
	n := t.namespace(svc.Namespace)
	n.services++
	n.lastService = now
	if key, ok := ownerJob(svc); ok {
		j := t.job(key)
		j.services++
		j.lastService = now
	}
}

func (t *tracker) onJob(old, o any) {
	job, ok := o.(*kubeflowv1.PyTorchJob)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.job(client.ObjectKeyFromObject(job))
	if prev, ok := old.(*kubeflowv1.PyTorchJob); ok && statusChanged(prev, job) {
		j.statusWrites = append(j.statusWrites, statusWrite{now, statusChange(&prev.Status, &job.Status)})
	}
	var isRunning, isRestarting bool
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case kubeflowv1.JobRestarting:
			isRestarting = true
			if j.restarting.IsZero() {
				j.restarting = now
			}
		case kubeflowv1.JobRunning:
			isRunning = true
			if j.running.IsZero() {
				j.running = now
			}
		case kubeflowv1.JobSucceeded:
			if j.succeeded.IsZero() {
				j.succeeded = now
			}
			if j.running.IsZero() { // finished between two observations
				j.running = now
			}
		case kubeflowv1.JobFailed:
			j.failed = true
		}
	}
	if isRunning && !isRestarting && !j.restarting.IsZero() && j.resumed.IsZero() {
		j.resumed = now
	}
}

// statusChanged reports whether an update of the same job changed its
// status. A relist's replayed object is the same resourceVersion: no write.
func statusChanged(old, cur *kubeflowv1.PyTorchJob) bool {
	if old.UID != cur.UID || old.ResourceVersion == cur.ResourceVersion {
		return false
	}
	return !equality.Semantic.DeepEqual(old.Status, cur.Status)
}

// statusChange names what a status write changed, for telling apart the
// writes of jobs above the status-write goal: the condition types it set or
// changed, then "counts" (replica statuses) and "other" (times, restarts).
func statusChange(old, cur *kubeflowv1.JobStatus) string {
	var parts []string
	for _, c := range cur.Conditions {
		var prev *kubeflowv1.JobCondition
		for i := range old.Conditions {
			if old.Conditions[i].Type == c.Type {
				prev = &old.Conditions[i]
			}
		}
		if prev == nil || prev.Status != c.Status || prev.Reason != c.Reason || prev.Message != c.Message {
			parts = append(parts, string(c.Type))
		}
	}
	if !equality.Semantic.DeepEqual(old.ReplicaStatuses, cur.ReplicaStatuses) {
		parts = append(parts, "counts")
	}
	a, b := *old, *cur
	a.Conditions, b.Conditions, a.ReplicaStatuses, b.ReplicaStatuses = nil, nil, nil, nil
	if !equality.Semantic.DeepEqual(a, b) {
		parts = append(parts, "other")
	}
	return strings.Join(parts, "+")
}

// onEvent records a new Event about a job, or a higher count of one.
func (t *tracker) onEvent(o any) {
	ev, ok := o.(*corev1.Event)
	if !ok || ev.InvolvedObject.Kind != kubeflowv1.PyTorchJobKind {
		return
	}
	now := time.Now()
	count := max(ev.Count, 1) // events.k8s.io events without a series show 0
	t.mu.Lock()
	defer t.mu.Unlock()
	last, seen := t.events[ev.UID]
	if seen && count <= last {
		return
	}
	t.events[ev.UID] = count
	key := types.NamespacedName{Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name}
	if key.Namespace == "" {
		key.Namespace = ev.Namespace
	}
	j := t.job(key)
	j.events = append(j.events, eventObs{at: now, isNew: !seen, n: int(count - last)})
}

// activity sums what the watches saw on the given jobs between from and to
// (zero times: unbounded).
func (t *tracker) activity(keys []types.NamespacedName, from, to time.Time) JobActivity {
	in := func(at time.Time) bool {
		return (from.IsZero() || !at.Before(from)) && (to.IsZero() || !at.After(to))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	a := JobActivity{Jobs: len(keys)}
	for _, k := range keys {
		j := t.jobs[k]
		if j == nil {
			continue
		}
		var seq []string
		var last time.Time
		for _, w := range j.statusWrites {
			if !in(w.at) {
				continue
			}
			step := w.what
			if !last.IsZero() {
				step = fmt.Sprintf("%s (+%.0fs)", step, w.at.Sub(last).Seconds())
			}
			seq, last = append(seq, step), w.at
		}
		n := len(seq)
		a.StatusWrites += n
		a.MaxStatusWrites = max(a.MaxStatusWrites, n)
		if n > statusWritesPerJobGoal {
			if a.OverGoalWrites == nil {
				a.OverGoalWrites = map[string]int{}
			}
			a.OverGoalWrites[strings.Join(seq, " > ")]++
		}
		for _, e := range j.events {
			if !in(e.at) {
				continue
			}
			if e.isNew {
				a.EventObjects++
			}
			a.EventCount += e.n
		}
	}
	return a
}

// jobKeysIn lists the jobs seen in a namespace (created by the bench or
// seen by the job watch).
func (t *tracker) jobKeysIn(ns string) []types.NamespacedName {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []types.NamespacedName
	for k := range t.jobs {
		if k.Namespace == ns {
			out = append(out, k)
		}
	}
	return out
}

// markCreated records when the bench sent the create request for a job.
func (t *tracker) markCreated(ns, name string, at time.Time) {
	t.mu.Lock()
	t.job(types.NamespacedName{Namespace: ns, Name: name}).created = at
	t.mu.Unlock()
}

// jobsIn returns copies of the observations of the given jobs.
func (t *tracker) jobsIn(keys []types.NamespacedName) []jobTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]jobTimes, len(keys))
	for i, k := range keys {
		if j := t.jobs[k]; j != nil {
			out[i] = *j
			out[i].attempts = maps.Clone(j.attempts) // the tracker goes on updating its own
		}
	}
	return out
}

// nsIn returns a copy of the observations for a namespace.
func (t *tracker) nsIn(ns string) nsTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.ns[ns]; n != nil {
		return *n
	}
	return nsTimes{}
}

// waitFor polls cond every 50 ms until it is true, ctx ends or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, progress := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s (%s): %w", what, progress, ctx.Err())
		case <-tick.C:
		}
	}
}
