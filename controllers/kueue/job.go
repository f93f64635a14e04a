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

// Package kueue is the operator's own Kueue integration: every enabled
// kubeflow.org/v1 kind, MPIJob included, as a Kueue external framework.
// Kueue's job framework library (sigs.k8s.io/kueue/pkg/controller/jobframework)
// does the work: Job adapts the kinds' common interface (kubeflowv1.Job) to
// its GenericJob once for all kinds, Setup runs its reconciler for each
// enabled kind in the operator's manager, and Admission adds its defaulting
// and validation to the kinds' webhooks. The job engine knows nothing of
// it: it honours runPolicy.suspend, which the reconciler sets and clears.
package kueue

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/podset"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Job is a kubeflow.org/v1 job of any kind as Kueue's job framework sees
// it. Its pod sets are the job's replica types in KindInfo.ReplicaTypes
// order, named after them, as Kueue's built-in kubeflow.org integrations
// (and, for MPIJob, its mpi-operator one) name them: a Workload either made
// is the other's too, which is what lets a cluster move between the two
// without requeuing.
type Job struct {
	job kubeflowv1.Job
	gvk schema.GroupVersionKind
}

var (
	_ jobframework.GenericJob              = (*Job)(nil)
	_ jobframework.JobWithPodLabelSelector = (*Job)(nil)
	_ jobframework.JobWithPriorityClass    = (*Job)(nil)
	_ jobframework.JobWithManagedBy        = (*Job)(nil)
	_ jobframework.JobWithReclaimablePods  = (*Job)(nil)
	_ jobframework.JobWithCustomValidation = (*Job)(nil)
	_ jobframework.TopLevelJob             = (*Job)(nil)
)

// NewJob wraps job, whose kind's group and version are kubeflow.org/v1.
func NewJob(job kubeflowv1.Job) *Job {
	return &Job{job: job, gvk: kubeflowv1.GroupVersion.WithKind(job.KindInfo().Kind)}
}

// Object implements GenericJob.
func (j *Job) Object() client.Object { return j.job }

// GVK implements GenericJob.
func (j *Job) GVK() schema.GroupVersionKind { return j.gvk }

// IsSuspended implements GenericJob.
func (j *Job) IsSuspended() bool { return ptr.Deref(j.job.RunPolicy().Suspend, false) }

// Suspend implements GenericJob.
func (j *Job) Suspend() { j.job.RunPolicy().Suspend = ptr.To(true) }

// replicaTypes are the job's replica types, in pod-set order.
func (j *Job) replicaTypes() []kubeflowv1.ReplicaType {
	specs := j.job.ReplicaSpecs()
	var out []kubeflowv1.ReplicaType
	for _, rt := range j.job.KindInfo().ReplicaTypes {
		if specs[rt] != nil {
			out = append(out, rt)
		}
	}
	return out
}

// RunWithPodSetsInfo implements GenericJob: it unsuspends the job with the
// admission's node selectors, tolerations, labels, annotations and
// scheduling gates (a topology assignment's gate) merged into the
// templates, one pod set per replica type.
func (j *Job) RunWithPodSetsInfo(_ context.Context, infos []podset.PodSetInfo) error {
	types := j.replicaTypes()
	if len(infos) != len(types) {
		return podset.BadPodSetsInfoLenError(len(types), len(infos))
	}
	j.job.RunPolicy().Suspend = ptr.To(false)
	specs := j.job.ReplicaSpecs()
	for i, rt := range types {
		t := &specs[rt].Template
		if err := podset.Merge(&t.ObjectMeta, &t.Spec, infos[i]); err != nil {
			return err
		}
	}
	return nil
}

// RestorePodSetsInfo implements GenericJob: it takes out of the templates
// what an admission put in, on eviction or preemption.
func (j *Job) RestorePodSetsInfo(infos []podset.PodSetInfo) bool {
	types := j.replicaTypes()
	specs := j.job.ReplicaSpecs()
	changed := false
	for i, info := range infos {
		if i >= len(types) {
			break
		}
		t := &specs[types[i]].Template
		changed = podset.RestorePodSpec(&t.ObjectMeta, &t.Spec, info) || changed
	}
	return changed
}

// Finished implements GenericJob: the job's Succeeded or Failed condition.
func (j *Job) Finished(context.Context) (message string, success, finished bool) {
	for _, c := range j.job.JobStatus().Conditions {
		if (c.Type == kubeflowv1.JobSucceeded || c.Type == kubeflowv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Message, c.Type == kubeflowv1.JobSucceeded, true
		}
	}
	return "", true, false
}

