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
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// recorder watches a scenario's namespace from before the first job is
// created and keeps every pod and job observation in arrival order, for
// the invariant checker. Its watches resume after apiserver and etcd
// outages from the last revision they delivered; were one to relist
// instead, what happened in between would be lost, so every watch error
// and every list after the first sync is kept as a gap, which the checker
// reports as a violation. A watch that ends with "resource version too
// old" relists without reporting an error, so the lists themselves are
// counted.
type recorder struct {
	mu       sync.Mutex
	synced   bool
	pods     []podObs
	jobs     []jobObs
	progress []time.Time // operator writes: job status changes and pod creations
	gaps     []time.Time
	podState map[string]podObs // by UID: last observation, to report terminating pods once
	onPod    func(podObs)      // optional hook (the harness's actors), called without mu held, deletions too
}

// podObs is one observation of a pod.
type podObs struct {
	At      time.Time       `json:"at"`
	UID     string          `json:"uid"`
	Name    string          `json:"name"`
	Job     string          `json:"job"` // namespace/job-name label
	RType   string          `json:"rtype"`
	Index   int             `json:"index"`
	Phase   corev1.PodPhase `json:"phase"`
	Created time.Time       `json:"created"`
	// Attempt is the pod's restart-attempt label ("" without one): the
	// whole-job restart of a failure-policy job it was made for.
	Attempt string `json:"attempt,omitempty"`
	// Deleting: deletionTimestamp is set; Gone: the pod no longer exists.
	Deleting bool `json:"deleting,omitempty"`
	Gone     bool `json:"gone,omitempty"`
	// Relisted: a Gone learnt from a relist, not from its delete event;
	// it went away at some time before At, in an order that is not known.
	Relisted bool `json:"relisted,omitempty"`
	// Suspended: the pod carries the operator's mark of a pod deleted for
	// its job's suspension (DisruptionTarget, reason TrainingJobSuspended).
	Suspended bool `json:"suspended,omitempty"`
}

// live is a pod that runs or may run: not finished and not being deleted.
func (p podObs) live() bool {
	return !p.Gone && !p.Deleting && p.Phase != corev1.PodSucceeded && p.Phase != corev1.PodFailed
}

// slot is the job, replica type and index a pod fills.
func (p podObs) slot() string { return fmt.Sprintf("%s/%s/%d", p.Job, p.RType, p.Index) }

// jobObs is one observation of a job's status.
type jobObs struct {
	At           time.Time `json:"at"`
	Job          string    `json:"job"`
	Kind         string    `json:"kind"`
	Succeeded    bool      `json:"succeeded,omitempty"`
	Failed       bool      `json:"failed,omitempty"`
	TerminalAt   time.Time `json:"terminalAt,omitzero"` // lastTransitionTime of the terminal condition
	RestartCount int32     `json:"restartCount"`
	// Restarts and RestartsCounted are status.restarts and
	// status.restartsCountTowardsMax (whole-job restarts of a failure policy).
	Restarts        int32 `json:"restarts,omitempty"`
	RestartsCounted int32 `json:"restartsCounted,omitempty"`
	Gone            bool  `json:"gone,omitempty"`
}

func (j jobObs) terminal() bool { return j.Succeeded || j.Failed }

func newRecorder() *recorder { return &recorder{podState: map[string]podObs{}} }

// start runs informers on pods with the job-name label and on all six job
// kinds in ns, and returns once their caches have synced. Their watches
// resume from the last resourceVersion they delivered (resumingListWatch),
// so an apiserver restart or an etcd pause loses no event.
func (r *recorder) start(ctx context.Context, cfg *rest.Config, ns string) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 100, 200
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return listSpy{next: rt, r: r} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pods := cs.CoreV1().Pods(ns)
	podInf := cache.NewSharedIndexInformer(resumingListWatch(
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = kubeflowv1.JobNameLabel
			return pods.List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = kubeflowv1.JobNameLabel
			return pods.Watch(ctx, o)
		}), &corev1.Pod{}, 0, cache.Indexers{})
	if err := podInf.SetWatchErrorHandler(r.watchError); err != nil {
		return err
	}
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.podEvent(nil, o) },
		UpdateFunc: func(old, o any) { r.podEvent(old, o) },
		DeleteFunc: r.podDeleted,
	}); err != nil {
		return err
	}
	infs := []cache.SharedIndexInformer{podInf}
	for _, k := range kinds {
		jobs := dc.Resource(k.gvr()).Namespace(ns)
		inf := cache.NewSharedIndexInformer(resumingListWatch(
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return jobs.List(ctx, o) },
			jobs.Watch), &unstructured.Unstructured{}, 0, cache.Indexers{})
		if err := inf.SetWatchErrorHandler(r.watchError); err != nil {
			return err
		}
		kind := k.kind
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.jobEvent(kind, nil, o) },
			UpdateFunc: func(old, o any) { r.jobEvent(kind, old, o) },
			DeleteFunc: func(o any) { r.jobDeleted(kind, o) },
		}); err != nil {
			return err
		}
		infs = append(infs, inf)
	}
	var synced []cache.InformerSynced
	for _, inf := range infs {
		go inf.RunWithContext(ctx)
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("recorder: informers did not sync")
	}
	r.mu.Lock()
	r.synced = true
	r.mu.Unlock()
	return nil
}

