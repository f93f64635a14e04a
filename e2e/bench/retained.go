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

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
)

// retained (--full) leaves n finished 4-replica jobs with their pods in the
// cluster (the default cleanPodPolicy keeps them) and reports the operator's
// resident memory once they have all Succeeded and the operator is idle.
func retained(n int) scenario {
	return scenario{name: fmt.Sprintf("retained-%d", n), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		// Short-lived pods: this scenario measures memory.
		jobs := pinnedJobs(ns, "job", n, time.Second, e.sizes.nodes)
		res.Jobs, res.Pods = n, 4*n
		start := time.Now()
		keys, err := e.createJobs(ctx, jobs, createParallelism)
		if err != nil {
			return err
		}
		waitErr := e.waitJobs(ctx, keys, jobGoal{pods: 4, services: 4, succeeded: true}, time.Hour)
		st := e.jobStats(keys)
		time.Sleep(10 * time.Second) // let the operator go idle
		rss, _, _ := e.operator.memory()
		res.Metrics = []Metric{
			{"all jobs Succeeded", sinceSeconds(start, st.lastOK), "s"},
			{"operator RSS with all jobs kept", rss, "MiB"},
		}
		return waitErr
	}}
}

// pinnedJobs are n PyTorchJobs of 1 master + 3 workers named <prefix>-00000,
// ... whose pods run for podRuntime on nodes assigned round-robin: 20,000
// pods through the scheduler of this 2-core control plane would take hours.
func pinnedJobs(ns, prefix string, n int, podRuntime time.Duration, nodes int) []*kubeflowv1.PyTorchJob {
	jobs := make([]*kubeflowv1.PyTorchJob, n)
	for i := range jobs {
		jobs[i] = jobTemplate(fmt.Sprintf("%s-%05d", prefix, i), ns, 3, podRuntime)
		node := fmt.Sprintf("%s%d", cluster.NodeNamePrefix, i%nodes)
		for _, rs := range jobs[i].Spec.PyTorchReplicaSpecs {
			rs.Template.Spec.NodeName = node
		}
	}
	return jobs
}
