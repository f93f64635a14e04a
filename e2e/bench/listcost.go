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
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/test/util"
)

// listCostRounds is how many times each way the pods are listed.
const listCostRounds = 3

// listCost (list-cost-<pods>) measures what an informer's first listing of
// pods costs the apiserver with gzip accepted (client-go's default) and
// without (the operator's clientConnection.disableCompression): the
// apiserver gzips a watch-list stream for a client that accepts it. The
// pods are the operator's own (built by its builders, owned by jobs parked
// with MultiKueue) and never scheduled, so nothing else changes meanwhile.
// Each round lists both ways, alternating which goes first; the figures are
// the medians.
func listCost(pods int) scenario {
	return scenario{name: fmt.Sprintf("list-cost-%d", pods), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		objs, err := parkedChildren(ctx, e, ns, (pods+3)/4, 4)
		if err != nil {
			return err
		}
		var podObjs []*corev1.Pod
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok && len(podObjs) < pods {
				p.Spec.SchedulerName = "list-cost-nobody" // stays Pending, untouched
				podObjs = append(podObjs, p)
			}
		}
		if err := parallelDo(len(podObjs), createParallelism, func(i int) error {
			return e.client.Create(ctx, podObjs[i])
		}); err != nil {
			return err
		}
		apiserverPID := e.cluster.PIDs()["kube-apiserver"]
		var cpu, took [2][]float64 // [0] gzip accepted, [1] uncompressed
		for r := range listCostRounds {
			for k := range 2 {
				i := (r + k) % 2 // alternates which way goes first
				uncompressed := i == 1
				before, err := processCPUSeconds(apiserverPID)
				if err != nil {
					return err
				}
				d, n, err := syncPods(ctx, e.cluster.RESTConfig(), ns, uncompressed)
				if err != nil {
					return err
				}
				after, err := processCPUSeconds(apiserverPID)
				if err != nil {
					return err
				}
				if n != len(podObjs) {
					return fmt.Errorf("listed %d pods, want %d", n, len(podObjs))
				}
				cpu[i], took[i] = append(cpu[i], after-before), append(took[i], d.Seconds())
			}
		}
		res.Pods = len(podObjs)
		for i, how := range []string{"gzip accepted", "uncompressed"} {
			res.Metrics = append(res.Metrics,
				Metric{"informer's first listing, " + how + ": kube-apiserver CPU (median)", medianOf(cpu[i]), "s"},
				Metric{"informer's first listing, " + how + ": time to sync (median)", medianOf(took[i]), "s"})
		}
		return nil
	}}
}

// syncPods starts an informer cache of ns's pods on a connection of its
// own and returns how long it took to sync and how many pods it holds.
func syncPods(ctx context.Context, base *rest.Config, ns string, uncompressed bool) (time.Duration, int, error) {
	cfg := rest.CopyConfig(base)
	cfg.DisableCompression = uncompressed
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext // not client-go's shared transport
	c, err := cache.New(cfg, cache.Options{Scheme: util.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}},
		DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	begin := time.Now()
	if _, err := c.GetInformer(ctx, &corev1.Pod{}, cache.BlockUntilSynced(false)); err != nil {
		return 0, 0, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return 0, 0, fmt.Errorf("pod cache of %s did not sync", ns)
	}
	took := time.Since(begin)
	var l corev1.PodList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return 0, 0, err
	}
	return took, len(l.Items), nil
}

func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