// PodSets implements GenericJob: one pod set per replica type, with a
// topology request when its template asks for one (Kueue's TAS
// annotations); ranks are v1's replica-index label, so that a topology
// assignment places rank 0 and its neighbours next to each other.
func (j *Job) PodSets(context.Context) ([]kueuev1beta2.PodSet, error) {
	specs := j.job.ReplicaSpecs()
	types := j.replicaTypes()
	out := make([]kueuev1beta2.PodSet, len(types))
	for i, rt := range types {
		spec := specs[rt]
		out[i] = kueuev1beta2.PodSet{
			Name:     kueuev1beta2.NewPodSetReference(string(rt)),
			Template: *spec.Template.DeepCopy(),
			Count:    spec.ReplicaCount(),
		}
		if features.Enabled(features.TopologyAwareScheduling) {
			req, err := jobframework.NewPodSetTopologyRequest(&spec.Template.ObjectMeta).
				PodIndexLabel(ptr.To(kubeflowv1.ReplicaIndexLabel)).Build()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rt, err)
			}
			out[i].TopologyRequest = req
		}
	}
	return out, nil
}

// IsActive implements GenericJob: some replica has an active pod.
func (j *Job) IsActive() bool {
	for _, s := range j.job.JobStatus().ReplicaStatuses {
		if s != nil && s.Active > 0 {
			return true
		}
	}
	return false
}

// PodsReady implements GenericJob: the job is Running (every pod it
// needs is up), which is when waitForPodsReady counts it as started.
func (j *Job) PodsReady(context.Context) bool {
	for _, c := range j.job.JobStatus().Conditions {
		if c.Type == kubeflowv1.JobRunning && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// PodLabelSelector implements JobWithPodLabelSelector: v1's labels of the
// job's pods.
func (j *Job) PodLabelSelector() string {
	return fmt.Sprintf("%s=%s,%s=%s", kubeflowv1.JobNameLabel, j.job.GetName(),
		kubeflowv1.OperatorNameLabel, j.job.KindInfo().ControllerName)
}

// PriorityClass implements JobWithPriorityClass: runPolicy's
// schedulingPolicy.priorityClass, else the first template (in pod-set
// order) that names one, as Kueue's built-in integrations read it.
func (j *Job) PriorityClass() string {
	if sp := j.job.RunPolicy().SchedulingPolicy; sp != nil && sp.PriorityClass != "" {
		return sp.PriorityClass
	}
	specs := j.job.ReplicaSpecs()
	for _, rt := range j.replicaTypes() {
		if pc := specs[rt].Template.Spec.PriorityClassName; pc != "" {
			return pc
		}
	}
	return ""
}

// CanDefaultManagedBy implements JobWithManagedBy: with MultiKueue, a job
// left to this operator may be handed to MultiKueue.
func (j *Job) CanDefaultManagedBy() bool {
	m := j.job.RunPolicy().ManagedBy
	return features.Enabled(features.MultiKueue) && (m == nil || *m == kubeflowv1.KubeflowJobsController)
}

// ManagedBy implements JobWithManagedBy.
func (j *Job) ManagedBy() *string { return j.job.RunPolicy().ManagedBy }

// SetManagedBy implements JobWithManagedBy.
func (j *Job) SetManagedBy(m *string) { j.job.RunPolicy().ManagedBy = m }

// IsTopLevel implements TopLevelJob: the operator's jobs own their
// Workloads whoever owns the job, so the reconciler does not walk the
// job's owners looking for a queued ancestor.
func (j *Job) IsTopLevel() bool { return true }

// ReclaimablePods implements JobWithReclaimablePods: a replica type's
// succeeded pods, which never run again, give their quota back while the
// rest of the job runs. Only for jobs without a failurePolicy: a whole-job
// restart brings succeeded replicas back, and Kueue does not let a
// Workload's reclaimable count go down.
func (j *Job) ReclaimablePods(context.Context) ([]kueuev1beta2.ReclaimablePod, error) {
	if j.job.RunPolicy().FailurePolicy != nil {
		return nil, nil
	}
	specs, statuses := j.job.ReplicaSpecs(), j.job.JobStatus().ReplicaStatuses
	var out []kueuev1beta2.ReclaimablePod
	for _, rt := range j.replicaTypes() {
		s := statuses[rt]
		if s == nil || s.Succeeded == 0 {
			continue
		}
		out = append(out, kueuev1beta2.ReclaimablePod{
			Name:  kueuev1beta2.NewPodSetReference(string(rt)),
			Count: min(s.Succeeded, specs[rt].ReplicaCount()),
		})
	}
	return out, nil
}
