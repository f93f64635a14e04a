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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// requestCost sends n requests of each kind an operator sends over a job's
// life, one kind at a time, and measures what each kind costs the machine:
// the CPU of kube-apiserver plus etcd, and of every process, per request.
// It answers which of the operator's requests are worth saving: a status
// patch or an event against a pod or Service create. The jobs are parked
// (runPolicy.managedBy: MultiKueue) so the operator only serves their
// webhooks and watches them, as it would any job.
func requestCost(n int) scenario {
	return scenario{name: fmt.Sprintf("request-cost-%d", n), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		jobs := make([]*kubeflowv1.PyTorchJob, n)
		for i := range jobs {
			jobs[i] = jobTemplate(fmt.Sprintf("job-%05d", i), ns, 0, e.sizes.podRuntime)
			jobs[i].Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController)
		}
		var children []client.Object // a Service and a pod per job
		// Pods no scheduler picks up, for comparing the two ways of creating a
		// pod without their scheduling in the measure: half of them created
		// with the whole pod in the reply (controller-runtime's client), half
		// with metadata only (the operator's), in the order A B B A so that
		// neither runs only on the younger cluster.
		var parked [2][]client.Object
		createParked := func(c client.Client, set, from int) func(i int) error {
			return func(i int) error { return c.Create(ctx, parked[set][from+i]) }
		}
		half := n / 2
		const wholeReply, metaReply = "create Pod, unscheduled, whole pod in the reply", "create Pod, unscheduled, metadata-only reply"
		steps := []struct {
			name string
			n    int
			do   func(i int) error
		}{
			{"create PyTorchJob (2 webhooks)", n, func(i int) error { return e.rawClient.Create(ctx, jobs[i]) }},
			{"patch PyTorchJob status", n, func(i int) error {
				patched := jobs[i].DeepCopy()
				now := metav1.Now()
				patched.Status.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobCreated, Status: corev1.ConditionTrue,
					Reason: "PyTorchJobCreated", Message: "PyTorchJob " + jobs[i].Name + " is created.", LastUpdateTime: now, LastTransitionTime: now}}
				patched.Status.StartTime = &now
				return e.rawClient.Status().Patch(ctx, patched, client.MergeFromWithOptions(jobs[i], client.MergeFromWithOptimisticLock{}))
			}},
			{"create Event", n, func(i int) error {
				return e.rawClient.Create(ctx, benchEvent(jobs[i]))
			}},
			{"create Service", n, func(i int) error { return e.rawClient.Create(ctx, children[2*i]) }},
			{wholeReply, half, createParked(e.rawClient, 0, 0)},
			{metaReply, half, createParked(e.metaCreateClient, 1, 0)},
			{metaReply, n - half, createParked(e.metaCreateClient, 1, half)},
			{wholeReply, n - half, createParked(e.rawClient, 0, half)},
			// Last: a pod's scheduling and run continue after its create.
			{"create Pod", n, func(i int) error { return e.rawClient.Create(ctx, children[2*i+1]) }},
		}
		type sum struct {
			n                  int
			took               time.Duration
			apiserverEtcd, all float64
		}
		sums := map[string]*sum{}
		var order []string
		for _, step := range steps {
			if step.name == "create Service" {
				var err error
				if children, err = rawObjects(jobs); err != nil {
					return err
				}
				parked = unscheduledPods(children)
			}
			before := snapshotCPU(e.pids())
			start := time.Now()
			if err := parallelDo(step.n, createParallelism, step.do); err != nil {
				return fmt.Errorf("%s: %w", step.name, err)
			}
			took := time.Since(start)
			// The writes' trailing work (watch fan-out, controllers) belongs to them.
			time.Sleep(time.Second)
			used := snapshotCPU(e.pids()).since(before)
			s := sums[step.name]
			if s == nil {
				s = &sum{}
				sums[step.name] = s
				order = append(order, step.name)
			}
			s.n += step.n
			s.took += took
			s.apiserverEtcd += used["kube-apiserver"] + used["etcd"]
			for _, v := range used {
				s.all += v
			}
		}
		for _, name := range order {
			s := sums[name]
			res.Metrics = append(res.Metrics,
				Metric{name + ": requests/s", float64(s.n) / s.took.Seconds(), "req/s"},
				Metric{name + ": kube-apiserver+etcd CPU / request", 1000 * s.apiserverEtcd / float64(s.n), "ms"},
				Metric{name + ": all processes CPU / request", 1000 * s.all / float64(s.n), "ms"})
		}
		return nil
	}}
}

// unscheduledPods are two copies of children's pods, renamed apart, that
// name a scheduler nobody runs: created, they stay Pending untouched.
func unscheduledPods(children []client.Object) (sets [2][]client.Object) {
	for _, obj := range children {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}
		for set, suffix := range []string{"-w", "-m"} {
			p := pod.DeepCopy()
			p.Name += suffix
			p.Spec.Hostname = ""
			p.Spec.SchedulerName = "bench-no-scheduler"
			sets[set] = append(sets[set], p)
		}
	}
	return sets
}

// benchEvent is an event like the operator's aggregated SuccessfulCreatePod.
func benchEvent(job *kubeflowv1.PyTorchJob) *corev1.Event {
	now := metav1.Now()
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + ".bench", Namespace: job.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "PyTorchJob", APIVersion: kubeflowv1.GroupVersion.String(),
			Namespace: job.Namespace, Name: job.Name, UID: job.UID, ResourceVersion: job.ResourceVersion},
		Reason: "SuccessfulCreatePod", Message: "Created 4 pods: " + job.Name + "-master-0, ...",
		Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "bench"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
}
