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
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// lateAfter: a disrupt job's decisive pod runs disruptRuntime; a deletion
// later than this into its run may race with the job's success.
const lateAfter = disruptRuntime / 2

// disruptor deletes the designated pod of every disrupt job once, as soon
// as it runs: a pod "deleted by someone else", which every policy retries.
type disruptor struct {
	ctx     context.Context
	e       *env
	targets map[string]string // pod namespace/name -> job key
	decide  map[string]string // decisive pod namespace/name -> job key

	mu       sync.Mutex
	started  map[string]time.Time // job key -> decisive pod seen Running
	inflight map[string]bool      // job key -> delete in progress
	done     map[string]disruption
}

func newDisruptor(ctx context.Context, e *env, jobs []plannedJob) *disruptor {
	d := &disruptor{ctx: ctx, e: e, targets: map[string]string{}, decide: map[string]string{},
		started: map[string]time.Time{}, inflight: map[string]bool{}, done: map[string]disruption{}}
	for _, j := range jobs {
		if j.expect.DisruptPod == "" {
			continue
		}
		ns := j.obj.GetNamespace()
		d.targets[ns+"/"+j.expect.DisruptPod] = j.key()
		d.decide[ns+"/"+j.expect.DecisivePod] = j.key()
	}
	return d
}

// observe is the recorder's pod hook.
func (d *disruptor) observe(p podObs) {
	ns, _, _ := strings.Cut(p.Job, "/")
	name := ns + "/" + p.Name
	d.mu.Lock()
	defer d.mu.Unlock()
	if job, ok := d.decide[name]; ok && p.Phase == corev1.PodRunning {
		if _, seen := d.started[job]; !seen {
			d.started[job] = p.At
		}
	}
	job, ok := d.targets[name]
	if !ok || !p.live() || p.Phase != corev1.PodRunning || d.inflight[job] {
		return
	}
	if _, did := d.done[job]; did {
		return
	}
	d.inflight[job] = true
	go d.delete(job, ns, p)
}

func (d *disruptor) delete(job, ns string, p podObs) {
	ctx, cancel := context.WithTimeout(d.ctx, 20*time.Second)
	defer cancel()
	err := d.e.deletePod(ctx, ns, p.Name, p.UID)
	at := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight[job] = false
	if err != nil {
		return // gone or replaced meanwhile; a later observation retries
	}
	start, ok := d.started[job]
	d.done[job] = disruption{UID: p.UID, At: at, Late: ok && at.Sub(start) > lateAfter}
}

func (d *disruptor) results() map[string]disruption {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.done)
}
