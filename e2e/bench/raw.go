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

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/pytorch"
)

// raw creates, with a plain client and createParallelism requests in flight,
// exactly the pods and headless Services our operator would create for jobs
// jobs of replicas replicas each (built by the engine's own pure builders,
// owned by real jobs), to measure what this control plane (apiserver,
// scheduler, garbage collector, KWOK) can do at best with the same objects in
// the same run. The jobs are parked with runPolicy.managedBy set to
// MultiKueue, so the operator leaves them alone, and the operator process is
// stopped while the children are created and run.
func raw(jobs, replicas int) scenario {
	return scenario{name: fmt.Sprintf("raw-client-%dx%d", jobs, replicas), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		// Untimed: the owners must exist (with UIDs) before their children.
		objs, err := parkedChildren(ctx, e, ns, jobs, replicas)
		if err != nil {
			return err
		}
		want := jobs * replicas
		res.Pods = want

		// The operator would only watch these children (the owners are not
		// its to reconcile); stopped, it leaves the two cores to the
		// control plane, so this is the limit without any operator.
		if err := e.operator.pause(); err != nil {
			return err
		}
		defer func() { _ = e.operator.resume() }()
		start := time.Now()
		err = parallelDo(len(objs), createParallelism, func(i int) error {
			return e.rawClient.Create(ctx, objs[i])
		})
		sent := time.Since(start)
		if err != nil {
			return err
		}
		waitErr := waitFor(ctx, e.sizes.podRuntime+2*time.Minute, "raw pods", func() (bool, string) {
			t := e.tracker.nsIn(ns)
			return t.pods == want && t.services == want && t.done == want,
				fmt.Sprintf("pods %d, services %d, running %d, done %d of %d", t.pods, t.services, t.running, t.done, want)
		})
		t := e.tracker.nsIn(ns)
		res.creationFrom, res.creationTo = start, latest(t.lastPod, t.lastService)
		res.Metrics = []Metric{
			{"create requests sent", sent.Seconds(), "s"},
			{"create rate (pods+services)", float64(2*want) / sent.Seconds(), "obj/s"},
			{"all pods created", sinceSeconds(start, t.lastPod), "s"},
			{"all services created", sinceSeconds(start, t.lastService), "s"},
			{"all pods and services created", max(sinceSeconds(start, t.lastPod), sinceSeconds(start, t.lastService)), "s"},
			{"all pods Running", sinceSeconds(start, t.lastRunning), "s"},
			{"all pods Succeeded", sinceSeconds(start, t.lastDone), "s"},
		}
		return waitErr
	}}
}

// parkedChildren creates jobs 1+(replicas-1) PyTorchJobs in ns, parked with
// runPolicy.managedBy set to MultiKueue so the operator leaves them alone,
// and returns the pods and Services the operator would build for them, not
// yet created.
func parkedChildren(ctx context.Context, e *env, ns string, jobs, replicas int) ([]client.Object, error) {
	owners := make([]*kubeflowv1.PyTorchJob, jobs)
	for j := range owners {
		owners[j] = jobTemplate(fmt.Sprintf("job-%05d", j), ns, int32(replicas-1), e.sizes.podRuntime)
		owners[j].Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController)
	}
	if err := parallelDo(len(owners), createParallelism, func(i int) error {
		return e.client.Create(ctx, owners[i])
	}); err != nil {
		return nil, err
	}
	return rawObjects(owners)
}

// rawObjects are the pods and Services the operator builds for the owners,
// in the order it sends them (each replica's Service, then its pod).
func rawObjects(owners []*kubeflowv1.PyTorchJob) ([]client.Object, error) {
	fw, err := pytorch.New(pytorch.Options{})
	if err != nil {
		return nil, err
	}
	var objs []client.Object
	for _, job := range owners {
		job.ApplyDefaults()
		specs := job.ReplicaSpecs()
		for _, rt := range fw.ReplicaTypes(job) {
			for i := range int(ptr.Deref(specs[rt].Replicas, 1)) {
				pod, _, err := engine.BuildPod(fw, job, rt, i, specs[rt])
				if err != nil {
					return nil, err
				}
				objs = append(objs, engine.BuildService(fw, job, rt, i, specs[rt]), pod)
			}
		}
	}
	return objs, nil
}
