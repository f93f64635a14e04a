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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ChildEvents hands each event of a shared child informer (pods, Services)
// to the controllers of the one job kind that controls the child, through
// a single handler on the informer. A watch per controller meant a handler
// per controller on the same informer: every pod event woke twelve
// handler goroutines (each kind's controller and pod-tracking controller),
// eleven of them to drop it. One ChildEvents serves a manager; each
// controller takes a Source from it per child type.
type ChildEvents struct {
	cache cache.Cache
	mu    sync.Mutex
	feeds map[string]*childFeed
}

// The feeds' names.
const (
	childPods     = "pods"
	childServices = "services"
)

// NewChildEvents is the child event fan-out over c's informers.
func NewChildEvents(c cache.Cache) *ChildEvents {
	return &ChildEvents{cache: c, feeds: map[string]*childFeed{}}
}

// childFeed is one child type's informer handler and the routes it feeds.
// Routes are added while controllers are set up; the informer handler is
// added once every route's controller has started (has its queue), so that
// no event, the initial list's included, finds a route without one. After
// that the routes are only read.
type childFeed struct {
	name    string
	obj     client.Object
	byKind  map[string][]*childRoute // by the controlling job's kind
	pending int                      // routes whose controller has not started
	started bool
	synced  chan struct{}
	syncErr error
}

// childRoute is one controller's share of a feed: the children whose
// controller is a job of gk, passed through preds to handler with the
// controller's queue.
type childRoute struct {
	feed    *childFeed
	gk      schema.GroupKind
	preds   []predicate.Predicate
	handler handler.EventHandler
	queue   workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// Source is the source of the events of the children of type obj (name
// names the type, e.g. "pods") that a job of kind gk controls, for one
// controller: each event that passes preds goes to h with that
// controller's queue. Sources must be taken before the manager starts.
func (c *ChildEvents) Source(name string, obj client.Object, gk schema.GroupKind, h handler.EventHandler, preds ...predicate.Predicate) (source.SyncingSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.feeds[name]
	if f == nil {
		f = &childFeed{name: name, obj: obj, byKind: map[string][]*childRoute{}, synced: make(chan struct{})}
		c.feeds[name] = f
	}
	if f.started {
		return nil, fmt.Errorf("child events of %s: a source added after the controllers started", name)
	}
	rt := &childRoute{feed: f, gk: gk, preds: preds, handler: h}
	f.byKind[gk.Kind] = append(f.byKind[gk.Kind], rt)
	f.pending++
	return &childSource{events: c, route: rt}, nil
}

// childSource is a controller's Source of one feed.
type childSource struct {
	events *ChildEvents
	route  *childRoute
}

var _ source.SyncingSource = (*childSource)(nil)

func (s *childSource) String() string {
	return fmt.Sprintf("child events: %s of %s", s.route.feed.name, s.route.gk)
}

// Start records the controller's queue; the last route of the feed to
// start adds the feed's one handler to the informer.
func (s *childSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	c, f := s.events, s.route.feed
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.route.queue != nil {
		return errors.New(s.String() + ": started twice")
	}
	s.route.queue = q
	f.pending--
	if f.pending > 0 {
		return nil
	}
	f.started = true
	// A Kind source: it brings controller-runtime's handling of the
	// informer (the initial list, tombstones of deletes missed while the
	// watch was broken, typed events) and its sync. The queue it is given
	// is unused: routeHandler picks each event's queue.
	kind := source.Kind(c.cache, f.obj, handler.EventHandler(routeHandler{f}))
	if err := kind.Start(ctx, q); err != nil {
		return err
	}
	go func() {
		f.syncErr = kind.WaitForSync(ctx)
		close(f.synced)
	}()
	return nil
}

// WaitForSync returns once the feed's informer has synced and its
// handler has seen the initial list.
func (s *childSource) WaitForSync(ctx context.Context) error {
	f := s.route.feed
	select {
	case <-f.synced:
		return f.syncErr
	case <-ctx.Done():
		return fmt.Errorf("%s: %w (routes still waiting for their controller: %d)", s.String(), ctx.Err(), f.waiting(s.events))
	}
}

func (f *childFeed) waiting(c *ChildEvents) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return f.pending
}

// routes are the routes for the job kinds controlling objs (both sides of
// an update: a child whose controller changed concerns both jobs), each
// once.
func (f *childFeed) routes(objs ...client.Object) []*childRoute {
	var out []*childRoute
	for _, o := range objs {
		ref := metav1.GetControllerOfNoCopy(o)
		if ref == nil {
			continue
		}
		group := "" // the core group has bare versions ("v1")
		if g, _, found := strings.Cut(ref.APIVersion, "/"); found {
			group = g
		}
		for _, rt := range f.byKind[ref.Kind] {
			if rt.gk.Group == group && !slices.Contains(out, rt) {
				out = append(out, rt)
			}
		}
	}
	return out
}

// routeHandler hands each event to the routes of its child's controller.
type routeHandler struct{ f *childFeed }

func (h routeHandler) Create(ctx context.Context, e ctrlevent.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	for _, rt := range h.f.routes(e.Object) {
		if passes(rt.preds, func(p predicate.Predicate) bool { return p.Create(e) }) {
			rt.handler.Create(ctx, e, rt.queue)
		}
	}
}

func (h routeHandler) Update(ctx context.Context, e ctrlevent.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	for _, rt := range h.f.routes(e.ObjectOld, e.ObjectNew) {
		if passes(rt.preds, func(p predicate.Predicate) bool { return p.Update(e) }) {
			rt.handler.Update(ctx, e, rt.queue)
		}
	}
}

func (h routeHandler) Delete(ctx context.Context, e ctrlevent.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	for _, rt := range h.f.routes(e.Object) {
		if passes(rt.preds, func(p predicate.Predicate) bool { return p.Delete(e) }) {
			rt.handler.Delete(ctx, e, rt.queue)
		}
	}
}

func (h routeHandler) Generic(ctx context.Context, e ctrlevent.GenericEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	for _, rt := range h.f.routes(e.Object) {
		if passes(rt.preds, func(p predicate.Predicate) bool { return p.Generic(e) }) {
			rt.handler.Generic(ctx, e, rt.queue)
		}
	}
}

// passes evaluates the predicates in order, stopping at the first that
// drops the event, as controller-runtime's own event handler does.
func passes(preds []predicate.Predicate, eval func(predicate.Predicate) bool) bool {
	for _, p := range preds {
		if !eval(p) {
			return false
		}
	}
	return true
}
