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

package engine

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// The operator keeps every pod and Service of every job it owns in memory,
// finished ones included (cleanPodPolicy None keeps them), so what a cached
// child carries decides the footprint of a large cluster. The engine reads
// children's metadata and pod status only, never writes them back, so the
// caches drop the rest: the pod spec (containers, env, volumes: most of a
// pod) and the Service spec.

// trimMeta keeps of a child's metadata what the engine reads: identity,
// owner, deletion, and of its labels the replica type and index (the
// cache's label selector was applied by the API server; user and sidecar
// labels would only take memory). What every child repeats (the owner's
// apiVersion and kind, the labels map of a replica type and index) is
// shared instead of decoded afresh for each of the 20,000 pods and
// Services of a large cluster: a two-entry map alone is about 300 bytes.
// Shared labels maps are read-only, as all of a cached object is: the
// engine deep-copies a child before changing it (adopt).
func trimMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	// Nothing reads a cached child's annotations, and injectors (service
	// meshes, secret agents) can make them the bulk of the metadata.
	m.Annotations = nil
	m.Labels = labelsOf(m.Labels)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind = intern(ref.APIVersion), intern(ref.Kind)
	}
}

// sharedTable hands out one value per key, so that what many cached
// objects repeat is kept once. Its values are read-only, as all of a cached
// object is: the engine deep-copies before changing anything (adopt, and
// the job a pass plans on). It is bounded: past maxShared keys, values are
// built but not kept, so a stream of unique keys cannot grow it without end.
type sharedTable[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

const maxShared = 4096

func (t *sharedTable[K, V]) get(k K, build func() V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.m[k]; ok {
		return v
	}
	v := build()
	if t.m == nil {
		t.m = map[K]V{}
	}
	if len(t.m) < maxShared {
		t.m[k] = v
	}
	return v
}

// sharedStrings are short strings many cached objects repeat.
var sharedStrings sharedTable[string, string]

func intern(s string) string { return sharedStrings.get(s, func() string { return s }) }

// labelsKey tells a missing label from an empty one.
type labelsKey struct {
	rtype, index, attempt         string
	hasType, hasIndex, hasAttempt bool
}

// sharedLabels holds the kept labels of cached children: one map per
// replica type and index present.
var sharedLabels sharedTable[labelsKey, map[string]string]

// labelsOf is the shared map of in's replica type and index labels; nil
// when it has neither.
func labelsOf(in map[string]string) map[string]string {
	var k labelsKey
	k.rtype, k.hasType = in[kubeflowv1.ReplicaTypeLabel]
	k.index, k.hasIndex = in[kubeflowv1.ReplicaIndexLabel]
	// The failure policy's attempt of a pod (on jobs with one only).
	k.attempt, k.hasAttempt = in[kubeflowv1.RestartAttemptLabel]
	if !k.hasType && !k.hasIndex && !k.hasAttempt {
		return nil
	}
	return sharedLabels.get(k, func() map[string]string {
		m := make(map[string]string, 2)
		if k.hasType {
			m[kubeflowv1.ReplicaTypeLabel] = k.rtype
		}
		if k.hasIndex {
			m[kubeflowv1.ReplicaIndexLabel] = k.index
		}
		if k.hasAttempt {
			m[kubeflowv1.RestartAttemptLabel] = k.attempt
		}
		return m
	})
}

// trimPod keeps a pod's metadata (see trimMeta), its phase,
// conditions and container states (of a succeeded pod, only what
// succeededStatuses keeps), its restart policy, scheduler and node.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimMeta(&pod.ObjectMeta)
	// Not even container names: a corev1.Container is large when empty, and
	// failure messages name containers from their statuses.
	pod.Spec = corev1.PodSpec{
		RestartPolicy: pod.Spec.RestartPolicy,
		SchedulerName: pod.Spec.SchedulerName,
		NodeName:      pod.Spec.NodeName,
	}
	if pod.Status.Phase == corev1.PodSucceeded {
		// Nothing reads a succeeded pod's conditions (the restart rule reads a
		// failed pod's, the trouble warnings an active pod's), and they are a
		// large part of a cached pod, of which a cluster may retain many.
		pod.Status.Conditions = nil
	}
	if pod.Status.Phase == corev1.PodSucceeded {
		pod.Status.ContainerStatuses = succeededStatuses(pod.Status.ContainerStatuses)
		pod.Status.InitContainerStatuses = succeededStatuses(pod.Status.InitContainerStatuses)
	} else {
		pod.Status.ContainerStatuses = trimStatuses(pod.Status.ContainerStatuses)
		pod.Status.InitContainerStatuses = trimStatuses(pod.Status.InitContainerStatuses)
	}
	pod.Status.EphemeralContainerStatuses = nil
	pod.Status.PodIPs, pod.Status.HostIPs = nil, nil
	return pod, nil
}

