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
)

// bigJob creates one PyTorchJob of 1 master + workers workers and measures
// until all its pods and services exist, it is Running and Succeeded.
func bigJob(workers int) scenario {
	return scenario{name: fmt.Sprintf("bigjob-%d", workers+1), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		replicas := workers + 1
		res.Jobs, res.Pods = 1, replicas
		job := jobTemplate("big", ns, int32(workers), e.sizes.podRuntime)
		keys := []types.NamespacedName{{Namespace: ns, Name: job.Name}}

		start := time.Now()
		if err := e.createJob(ctx, job); err != nil {
			return err
		}
		waitErr := e.waitJobs(ctx, keys, jobGoal{pods: replicas, services: replicas, running: true, succeeded: true},
			e.sizes.podRuntime+time.Minute+time.Duration(replicas)*200*time.Millisecond)
		st := e.jobStats(keys)
		allPods := sinceSeconds(start, st.lastPod)
		res.creationFrom, res.creationTo = start, latest(st.lastPod, st.lastService)
		res.Metrics = []Metric{
			{"all pods created", allPods, "s"},
			{"all services created", sinceSeconds(start, st.lastService), "s"},
			{"all pods and services created", max(allPods, sinceSeconds(start, st.lastService)), "s"},
			{"job Running", sinceSeconds(start, st.lastRunning), "s"},
			{"job Succeeded", sinceSeconds(start, st.lastOK), "s"},
		}
		if allPods > 0 {
			res.Metrics = append(res.Metrics, Metric{"pod creation rate", float64(replicas) / allPods, "pods/s"})
		}
		return waitErr
	}}
}
