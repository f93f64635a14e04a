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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// env is the control plane shared by all scenarios (each has its own
// namespace) plus the harness's clients and the webhook forwarder.
type env struct {
	cluster *cluster.Cluster
	cfg     *rest.Config
	client  client.Client
	dynamic dynamic.Interface
	fwd     *forwarder
	bin     string
	dir     string
}

func setupEnv(ctx context.Context, bin, dir string, nodes int) (*env, func(), error) {
	e := &env{bin: bin, dir: dir}
	clusterDir := filepath.Join(dir, "cluster")
	c, err := cluster.Start(ctx, cluster.Options{Nodes: nodes, WorkDir: clusterDir, Logf: log.Printf,
		// The recorder's history has no gap only if its watches can resume
		// from any revision after an apiserver restart: served from etcd
		// (a new apiserver's watch cache starts at the current revision and
		// answers an older one with 410 Gone), with every revision kept.
		APIServerArgs: []string{"--watch-cache=false", "--etcd-compaction-interval=0"}})
	if err != nil {
		return nil, nil, err
	}
	e.cluster = c
	// Faults hit the apiserver and etcd; the other components are restarted
	// if they die, as the kubelet would, so the run tests the operator.
	c.Supervise(ctx)
	cleanup := func() {
		if e.fwd != nil {
			e.fwd.close()
		}
		_ = c.Stop()
		// Keep the component logs, drop the etcd data.
		_ = os.RemoveAll(filepath.Join(clusterDir, "etcd"))
	}
	e.cfg = c.RESTConfig()
	e.cfg.QPS, e.cfg.Burst = 200, 400
	e.cfg.Timeout = 15 * time.Second
	if err := util.InstallCRDs(ctx, e.cfg, filepath.Join(util.RepoRoot(), "config", "crd", "bases")); err != nil {
		cleanup()
		return nil, nil, err
	}
	if e.client, err = client.New(e.cfg, client.Options{Scheme: util.Scheme()}); err != nil {
		cleanup()
		return nil, nil, err
	}
	if e.dynamic, err = dynamic.NewForConfig(e.cfg); err != nil {
		cleanup()
		return nil, nil, err
	}
	if e.fwd, err = startForwarder(); err != nil {
		cleanup()
		return nil, nil, err
	}
	return e, cleanup, nil
}

func (e *env) createNamespace(ctx context.Context, ns string) error {
	err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// createJobs creates the jobs evenly over window from a few workers. A
// create is retried for up to retryFor: webhooks and the apiserver come and
// go during faults. AlreadyExists after a failed attempt means that attempt
// went through. It returns the keys that could not be created.
func (e *env) createJobs(ctx context.Context, jobs []plannedJob, window, retryFor time.Duration) map[string]error {
	var (
		mu     sync.Mutex
		failed = map[string]error{}
		wg     sync.WaitGroup
		next   = make(chan plannedJob)
	)
	for range 8 {
		wg.Go(func() {
			for j := range next {
				if err := e.createJob(ctx, j, retryFor); err != nil {
					mu.Lock()
					failed[j.key()] = err
					mu.Unlock()
				}
			}
		})
	}
	interval := window / time.Duration(max(1, len(jobs)))
	tick := time.NewTicker(max(interval, time.Millisecond))
	defer tick.Stop()
	for _, j := range jobs {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		next <- j
	}
	close(next)
	wg.Wait()
	return failed
}

func (e *env) createJob(ctx context.Context, j plannedJob, retryFor time.Duration) error {
	deadline := time.Now().Add(retryFor)
	var err error
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err = e.client.Create(actx, j.obj.DeepCopyObject().(client.Object))
		cancel()
		if err == nil || (attempt > 0 && apierrors.IsAlreadyExists(err)) {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("create %s %s after %d attempts: %w", j.kind.kind, j.key(), attempt+1, err)
		}
		time.Sleep(time.Duration(min(attempt+1, 5)) * 300 * time.Millisecond)
	}
}

// finalJobs lists every job of the namespace from the apiserver.
func (e *env) finalJobs(ctx context.Context, ns string) (map[string]jobObs, error) {
	out := map[string]jobObs{}
	now := time.Now()
	for _, k := range kinds {
		l, err := e.dynamic.Resource(k.gvr()).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			if obs, _, ok := toJobObs(k.kind, &l.Items[i], now); ok {
				out[obs.Job] = obs
			}
		}
	}
	return out, nil
}

// deletePod deletes one pod, guarded by its UID.
func (e *env) deletePod(ctx context.Context, ns, name, uid string) error {
	u := types.UID(uid)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return e.client.Delete(ctx, pod, client.Preconditions{UID: &u})
}

// dumpEvents writes the namespace's events, oldest first: who created and
// deleted which pod, for post-mortems of a violation.
func (e *env) dumpEvents(ctx context.Context, ns, path string) error {
	var list corev1.EventList
	if err := e.client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	sort.Slice(list.Items, func(i, j int) bool { return eventTime(&list.Items[i]).Before(eventTime(&list.Items[j])) })
	var b strings.Builder
	for _, ev := range list.Items {
		fmt.Fprintf(&b, "%s %s %s/%s %s x%d: %s\n", eventTime(&ev).Format("15:04:05.000"), ev.Type, ev.InvolvedObject.Kind,
			ev.InvolvedObject.Name, ev.Reason, ev.Count, ev.Message)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func eventTime(ev *corev1.Event) time.Time {
	switch {
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}
