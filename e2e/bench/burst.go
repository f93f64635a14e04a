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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// burst creates n PyTorchJobs of 1 master + 3 workers at once and measures
// until all pods exist, all jobs are Running and all have Succeeded.
func burst(n int) scenario { return burstOf(fmt.Sprintf("burst-%d", n), n, nil) }

// trackedBurstPrefix names the tracked bursts; a prefix the plain bursts'
// targets (burst-<n>) do not parse.
const trackedBurstPrefix = "burst-tracked-"

// trackedBurstBackoffLimit is the tracked jobs' runPolicy.backoffLimit.
const trackedBurstBackoffLimit = 3

// trackedBurst (burst-tracked-<n>) is burst with runPolicy.backoffLimit
// set: a tracked job, whose pods carry the pod-tracking finalizer that the
// operator removes with one PATCH per pod once the pod has succeeded. Next
// to burst-<n> in the report, it shows what failure accounting costs a job.
func trackedBurst(n int) scenario {
	return burstOf(fmt.Sprintf("%s%d", trackedBurstPrefix, n), n, func(job *kubeflowv1.PyTorchJob) {
		job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](trackedBurstBackoffLimit)
	})
}

// burstOf is the burst scenario name of n jobs, each changed by mutate
// (if not nil) before it is created.
func burstOf(name string, n int, mutate func(*kubeflowv1.PyTorchJob)) scenario {
	return scenario{name: name, run: func(ctx context.Context, e *env, res *Result) error {
		if err := e.createNamespace(ctx, res.Scenario); err != nil {
			return err
		}
		return burstJobs(ctx, e, res, n, mutate)
	}}
}

// burstJobs creates n 1+3 PyTorchJobs, each changed by mutate (if not nil),
// in the scenario's namespace at once and measures until all pods exist,
// all jobs are Running and all have Succeeded.
func burstJobs(ctx context.Context, e *env, res *Result, n int, mutate func(*kubeflowv1.PyTorchJob)) error {
	ns := res.Scenario
	jobs := make([]*kubeflowv1.PyTorchJob, n)
	for i := range jobs {
		jobs[i] = jobTemplate(fmt.Sprintf("job-%05d", i), ns, 3, e.sizes.podRuntime)
		if mutate != nil {
			mutate(jobs[i])
		}
	}
	res.Jobs, res.Pods = n, 4*n

	lease, err := e.watchLease(ctx, operatorNamespace)
	if err != nil {
		return err
	}
	hooksBefore := e.operator.webhookHistogram(ctx)
	start := time.Now()
	keys := make([]types.NamespacedName, n)
	creates := make([]time.Duration, n)
	err = parallelDo(n, createParallelism, func(i int) error {
		keys[i] = client.ObjectKeyFromObject(jobs[i])
		t := time.Now()
		err := e.createJob(ctx, jobs[i])
		creates[i] = time.Since(t)
		return err
	})
	sent := time.Since(start)
	hooks := e.operator.webhookHistogram(ctx).since(hooksBefore)
	if err != nil {
		lease.intervals()
		return err
	}
	waitErr := e.waitJobs(ctx, keys, jobGoal{pods: 4, services: 4, running: true, succeeded: true},
		e.sizes.podRuntime+time.Minute+time.Duration(n)*time.Second)
	st := e.jobStats(keys)
	allPods := sinceSeconds(start, st.lastPod)
	res.creationFrom, res.creationTo = start, latest(st.lastPod, st.lastService)
	res.Metrics = []Metric{
		{"create requests sent", sent.Seconds(), "s"},
		{"all pods created", allPods, "s"},
		{"all services created", sinceSeconds(start, st.lastService), "s"},
		{"all pods and services created", max(allPods, sinceSeconds(start, st.lastService)), "s"},
		{"all jobs Running", sinceSeconds(start, st.lastRunning), "s"},
		{"all jobs Succeeded", sinceSeconds(start, st.lastOK), "s"},
	}
	if allPods > 0 {
		res.Metrics = append(res.Metrics, Metric{"pod creation rate", float64(4*n) / allPods, "pods/s"})
	}
	res.Metrics = append(res.Metrics, latencyMetrics("create→all pods", st.toPods)...)
	res.Metrics = append(res.Metrics, latencyMetrics("create→Running", st.toRunning)...)
	res.Metrics = append(res.Metrics, dutyMetrics(creates, hooks, lease.intervals())...)
	return waitErr
}
