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

package v1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReplicaCount is the number of replicas of the spec with v1's default of 1
// for unset replicas; a nil spec has none.
func (s *ReplicaSpec) ReplicaCount() int32 {
	if s == nil {
		return 0
	}
	if s.Replicas == nil {
		return 1
	}
	return *s.Replicas
}

// ReplicaName is the name of a replica's pod and Service:
// <job>-<lower rtype>-<index>. The webhooks check its length, so they and
// the controllers must agree on it.
func ReplicaName(jobName string, rtype ReplicaType, index int) string {
	n := fmt.Sprintf("%s-%s-%d", jobName, strings.ToLower(string(rtype)), index)
	return strings.ReplaceAll(n, "/", "-")
}

// MPIJobLauncherName is the name of an MPIJob's launcher pod and of its
// ServiceAccount, Role and RoleBinding (v1's <job>-launcher).
func MPIJobLauncherName(jobName string) string { return jobName + "-launcher" }

// DefaultContainer is the container named name, else the first one (nil when
// there is none): the one port defaulting gives the default port.
func DefaultContainer(containers []corev1.Container, name string) *corev1.Container {
	for i := range containers {
		if containers[i].Name == name {
			return &containers[i]
		}
	}
	if len(containers) > 0 {
		return &containers[0]
	}
	return nil
}

// NamedPort is the containerPort of c's port called name; false when c is nil
// or has no such port.
func NamedPort(c *corev1.Container, name string) (int32, bool) {
	if c == nil {
		return 0, false
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// ContainerPort is the port called port of the template's container called
// container, as v1's env wiring reads it (no fallback to another container);
// false when the spec is nil or has none.
func (s *ReplicaSpec) ContainerPort(container, port string) (int32, bool) {
	if s == nil {
		return 0, false
	}
	for i := range s.Template.Spec.Containers {
		if c := &s.Template.Spec.Containers[i]; c.Name == container {
			if p, ok := NamedPort(c, port); ok {
				return p, true
			}
		}
	}
	return 0, false
}

// MainContainer is the container of an MPIJob's pod that runs MPI:
// spec.mainContainer when the pod has a container of that name, else the
// first one (nil when there is none). MPIJob containers may have any name.
func (j *MPIJob) MainContainer(spec *corev1.PodSpec) *corev1.Container {
	return DefaultContainer(spec.Containers, j.Spec.MainContainer)
}

// MainContainerName is the container of a job's pod (or pod template) that
// runs the training program: the one whose exit code is the replica's and
// that a failure-policy rule without containerName reads. It is the kind's
// default container, which the webhooks require, except for kinds that pick
// it per job (MPIJob: MainContainer). "" when there is none.
func MainContainerName(job Job, spec *corev1.PodSpec) string {
	if m, ok := job.(interface {
		MainContainer(*corev1.PodSpec) *corev1.Container
	}); ok {
		if c := m.MainContainer(spec); c != nil {
			return c.Name
		}
		return ""
	}
	return job.KindInfo().DefaultContainerName
}