// resumingListWatch lists with list and watches with watch through a
// RetryWatcher: a watch that ends with an error event (an etcd timeout
// while etcd is paused, say), on which the informer would relist and lose
// what changed in between, is taken up again from the last resourceVersion
// delivered. The chaos cluster keeps every revision for it (no watch cache,
// no compaction: see env.go). Only a 410 Gone ends the watch; the informer
// then relists, which listSpy records as a gap.
func resumingListWatch(list cache.ListWithContextFunc, watchFn cache.WatchFuncWithContext) cache.ListerWatcher {
	inner := &cache.ListWatch{WatchFuncWithContext: watchFn}
	return resumingLW{ListWatch: &cache.ListWatch{
		ListWithContextFunc: list,
		WatchFuncWithContext: func(wctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return watchtools.NewRetryWatcherWithContext(wctx, o.ResourceVersion, inner)
		},
	}}
}

// resumingLW is a ListWatch the reflector lists from instead of streaming
// the list through a watch (WatchList), whose initial events a
// RetryWatcher cannot resume.
type resumingLW struct{ *cache.ListWatch }

func (resumingLW) IsWatchListSemanticsUnSupported() bool { return true }

// isList reports whether a request lists a collection: a plain list, or
// (client-go's WatchListClient, on by default) a watch that streams the
// current objects first (sendInitialEvents=true).
func isList(req *http.Request) bool {
	q := req.URL.Query()
	return req.Method == http.MethodGet && (q.Get("watch") != "true" || q.Get("sendInitialEvents") == "true")
}

// listSpy records every list the informers make after their first sync:
// each is a relist, and what happened since the last watch event is lost.
type listSpy struct {
	next http.RoundTripper
	r    *recorder
}

// WrappedRoundTripper lets client-go reach the transport beneath (to cancel requests).
func (l listSpy) WrappedRoundTripper() http.RoundTripper { return l.next }

func (l listSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	if isList(req) {
		l.r.mu.Lock()
		if l.r.synced {
			l.r.gaps = append(l.r.gaps, time.Now())
		}
		l.r.mu.Unlock()
	}
	return l.next.RoundTrip(req)
}

func (r *recorder) watchError(_ *cache.Reflector, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gaps = append(r.gaps, time.Now())
	_ = err
}

func toPodObs(o any, now time.Time) (podObs, bool) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return podObs{}, false
	}
	idx, err := strconv.Atoi(p.Labels[kubeflowv1.ReplicaIndexLabel])
	if err != nil {
		idx = -1
	}
	return podObs{
		At: now, UID: string(p.UID), Name: p.Name,
		Job:   p.Namespace + "/" + p.Labels[kubeflowv1.JobNameLabel],
		RType: p.Labels[kubeflowv1.ReplicaTypeLabel], Index: idx,
		Phase: p.Status.Phase, Created: p.CreationTimestamp.Time,
		Attempt:   p.Labels[kubeflowv1.RestartAttemptLabel],
		Deleting:  p.DeletionTimestamp != nil,
		Suspended: markedSuspended(p),
	}, true
}

// markedSuspended reports the operator's suspension mark on a pod.
func markedSuspended(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == kubeflowv1.SuspendedDisruptionReason {
			return true
		}
	}
	return false
}

