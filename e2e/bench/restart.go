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
	"log"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// The restart scenario's figures that have targets.
const (
	restartReadyMetric       = "ready after restart (process start → /readyz 200)"
	restartDoneWritesMetric  = "status writes on unchanged finished jobs"
	restartLiveWritesMetric  = "status writes on unchanged running jobs"
	restartDoneEventsMetric  = "Events on unchanged finished jobs (sum of count)"
	restartLiveEventsMetric  = "Events on unchanged running jobs (sum of count)"
	restartNewJobsMetric     = "new jobs after readiness: create→all pods"
	restartListFloorMetric   = "plain client: list the jobs, pods and Services in parallel (readiness's floor)"
	restartObserve           = 20 * time.Second // after readiness
	restartNewJobs           = 20
	restartQuietBeforeStop   = 5 * time.Second
	restartLiveJobPodRuntime = 24 * time.Hour
)

// restart (restart-<finished>) fills the cluster with finished 1+3 jobs
// (their pods Succeeded and kept) and running ones (pods that run for a
// day), then restarts the operator: SIGTERM, wait for the exit, start the
// same binary with the same arguments. It measures the time from the new
// process's start to /readyz 200; what the new process writes, from its
// start until restartObserve after readiness, for the jobs that did not
// change while it was down (status writes from the job watch, Events about
// them: new objects and higher counts), for finished and running jobs
// apart; its CPU and peak RSS over the same span; and, for restartNewJobs
// jobs created one after the other right after readiness, create → all 4
// pods.
func restart(finished, running int) scenario {
	return scenario{name: fmt.Sprintf("restart-%d", finished), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		begin := time.Now()
		doneKeys, err := e.createJobs(ctx, pinnedJobs(ns, "done", finished, time.Second, e.sizes.nodes), createParallelism)
		if err != nil {
			return err
		}
		liveKeys, err := e.createJobs(ctx, pinnedJobs(ns, "live", running, restartLiveJobPodRuntime, e.sizes.nodes), createParallelism)
		if err != nil {
			return err
		}
		if err := e.waitJobs(ctx, doneKeys, jobGoal{pods: 4, services: 4, succeeded: true}, time.Hour); err != nil {
			return err
		}
		if err := e.waitJobs(ctx, liveKeys, jobGoal{pods: 4, services: 4, running: true}, time.Hour); err != nil {
			return err
		}
		time.Sleep(restartQuietBeforeStop) // the operator's last writes for them
		res.Metrics = append(res.Metrics,
			Metric{"population: finished + running jobs ready", time.Since(begin).Seconds(), "s"},
			Metric{"finished jobs", float64(len(doneKeys)), ""},
			Metric{"running jobs", float64(len(liveKeys)), ""})

		floor, err := listFloor(ctx, e.rawClient, ns)
		if err != nil {
			return err
		}
		res.Metrics = append(res.Metrics, Metric{restartListFloorMetric, floor.Seconds(), "s"})

		log.Printf("%s: restarting the operator", res.Scenario)
		started, ready, err := e.operator.restart(ctx)
		if err != nil {
			return err
		}
		readyAt := started.Add(ready)
		res.Metrics = append(res.Metrics, Metric{restartReadyMetric, ready.Seconds(), "s"})

		newKeys := make([]types.NamespacedName, restartNewJobs)
		for i := range newKeys {
			job := jobTemplate(fmt.Sprintf("new-%05d", i), ns, 3, e.sizes.podRuntime)
			newKeys[i] = types.NamespacedName{Namespace: ns, Name: job.Name}
			if err := e.createJob(ctx, job); err != nil {
				return err
			}
		}
		newErr := e.waitJobs(ctx, newKeys, jobGoal{pods: 4}, 2*time.Minute)
		if wait := time.Until(readyAt.Add(restartObserve)); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		end := time.Now()
		cpu, _ := e.operator.cpuSeconds() // the new process's, from its start
		_, peak, _ := e.operator.memory() // VmHWM of the new process
		done := e.tracker.activity(doneKeys, started, end)
		live := e.tracker.activity(liveKeys, started, end)
		// The watches' cross-check: the new jobs' writes are seen.
		fresh := e.tracker.activity(newKeys, started, end)
		res.Metrics = append(res.Metrics,
			Metric{"measured span (process start → readiness + " + restartObserve.String() + ")", end.Sub(started).Seconds(), "s"},
			Metric{restartDoneWritesMetric, float64(done.StatusWrites), ""},
			Metric{restartLiveWritesMetric, float64(live.StatusWrites), ""},
			Metric{restartDoneEventsMetric, float64(done.EventCount), ""},
			Metric{restartLiveEventsMetric, float64(live.EventCount), ""},
			Metric{"new Event objects on unchanged finished jobs", float64(done.EventObjects), ""},
			Metric{"new Event objects on unchanged running jobs", float64(live.EventObjects), ""},
			Metric{"status writes on the new jobs (mean)", float64(fresh.StatusWrites) / float64(len(newKeys)), ""},
			Metric{"Events on the new jobs (mean)", float64(fresh.EventCount) / float64(len(newKeys)), ""},
			Metric{"operator CPU over the span", cpu, "s"},
			Metric{"operator peak RSS over the span", peak, "MiB"},
		)
		res.Metrics = append(res.Metrics, latencyMetrics(restartNewJobsMetric, e.jobStats(newKeys).toPods)...)
		// What the restart's listing cost each process, the apiserver's above
		// all: it is what runs out first on this machine. Taken now, when the
		// sampler has a sample after readiness too.
		if cpu, span := e.cpu.between(started, readyAt); cpu != nil {
			res.Metrics = append(res.Metrics, (&PhaseCPU{Seconds: span.Seconds(), CPUSeconds: cpu}).metrics("start until ready")...)
		}
		return newErr
	}}
}

// listFloor is how long a plain client takes to list what a starting
// operator's caches must hold (the scenario's jobs, and the pods and
// Services carrying the operator's label), the three in parallel and in
// pages of 500 as informers do: readiness cannot come sooner on this
// control plane. Measured with the old operator idle, before its restart.
func listFloor(ctx context.Context, c client.Client, ns string) (time.Duration, error) {
	begin := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	for _, list := range []client.ObjectList{&kubeflowv1.PyTorchJobList{}, &corev1.PodList{}, &corev1.ServiceList{}} {
		g.Go(func() error {
			opts := []client.ListOption{client.InNamespace(ns), client.Limit(500)}
			if _, isJobs := list.(*kubeflowv1.PyTorchJobList); !isJobs {
				opts = append(opts, client.HasLabels{kubeflowv1.OperatorNameLabel})
			}
			for cont := ""; ; {
				if err := c.List(ctx, list, append(opts, client.Continue(cont))...); err != nil {
					return err
				}
				if cont = list.GetContinue(); cont == "" {
					return nil
				}
			}
		})
	}
	err := g.Wait()
	return time.Since(begin), err
}
