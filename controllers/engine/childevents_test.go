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

package engine

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// countingInformer counts the handlers added to it.
type countingInformer struct {
	*controllertest.FakeInformer
	handlers atomic.Int32
}

func (i *countingInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	i.handlers.Add(1)
	return i.FakeInformer.AddEventHandlerWithOptions(h, o)
}

func newQueue() workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
}

// drain is the requests in q, sorted.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	var out []string
	for q.Len() > 0 {
		r, _ := q.Get()
		out = append(out, r.Name)
		q.Done(r)
	}
	slices.Sort(out)
	return out
}

func podOf(name, kind, job string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"}}
	if kind != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: kind, Name: job,
			UID: types.UID(job), Controller: new(true)}}
	}
	return p
}

// Every kind's controllers share one handler on the pod informer, added
// once all of them started; each event reaches only the routes of the
// kind that controls the child, whose predicates alone run.
func TestChildEventsOneHandlerRoutedByController(t *testing.T) {
	informer := &countingInformer{FakeInformer: controllertest.NewFakeInformer(controllertest.Synced)}
	fakeCache := &informertest.FakeInformers{InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{
		corev1.SchemeGroupVersion.WithKind("Pod"): informer,
	}}
	events := NewChildEvents(fakeCache)
	gkA := schema.GroupKind{Group: "kubeflow.org", Kind: "AJob"}
	gkB := schema.GroupKind{Group: "kubeflow.org", Kind: "BJob"}
	var predCalls atomic.Int32
	counted := predicate.Funcs{UpdateFunc: func(ctrlevent.UpdateEvent) bool { predCalls.Add(1); return true }}

	type route struct {
		gk    schema.GroupKind
		h     handler.EventHandler
		preds []predicate.Predicate
	}
	// Per kind: its controller (enqueues the controlling job) and its
	// pod-tracking controller (enqueues the pod).
	routes := []route{
		{gkA, enqueueController(gkA, 0), nil},
		{gkA, &handler.EnqueueRequestForObject{}, nil},
		{gkB, enqueueController(gkB, 0), []predicate.Predicate{counted}},
		{gkB, &handler.EnqueueRequestForObject{}, nil},
	}
	var sources []source.SyncingSource
	for _, r := range routes {
		s, err := events.Source(childPods, &corev1.Pod{}, r.gk, r.h, r.preds...)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queues := make([]workqueue.TypedRateLimitingInterface[reconcile.Request], len(routes))
	for i, s := range sources {
		if got := informer.handlers.Load(); got != 0 {
			t.Fatalf("%d handlers on the informer before all %d controllers started (%d did)", got, len(sources), i)
		}
		queues[i] = newQueue()
		defer queues[i].ShutDown()
		if err := s.Start(ctx, queues[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sources {
		syncCtx, done := context.WithTimeout(ctx, 10*time.Second)
		if err := s.WaitForSync(syncCtx); err != nil {
			t.Fatal(err)
		}
		done()
	}
	if got := informer.handlers.Load(); got != 1 {
		t.Fatalf("handlers on the pod informer = %d, want 1", got)
	}
	if _, err := events.Source(childPods, &corev1.Pod{}, gkA, &handler.EnqueueRequestForObject{}); err == nil {
		t.Error("a source taken after the controllers started was accepted; it would never see an event")
	}

	informer.Add(podOf("a-0", "AJob", "job-a"))
	informer.Add(podOf("orphan", "", ""))
	informer.Add(podOf("other", "Deployment", "web"))
	informer.Update(podOf("a-1", "AJob", "job-a"), podOf("a-1", "AJob", "job-a"))
	if got := predCalls.Load(); got != 0 {
		t.Errorf("BJob's predicate ran %d times for pods of AJob", got)
	}
	// A pod whose controller changed from AJob to BJob concerns both.
	informer.Update(podOf("moved", "AJob", "job-a"), podOf("moved", "BJob", "job-b"))
	if got := predCalls.Load(); got != 1 {
		t.Errorf("BJob's predicate ran %d times for the pod moved to it, want 1", got)
	}
	want := [][]string{
		{"job-a"},               // AJob's controller: its pods, and the one moved away
		{"a-0", "a-1", "moved"}, // AJob's pod tracking
		{"job-b"},               // BJob's controller: the pod moved to it
		{"moved"},               // BJob's pod tracking
	}
	for i, q := range queues {
		if got := drain(q); !slices.Equal(got, want[i]) {
			t.Errorf("route %d (%s) got %v, want %v", i, routes[i].gk.Kind, got, want[i])
		}
	}
}

// A controller whose cache never syncs reports it, naming the feed.
func TestChildEventsWaitForSyncTimesOut(t *testing.T) {
	fakeCache := &informertest.FakeInformers{InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{
		corev1.SchemeGroupVersion.WithKind("Pod"): controllertest.NewFakeInformer(),
	}}
	events := NewChildEvents(fakeCache)
	gk := schema.GroupKind{Group: "kubeflow.org", Kind: "AJob"}
	s, err := events.Source(childPods, &corev1.Pod{}, gk, &handler.EnqueueRequestForObject{})
	if err != nil {
		t.Fatal(err)
	}
	// A second route that never starts: the informer's handler waits for it.
	if _, err := events.Source(childPods, &corev1.Pod{}, gk, &handler.EnqueueRequestForObject{}); err != nil {
		t.Fatal(err)
	}
	q := newQueue()
	defer q.ShutDown()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitForSync(ctx); err == nil {
		t.Error("WaitForSync returned nil while a route had not started")
	}
}
