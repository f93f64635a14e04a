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

	"k8s.io/apimachinery/pkg/types"
)

// steady creates 4-replica PyTorchJobs at a constant rate for a duration
// (open loop: arrivals do not wait for earlier creates) and measures the
// per-job latencies.
func steady(rate float64, d time.Duration) scenario {
	name := fmt.Sprintf("steady-%gps-%s", rate, d)
	return scenario{name: name, run: func(ctx context.Context, e *env, res *Result) error {
		ns := fmt.Sprintf("steady-%gps", rate)
		res.namespace = ns
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		n := int(rate * d.Seconds())
		res.Jobs, res.Pods = n, 4*n
		interval := time.Duration(float64(time.Second) / rate)

		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			errs    []error
			keys    = make([]types.NamespacedName, n)
			start   = time.Now()
			ticker  = time.NewTicker(interval)
			lastArr time.Time
		)
		for i := range n {
			if i > 0 {
				select {
				case <-ticker.C:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				break
			}
			job := jobTemplate(fmt.Sprintf("job-%05d", i), ns, 3, e.sizes.podRuntime)
			keys[i] = types.NamespacedName{Namespace: ns, Name: job.Name}
			lastArr = time.Now()
			wg.Go(func() {
				if err := e.createJob(ctx, job); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		ticker.Stop()
		wg.Wait()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(errs) > 0 {
			return fmt.Errorf("%d creates failed, first: %w", len(errs), errs[0])
		}
		waitErr := e.waitJobs(ctx, keys, jobGoal{pods: 4, services: 4, running: true, succeeded: true},
			e.sizes.podRuntime+2*time.Minute+time.Duration(n)*500*time.Millisecond)
		st := e.jobStats(keys)
		if n > 1 {
			res.Metrics = append(res.Metrics, Metric{"arrival rate achieved", float64(n-1) / lastArr.Sub(start).Seconds(), "jobs/s"})
		}
		res.Metrics = append(res.Metrics, Metric{"last job Succeeded after last arrival", sinceSeconds(lastArr, st.lastOK), "s"})
		res.Metrics = append(res.Metrics, latencyMetrics("create→all pods", st.toPods)...)
		res.Metrics = append(res.Metrics, latencyMetrics("create→Running", st.toRunning)...)
		res.Metrics = append(res.Metrics, latencyMetrics("create→Succeeded", st.toSucceeded)...)
		return waitErr
	}}
}
