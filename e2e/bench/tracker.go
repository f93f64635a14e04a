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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// tracker watches pods, services and PyTorchJobs with informers and records
// when the bench first saw each pod and service, each pod Running and
// finished, and each job Running and Succeeded. Times are the bench's clock
// when the watch event arrived.
type tracker struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]*jobTimes
	ns   map[string]*nsTimes
	pods map[types.UID]uint8 // podSeen | podRunning | podDone
	svcs map[types.UID]bool
}

const (
	podRunning uint8 = 1 << iota
	podDone
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
}

// nsTimes aggregates all pods and services in one namespace.
type nsTimes struct {
	pods, services, running, done int
	lastPod, lastService          time.Time
	lastRunning, lastDone         time.Time
}

func startTracker(ctx context.Context, cfg *rest.Config) (*tracker, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: util.Scheme(), DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, err
	}
	t := &tracker{jobs: map[types.NamespacedName]*jobTimes{}, ns: map[string]*nsTimes{}, pods: map[types.UID]uint8{}, svcs: map[types.UID]bool{}}
	handlers := map[client.Object]func(any){
		&corev1.Pod{}:            t.onPod,
		&corev1.Service{}:        t.onService,
		&kubeflowv1.PyTorchJob{}: t.onJob,
	}
	for obj, h := range handlers {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    h,
			UpdateFunc: func(_, o any) { h(o) },
		}); err != nil {
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
	if !seen {
		n.pods++
		n.lastPod = now
		if key, ok := ownerJob(pod); ok {
			j := t.job(key)
			j.pods++
			j.lastPod = now
		}
	}
	phase := pod.Status.Phase
	if state&podRunning == 0 && (phase == corev1.PodRunning || phase == corev1.PodSucceeded || phase == corev1.PodFailed) {
		state |= podRunning
		n.running++
		n.lastRunning = now
	}
	if state&podDone == 0 && (phase == corev1.PodSucceeded || phase == corev1.PodFailed) {
		state |= podDone
		n.done++
		n.lastDone = now
	}
	t.pods[pod.UID] = state
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

func (t *tracker) onJob(o any) {
	job, ok := o.(*kubeflowv1.PyTorchJob)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.job(client.ObjectKeyFromObject(job))
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case kubeflowv1.JobRunning:
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
