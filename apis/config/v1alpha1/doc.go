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

// Package v1alpha1 contains the file-based configuration API of the training
// operator: the Configuration kind in group config.training-operator.io.
//
// Every setting also has a v1-compatible command-line flag; a flag given
// explicitly on the command line overrides the value from the file.
//
// +kubebuilder:object:generate=true
// +groupName=config.training-operator.io
package v1alpha1
