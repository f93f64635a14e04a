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

// Package v1alpha1 holds the scheduling.x-k8s.io/v1alpha1 PodGroup of the
// Kubernetes scheduler-plugins coscheduling plugin
// (sigs.k8s.io/scheduler-plugins). The module is not available to this
// project, so the types are defined here with the same group, kind and JSON
// fields; only what the training operator reads and writes is modelled.
// +kubebuilder:object:generate=true
// +groupName=scheduling.x-k8s.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupName is the API group of the scheduler-plugins scheduling types.
const GroupName = "scheduling.x-k8s.io"

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeGroupVersion is an alias of GroupVersion (client-gen convention).
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder adds the types of this group-version to a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource takes an unqualified resource name and returns a group-qualified
// GroupResource.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