func (r *recorder) podEvent(oldObj, newObj any) {
	now := time.Now()
	obs, ok := toPodObs(newObj, now)
	if !ok {
		return
	}
	r.mu.Lock()
	// After a relist the same name can come back with another UID: the
	// old pod went away unseen.
	var replaced []podObs
	if old, ok := toPodObs(oldObj, now); ok && old.UID != obs.UID {
		if last, seen := r.podState[old.UID]; seen && !last.Gone {
			last.At, last.Gone, last.Relisted = now, true, true
			r.record(last)
			replaced = append(replaced, last)
		}
	}
	last, seen := r.podState[obs.UID]
	if !seen {
		r.progress = append(r.progress, time.Now())
	}
	if !seen || last.Phase != obs.Phase || last.Deleting != obs.Deleting || last.Suspended != obs.Suspended {
		r.record(obs)
	}
	hook := r.onPod
	r.mu.Unlock()
	if hook != nil {
		for _, p := range replaced {
			hook(p)
		}
		hook(obs)
	}
}

func (r *recorder) podDeleted(o any) {
	relisted := false
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o, relisted = t.Obj, true
	}
	obs, ok := toPodObs(o, time.Now())
	if !ok {
		return
	}
	obs.Gone, obs.Relisted = true, relisted
	r.mu.Lock()
	if last, seen := r.podState[obs.UID]; seen {
		if obs.Phase == "" {
			obs.Phase = last.Phase
		}
		obs.Suspended = obs.Suspended || last.Suspended
	}
	r.record(obs)
	hook := r.onPod
	r.mu.Unlock()
	if hook != nil {
		hook(obs)
	}
}

// record appends a pod observation; call with mu held.
func (r *recorder) record(obs podObs) {
	r.pods = append(r.pods, obs)
	r.podState[obs.UID] = obs
}

// jobStatus decodes the status of an unstructured job.
func jobStatus(u *unstructured.Unstructured) (kubeflowv1.JobStatus, error) {
	var st kubeflowv1.JobStatus
	raw, ok := u.Object["status"].(map[string]any)
	if !ok {
		return st, nil
	}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st)
	return st, err
}

func toJobObs(kind string, o any, now time.Time) (jobObs, string, bool) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return jobObs{}, "", false
	}
	st, err := jobStatus(u)
	if err != nil {
		return jobObs{}, "", false
	}
	j := jobObs{At: now, Job: u.GetNamespace() + "/" + u.GetName(), Kind: kind, RestartCount: st.RestartCount,
		Restarts: st.Attempt(), RestartsCounted: st.RestartsCountTowardsMax}
	for _, c := range st.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case kubeflowv1.JobSucceeded:
			j.Succeeded, j.TerminalAt = true, c.LastTransitionTime.Time
		case kubeflowv1.JobFailed:
			j.Failed, j.TerminalAt = true, c.LastTransitionTime.Time
		}
	}
	// The fingerprint tells status changes from metadata-only updates.
	return j, fmt.Sprintf("%v", u.Object["status"]), true
}

func (r *recorder) jobEvent(kind string, oldObj, newObj any) {
	now := time.Now()
	obs, fp, ok := toJobObs(kind, newObj, now)
	if !ok {
		return
	}
	changed := true
	if oldObj != nil {
		if _, oldFP, ok := toJobObs(kind, oldObj, now); ok && oldFP == fp {
			changed = false
		}
	}
	if !changed {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, obs)
	if oldObj != nil { // only the operator writes job status
		r.progress = append(r.progress, time.Now())
	}
}

func (r *recorder) jobDeleted(kind string, o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	obs, _, ok := toJobObs(kind, o, time.Now())
	if !ok {
		return
	}
	obs.Gone = true
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, obs)
}

// history is a copy of everything recorded so far.
type history struct {
	Pods []podObs    `json:"-"`
	Jobs []jobObs    `json:"-"`
	Gaps []time.Time `json:"gaps,omitempty"`
}

func (r *recorder) snapshot() history {
	r.mu.Lock()
	defer r.mu.Unlock()
	return history{
		Pods: append([]podObs(nil), r.pods...),
		Jobs: append([]jobObs(nil), r.jobs...),
		Gaps: append([]time.Time(nil), r.gaps...),
	}
}

// firstProgressAfter is the first operator write seen after t (zero if none).
func (r *recorder) firstProgressAfter(t time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.progress), func(i int) bool { return r.progress[i].After(t) })
	if i == len(r.progress) {
		return time.Time{}
	}
	return r.progress[i]
}

// terminalJobs counts the jobs whose latest observation is terminal.
func (r *recorder) terminalJobs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := map[string]bool{}
	for _, j := range r.jobs {
		last[j.Job] = j.terminal()
	}
	n := 0
	for _, t := range last {
		if t {
			n++
		}
	}
	return n
}