// trimService keeps a Service's metadata (see trimMeta). The engine caches
// Services as metadata only (NewServiceMeta); a typed Service, should
// anything ever ask the cache for one, is trimmed alike.
func trimService(obj any) (any, error) {
	switch svc := obj.(type) {
	case *metav1.PartialObjectMetadata:
		trimMeta(&svc.ObjectMeta)
	case *corev1.Service:
		trimMeta(&svc.ObjectMeta)
		svc.Spec = corev1.ServiceSpec{}
		svc.Status = corev1.ServiceStatus{}
	}
	return obj, nil
}

// trimStatuses keeps what failure messages and restart decisions read.
func trimStatuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(ss) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for i, s := range ss {
		out[i] = corev1.ContainerStatus{
			Name:                 s.Name,
			State:                s.State,
			LastTerminationState: s.LastTerminationState,
			Ready:                s.Ready,
			Started:              s.Started,
			RestartCount:         s.RestartCount,
		}
	}
	return out
}

// sharedSucceeded holds the container statuses of succeeded pods, keyed
// by what succeededStatuses keeps of them.
var sharedSucceeded sharedTable[string, []corev1.ContainerStatus]

// succeededStatuses keeps of a succeeded pod's container statuses what is
// read of a pod that will not change again: the names, restart counts
// (backoffLimit counts a succeeded pod's in-place restarts) and the
// termination's exit code, signal and reason (the ExitedWithCode event,
// and the failure message should the pod be deleted by someone else).
// That is the same for most succeeded pods, so they share one slice: the
// timestamps, container IDs and messages dropped were a quarter of a
// cached succeeded pod.
func succeededStatuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(ss) == 0 {
		return nil
	}
	var key strings.Builder
	for _, s := range ss {
		code, signal, reason := int32(0), int32(0), ""
		if t := s.State.Terminated; t != nil {
			code, signal, reason = t.ExitCode, t.Signal, t.Reason
		}
		fmt.Fprintf(&key, "%q %t %d %d %d %q;", s.Name, s.State.Terminated != nil, s.RestartCount, code, signal, reason)
	}
	return sharedSucceeded.get(key.String(), func() []corev1.ContainerStatus {
		out := make([]corev1.ContainerStatus, len(ss))
		for i, s := range ss {
			out[i] = corev1.ContainerStatus{Name: intern(s.Name), RestartCount: s.RestartCount}
			if t := s.State.Terminated; t != nil {
				out[i].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Signal: t.Signal, Reason: intern(t.Reason)}
			}
		}
		return out
	})
}

// trimFinishedJob is the cache transform of the enabled job kinds. A job
// that has Succeeded or Failed creates nothing again (terminal conditions
// are sticky), so its cached copy drops what only pod creation reads: the
// pod templates, keeping the scheduler name (which picks the gang backend to
// clean up) and the restart policy. What is left of a replica spec is the
// same for most finished jobs, so they share one (finishedSpec): a
// ReplicaSpec is 850 bytes even when empty. Replica counts, run policy and
// status stay for cleanup and TTL. Every new version from the API server is
// trimmed afresh, so nothing is lost for a job that is not finished.
// managedFields are dropped from every job.
func trimFinishedJob(obj any) (any, error) {
	job, ok := obj.(kubeflowv1.Job)
	if !ok {
		return obj, nil
	}
	job.SetManagedFields(nil)
	if !IsFinished(job.JobStatus()) {
		return job, nil
	}
	specs := job.ReplicaSpecs()
	for rt, spec := range specs {
		if spec != nil {
			specs[rt] = finishedSpec(spec)
		}
	}
	return job, nil
}

// specKey is what a finished job's replica spec keeps.
type specKey struct {
	replicas         int32
	hasReplicas      bool
	restartPolicy    kubeflowv1.RestartPolicy
	podRestartPolicy corev1.RestartPolicy
	schedulerName    string
}

// finishedSpecs holds the trimmed replica specs of finished jobs.
var finishedSpecs sharedTable[specKey, *kubeflowv1.ReplicaSpec]

// finishedSpec is the shared trimmed form of a finished job's spec.
func finishedSpec(spec *kubeflowv1.ReplicaSpec) *kubeflowv1.ReplicaSpec {
	k := specKey{restartPolicy: spec.RestartPolicy, podRestartPolicy: spec.Template.Spec.RestartPolicy, schedulerName: spec.Template.Spec.SchedulerName}
	if spec.Replicas != nil {
		k.replicas, k.hasReplicas = *spec.Replicas, true
	}
	return finishedSpecs.get(k, func() *kubeflowv1.ReplicaSpec {
		s := &kubeflowv1.ReplicaSpec{RestartPolicy: k.restartPolicy}
		if k.hasReplicas {
			s.Replicas = &k.replicas
		}
		s.Template.Spec = corev1.PodSpec{SchedulerName: intern(k.schedulerName), RestartPolicy: k.podRestartPolicy}
		return s
	})
}
