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
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// What a burst costs the rest of the operator's duties: its admission
// webhooks answer every create (with failurePolicy Fail, a slow answer is a
// slow or refused create) and, with leader election (--leader-elect), its
// Lease must be renewed on time or the operator gives up leadership.

// operatorNamespace is the operator's namespace (MY_POD_NAMESPACE), where
// its Lease is.
const operatorNamespace = "default"

// webhookLatencyMetric is controller-runtime's histogram of the webhook
// server's request handling, per webhook path.
const webhookLatencyMetric = "controller_runtime_webhook_latency_seconds"

// histogram is the bucket counts (cumulative, by upper bound) of one
// Prometheus histogram summed over its label sets.
type histogram map[float64]float64

// webhookHistogram scrapes the operator's webhook latency histogram.
func (o *operator) webhookHistogram(ctx context.Context) histogram {
	var b strings.Builder
	if code, err := httpGet(ctx, "http://"+o.metricsAddr+"/metrics", &b); err != nil || code != 200 {
		return nil
	}
	return bucketsOf(b.String(), webhookLatencyMetric)
}

// bucketsOf sums the buckets of the histogram name in a metrics text.
func bucketsOf(text, name string) histogram {
	h := histogram{}
	for _, s := range parseMetrics(text) {
		if s.name != name+"_bucket" {
			continue
		}
		le, err := strconv.ParseFloat(s.labels["le"], 64)
		if err != nil {
			continue
		}
		h[le] += s.value
	}
	return h
}

// since is h minus an earlier scrape of the same histogram.
func (h histogram) since(before histogram) histogram {
	out := histogram{}
	for le, v := range h {
		out[le] = v - before[le]
	}
	return out
}

// quantile estimates the q-quantile as Prometheus' histogram_quantile does:
// linear within the bucket it falls in; NaN without observations. Above
// the largest finite bound it returns that bound.
func (h histogram) quantile(q float64) float64 {
	bounds := slices.Sorted(func(yield func(float64) bool) {
		for le := range h {
			if !yield(le) {
				return
			}
		}
	})
	if len(bounds) == 0 || h[math.Inf(1)] == 0 {
		return math.NaN()
	}
	rank := q * h[math.Inf(1)]
	prevBound, prevCount := 0.0, 0.0
	for _, le := range bounds {
		if h[le] >= rank {
			if math.IsInf(le, 1) {
				return prevBound
			}
			if h[le] == prevCount {
				return le
			}
			return prevBound + (le-prevBound)*(rank-prevCount)/(h[le]-prevCount)
		}
		prevBound, prevCount = le, h[le]
	}
	return prevBound
}

// count is the number of observations.
func (h histogram) count() float64 { return h[math.Inf(1)] }

// leaseWatch records each renewal of the operator's leader-election Lease
// (its spec.renewTime) from a watch, so it costs the apiserver no polling.
type leaseWatch struct {
	mu       sync.Mutex
	renewals []time.Time
	stop     context.CancelFunc
	done     chan struct{}
}

// watchLease watches the Lease the operator holds in ns under the default
// leader-election ID; without leader election none appears and no renewal
// is recorded.
func (e *env) watchLease(ctx context.Context, ns string) (*leaseWatch, error) {
	cs, err := kubernetes.NewForConfig(e.cluster.RESTConfig())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := cs.CoordinationV1().Leases(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", configv1alpha1.DefaultLeaderElectionID).String(),
	})
	if err != nil {
		cancel()
		return nil, err
	}
	l := &leaseWatch{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			lease, ok := ev.Object.(*coordinationv1.Lease)
			if !ok || lease.Spec.RenewTime == nil {
				continue
			}
			l.mu.Lock()
			if t := lease.Spec.RenewTime.Time; len(l.renewals) == 0 || !t.Equal(l.renewals[len(l.renewals)-1]) {
				l.renewals = append(l.renewals, t)
			}
			l.mu.Unlock()
		}
	}()
	return l, nil
}

// intervals stops the watch and returns the time between consecutive
// renewals.
func (l *leaseWatch) intervals() []time.Duration {
	l.stop()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(l.renewals); i++ {
		out = append(out, l.renewals[i].Sub(l.renewals[i-1]))
	}
	return out
}

// dutyMetrics are the admission and lease metrics of a scenario: the
// create requests' latency as the client saw it (both webhooks, then the
// write), the webhook server's own p99 from its histogram, and the Lease's
// renewal intervals (with leader election only).
func dutyMetrics(creates []time.Duration, webhook histogram, renewals []time.Duration) []Metric {
	out := latencyMetrics("create request (both webhooks and the write)", creates)
	if n := webhook.count(); n > 0 {
		out = append(out,
			Metric{"webhook requests served", n, "req"},
			Metric{"webhook latency p50 (histogram)", webhook.quantile(0.50), "s"},
			Metric{"webhook latency p99 (histogram)", webhook.quantile(0.99), "s"})
	}
	if len(renewals) > 0 {
		out = append(out, latencyMetrics("leader Lease renewal interval", renewals)...)
	}
	return out
}
