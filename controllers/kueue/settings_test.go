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

package kueue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "controller_manager_config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadSettings reads Kueue's configuration as Kueue's ConfigMap holds
// it: the operator's own integrations (none compiled into Kueue's
// registry here) must not make it invalid.
func TestLoadSettings(t *testing.T) {
	defaults, err := LoadSettings("")
	if err != nil {
		t.Fatalf("Kueue's defaults: %v", err)
	}
	if defaults.ManageJobsWithoutQueueName || defaults.BuiltinManages("PyTorchJob") || defaults.configured() {
		t.Errorf("Kueue's defaults read as %+v", defaults)
	}

	s, err := LoadSettings(writeConfig(t, `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels:
    team: ml
waitForPodsReady:
  timeout: 5m
integrations:
  frameworks: [batch/job, kubeflow.org/tfjob, kubeflow.org/mpijob]
  externalFrameworks: [PyTorchJob.v1.kubeflow.org, MPIJob.v1.kubeflow.org]
  labelKeysToCopy: [team]
`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.ManageJobsWithoutQueueName {
		t.Error("manageJobsWithoutQueueName not read")
	}
	if s.ManagedJobsNamespaceSelector == nil || !s.ManagedJobsNamespaceSelector.Matches(labels.Set{"team": "ml"}) ||
		s.ManagedJobsNamespaceSelector.Matches(labels.Set{"team": "web"}) {
		t.Errorf("managedJobsNamespaceSelector read as %v", s.ManagedJobsNamespaceSelector)
	}
	if !s.BuiltinManages("TFJob") || s.BuiltinManages("PyTorchJob") {
		t.Error("Kueue's own integrations misread")
	}
	if s.BuiltinManages("MPIJob") {
		t.Error("Kueue's kubeflow.org/mpijob (mpi-operator's v2beta1) taken for v1's MPIJob")
	}
	if !s.ListedExternal("PyTorchJob") || !s.ListedExternal("MPIJob") || s.ListedExternal("JAXJob") {
		t.Error("external frameworks misread")
	}
	if len(s.options()) == 0 || s.cfg.WaitForPodsReady == nil || s.cfg.Integrations.LabelKeysToCopy[0] != "team" {
		t.Errorf("waitForPodsReady or labelKeysToCopy not read: %+v", s.cfg)
	}

	if _, err := LoadSettings(writeConfig(t, "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmanageJobsWithoutQueue: true\n")); err == nil ||
		!strings.Contains(err.Error(), "manageJobsWithoutQueue") {
		t.Errorf("a misspelt field: error %v, want one naming it", err)
	}
}
