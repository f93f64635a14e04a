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
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// suspendWait bounds how long the suspender waits for a job to show
// Suspended (the operator may be down, failing over or cut off) before it
// resumes it anyway.
const suspendWait = time.Minute

// suspender suspends every suspend job once, as soon as its decisive pod
// runs, and resumes it once the job is Suspended: what Kueue does when it
// preempts a job and admits it again, under whatever fault the scenario
// injects meanwhile.
type suspender struct {
	ctx    context.Context
	e      *env
	decide map[string]plannedJob // decisive pod namespace/name -> job

	mu   sync.Mutex
	done map[string]bool // job key -> suspended (or tried)
}

func newSuspender(ctx context.Context, e *env, jobs []plannedJob) *suspender {
	s := &suspender{ctx: ctx, e: e, decide: map[string]plannedJob{}, done: map[string]bool{}}
	for _, j := range jobs {
		if j.expect.Suspend {
			s.decide[j.obj.GetNamespace()+"/"+j.expect.DecisivePod] = j
		}
	}
	return s
}

// observe is a recorder pod hook.
func (s *suspender) observe(p podObs) {
	ns, _, _ := strings.Cut(p.Job, "/")
	j, ok := s.decide[ns+"/"+p.Name]
	if !ok || !p.live() || p.Phase != corev1.PodRunning {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done[j.key()] {
		return
	}
	s.done[j.key()] = true
	go s.suspendAndResume(j)
}

func (s *suspender) suspendAndResume(j plannedJob) {
	if err := s.setSuspend(j, true); err != nil {
		log.Printf("suspender: suspending %s: %v", j.key(), err)
		return
	}
	deadline := time.Now().Add(suspendWait)
	for time.Now().Before(deadline) && s.ctx.Err() == nil && !s.suspended(j) {
		time.Sleep(200 * time.Millisecond)
	}
	// Resumed even if it never showed Suspended: a job left suspended would
	// never finish, which the outcome check would report.
	for try := 0; try < 30 && s.ctx.Err() == nil; try++ {
		err := s.setSuspend(j, false)
		if err == nil {
			return
		}
		log.Printf("suspender: resuming %s: %v", j.key(), err)
		time.Sleep(time.Second)
	}
}

func (s *suspender) setSuspend(j plannedJob, on bool) error {
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	obj := j.obj.DeepCopyObject().(client.Object)
	patch := fmt.Sprintf(`{"spec":{"runPolicy":{"suspend":%t}}}`, on)
	return s.e.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}

func (s *suspender) suspended(j plannedJob) bool {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	obj := j.obj.DeepCopyObject().(client.Object)
	if err := s.e.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return false
	}
	for _, c := range testjobs.Status(obj).Conditions {
		if c.Type == kubeflowv1.JobSuspended && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// results lists the jobs the suspender suspended (or tried to).
func (s *suspender) results() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.done)
}
