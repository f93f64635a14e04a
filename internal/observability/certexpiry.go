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

package observability

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

var certExpiryDesc = prometheus.NewDesc("training_operator_webhook_certificate_expiry_timestamp_seconds",
	"Expiry (Unix time) of the webhook serving certificate the operator serves, read from its files at scrape time",
	nil, nil)

// CertExpiry is a prometheus.Collector of the serving certificate's expiry.
// Every replica reports it: each serves admission with its own files.
type CertExpiry struct {
	mu       sync.Mutex
	notAfter func() (time.Time, bool, error)
	serving  int // counts Serve calls: only the newest one clears
}

// Serve reports notAfter's answer until ctx ends; a later Serve replaces an
// earlier one.
func (c *CertExpiry) Serve(ctx context.Context, notAfter func() (time.Time, bool, error)) {
	c.mu.Lock()
	c.serving++
	mine := c.serving
	c.notAfter = notAfter
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	if c.serving == mine {
		c.notAfter = nil
	}
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *CertExpiry) Describe(ch chan<- *prometheus.Desc) { ch <- certExpiryDesc }

// Collect implements prometheus.Collector.
func (c *CertExpiry) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	f := c.notAfter
	c.mu.Unlock()
	if f == nil {
		return
	}
	t, ok, err := f()
	if err != nil {
		log.Log.WithName("metrics").Error(err, "reading the serving certificate's expiry")
	}
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(certExpiryDesc, prometheus.GaugeValue, float64(t.Unix()))
}
