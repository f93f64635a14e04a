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

// Package observability computes the operator's gauges of jobs by state
// from the informer cache when /metrics is scraped: no API request, no
// per-job label, and nothing to keep in step with the reconcilers.
package observability

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// The states of an unfinished job, exclusive: a job is counted once.
const (
	// StateQueued is a job that is neither suspended nor running and has no
	// pod: waiting for a gang's or Kueue's admission, or pods that cannot be
	// created (quota, admission denials).
	StateQueued = "Queued"
	// StateCreated is a job with pods, not all of them running yet.
	StateCreated = "Created"
	// StateRunning, StateRestarting and StateSuspended are the job's
	// conditions of the same names.
	StateRunning    = "Running"
	StateRestarting = "Restarting"
	StateSuspended  = "Suspended"
)

// States lists the states in the order they are documented.
var States = []string{StateQueued, StateCreated, StateRunning, StateRestarting, StateSuspended}

var (
	jobsDesc = prometheus.NewDesc("training_operator_jobs",
		"Unfinished jobs by state (Queued: no pod yet, Created, Running, Restarting, Suspended), read from the operator's cache",
		[]string{"job_namespace", "framework", "state"}, nil)
	oldestDesc = prometheus.NewDesc("training_operator_jobs_oldest_in_state_seconds",
		"Seconds since the job longest in this state entered it",
		[]string{"job_namespace", "framework", "state"}, nil)
)

// Kind is one job kind the collector lists: its list type in the scheme and
// its framework label (v1's metrics' framework).
type Kind struct {
	List      schema.GroupVersionKind
	Framework string
}

// JobStates is a prometheus.Collector of the jobs by state. It reads only
// while its reader is set, by the leader, whose controllers have the job
// and pod informers running: a read by a standby would start informers.
type JobStates struct {
	mu     sync.Mutex
	reader client.Reader
	scheme *runtime.Scheme
	kinds  []Kind
	now    func() time.Time
}

// NewJobStates returns a collector reading nothing until Serve.
func NewJobStates() *JobStates { return &JobStates{now: time.Now} }

// Serve makes the collector read kinds from reader (the manager's cache)
// until ctx ends; a later Serve replaces an earlier one.
func (c *JobStates) Serve(ctx context.Context, reader client.Reader, scheme *runtime.Scheme, kinds []Kind) {
	c.mu.Lock()
	c.reader, c.scheme, c.kinds = reader, scheme, kinds
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	if c.reader == reader {
		c.reader = nil
	}
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *JobStates) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- oldestDesc
}

type seriesKey struct{ namespace, framework, state string }

// scrapeTimeout bounds a collection; the cache answers from memory, so it
// only matters if an informer were not synced.
const scrapeTimeout = 5 * time.Second

// Collect implements prometheus.Collector.
func (c *JobStates) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader, scheme, kinds, now := c.reader, c.scheme, c.kinds, c.now()
	c.mu.Unlock()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	withPods, err := podOwners(ctx, reader)
	if err != nil {
		log.Log.WithName("metrics").Error(err, "listing pods from the cache")
		return
	}
	count := map[seriesKey]int{}
	oldest := map[seriesKey]time.Time{}
	for _, k := range kinds {
		obj, err := scheme.New(k.List)
		if err != nil {
			continue
		}
		list, ok := obj.(client.ObjectList)
		if !ok {
			continue
		}
		if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			log.Log.WithName("metrics").Error(err, "listing jobs from the cache", "kind", k.List.Kind)
			continue
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			job, ok := o.(kubeflowv1.Job)
			if !ok {
				return nil
			}
			state, since, ok := StateOf(job, withPods[job.GetUID()])
			if !ok {
				return nil
			}
			key := seriesKey{job.GetNamespace(), k.Framework, state}
			count[key]++
			if t, seen := oldest[key]; !seen || since.Before(t) {
				oldest[key] = since
			}
			return nil
		})
	}
	for key, n := range count {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), key.namespace, key.framework, key.state)
		age := now.Sub(oldest[key]).Seconds()
		if age < 0 {
			age = 0
		}
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, key.namespace, key.framework, key.state)
	}
}

// podOwners returns the UIDs of the jobs that own a pod in the cache.
func podOwners(ctx context.Context, reader client.Reader) (map[types.UID]bool, error) {
	var pods corev1.PodList
	if err := reader.List(ctx, &pods, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := map[types.UID]bool{}
	for i := range pods.Items {
		if ref := metav1.GetControllerOf(&pods.Items[i]); ref != nil {
			out[ref.UID] = true
		}
	}
	return out, nil
}

// StateOf returns the state of an unfinished job and since when it holds,
// from its conditions (v1's: the latest true one decides); ok is false for
// a finished job.
func StateOf(job kubeflowv1.Job, hasPods bool) (state string, since time.Time, ok bool) {
	st := job.JobStatus()
	cond := func(t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
		for i := range st.Conditions {
			if st.Conditions[i].Type == t && st.Conditions[i].Status == corev1.ConditionTrue {
				return &st.Conditions[i]
			}
		}
		return nil
	}
	if cond(kubeflowv1.JobSucceeded) != nil || cond(kubeflowv1.JobFailed) != nil {
		return "", time.Time{}, false
	}
	for _, s := range []struct {
		t     kubeflowv1.JobConditionType
		state string
	}{
		{kubeflowv1.JobSuspended, StateSuspended},
		{kubeflowv1.JobRestarting, StateRestarting},
		{kubeflowv1.JobRunning, StateRunning},
	} {
		if c := cond(s.t); c != nil {
			return s.state, transitionTime(c, job), true
		}
	}
	since = job.GetCreationTimestamp().Time
	if c := cond(kubeflowv1.JobCreated); c != nil {
		since = transitionTime(c, job)
	}
	if hasPods {
		return StateCreated, since, true
	}
	return StateQueued, since, true
}

func transitionTime(c *kubeflowv1.JobCondition, job kubeflowv1.Job) time.Time {
	if !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	return job.GetCreationTimestamp().Time
}
