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

package config

import (
	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// ApplyClientConnection sets a defaulted clientConnection on the operator's
// REST config, before any client or informer is built from it.
func ApplyClientConnection(rc *rest.Config, cc configv1alpha1.ClientConnection) {
	rc.QPS = *cc.QPS
	rc.Burst = int(*cc.Burst)
	rc.DisableCompression = *cc.DisableCompression
}
