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
	"k8s.io/apimachinery/pkg/util/intstr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// raw creates the pods and headless Services of n 4-replica jobs directly
// with a plain client, createParallelism requests in flight, to measure what
// this control plane (apiserver, scheduler, KWOK) can do at best in the same
// run. The operator keeps running but has nothing to do; the API cost
// columns therefore show its idle traffic.
func raw(n int) scenario {
	return scenario{name: fmt.Sprintf("raw-client-%d", 4*n), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		pods, svcs := rawObjects(ns, n, e.sizes.podRuntime)
		res.Pods = len(pods)

		start := time.Now()
		err := parallelDo(len(pods)+len(svcs), createParallelism, func(i int) error {
			if i < len(pods) {
				return e.rawClient.Create(ctx, pods[i])
			}
			return e.rawClient.Create(ctx, svcs[i-len(pods)])
		})
		sent := time.Since(start)
		if err != nil {
			return err
		}
		want := len(pods)
		waitErr := waitFor(ctx, e.sizes.podRuntime+2*time.Minute, "raw pods", func() (bool, string) {
			t := e.tracker.nsIn(ns)
			return t.pods == want && t.services == want && t.done == want,
				fmt.Sprintf("pods %d, services %d, running %d, done %d of %d", t.pods, t.services, t.running, t.done, want)
		})
		t := e.tracker.nsIn(ns)
		res.Metrics = []Metric{
			{"create requests sent", sent.Seconds(), "s"},
			{"create rate (pods+services)", float64(2*want) / sent.Seconds(), "obj/s"},
			{"all pods created", sinceSeconds(start, t.lastPod), "s"},
			{"all services created", sinceSeconds(start, t.lastService), "s"},
			{"all pods Running", sinceSeconds(start, t.lastRunning), "s"},
			{"all pods Succeeded", sinceSeconds(start, t.lastDone), "s"},
		}
		return waitErr
	}}
}

// rawObjects are pods and headless Services shaped like the operator's for
// n jobs of 1 master + 3 workers (same template, labels and port).
func rawObjects(ns string, n int, podRuntime time.Duration) ([]*corev1.Pod, []*corev1.Service) {
	tmpl := jobTemplate("raw", ns, 0, podRuntime).Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster].Template
	var pods []*corev1.Pod
	var svcs []*corev1.Service
	for j := range n {
		for r := range 4 {
			name := fmt.Sprintf("job-%05d-%d", j, r)
			labels := map[string]string{kubeflowv1.JobNameLabel: fmt.Sprintf("job-%05d", j), "bench-replica": name}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: tmpl.Annotations},
				Spec:       *tmpl.Spec.DeepCopy(),
			}
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "pytorchjob-port", ContainerPort: 23456}}
			pods = append(pods, pod)
			svcs = append(svcs, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
				Spec: corev1.ServiceSpec{
					ClusterIP: corev1.ClusterIPNone,
					Selector:  labels,
					Ports:     []corev1.ServicePort{{Name: "pytorchjob-port", Port: 23456, TargetPort: intstr.FromInt32(23456)}},
				},
			})
		}
	}
	return pods, svcs
}
