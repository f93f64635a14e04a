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

// Package v1 contains the kubeflow.org/v1 API: PyTorchJob, TFJob, MPIJob,
// XGBoostJob, PaddleJob and JAXJob. The types are wire compatible with the
// Kubeflow Training Operator v1.
// +kubebuilder:object:generate=true
// +groupName=kubeflow.org
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupName is the API group of every kind in this package.
const GroupName = "kubeflow.org"

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

	// SchemeGroupVersion is an alias of GroupVersion, kept for code written
	// against client-gen conventions.
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
