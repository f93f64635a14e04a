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

package observability

import (
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The collectors in controller-runtime's registry, which /metrics serves.
// There is one registry per process, so one collector each: the operator
// wired last (tests wire several in one process) is the one reported.
var (
	Jobs = NewJobStates()
	Cert = &CertExpiry{}

	registerOnce sync.Once
)

// Register adds the collectors to controller-runtime's registry once.
func Register() {
	registerOnce.Do(func() { metrics.Registry.MustRegister(Jobs, Cert) })
}
