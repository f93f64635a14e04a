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

package operatorproc

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/internal/config"
)

// The file the harnesses write is what the operator reads: decoded
// strictly and defaulted as --config does, it holds what they set.
func TestWrittenConfigurationIsWhatTheOperatorReads(t *testing.T) {
	cfg := Local(9443, "/tmp/certs", "https://127.0.0.1:7000")
	cfg.LeaderElection.LeaderElect = true
	cfg.LeaderElection.ResourceNamespace = "default"
	cfg.LeaderElection.LeaseDuration = &metav1.Duration{Duration: 40 * time.Second}
	cfg.Kueue.Integration = configv1alpha1.KueueIntegrationOperator
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := Write(path, cfg); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	got, err := config.Load(path)
	if err != nil {
		t.Fatalf("the operator refuses the written file: %v\n%s", err, data)
	}
	want := cfg.DeepCopy()
	configv1alpha1.SetDefaults_Configuration(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s\nfile:\n%s", diff, data)
	}
	if got.Webhook.ClientURL != "https://127.0.0.1:7000" || *got.Webhook.Port != 9443 || !got.LeaderElection.LeaderElect {
		t.Errorf("read back %+v", got.Webhook)
	}
}

// A section nothing sets is not written, so a build that lacks it (the
// bench's --compare with an older binary) still reads the file.
func TestUnsetSectionsAreNotWritten(t *testing.T) {
	data, err := Marshal(Local(9443, "/tmp/certs", ""))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	for _, unset := range []string{"kueue", "gangScheduling", "mpi", "metrics"} {
		if _, ok := fields[unset]; ok {
			t.Errorf("the unset section %q is written:\n%s", unset, data)
		}
	}
	if _, ok := fields["webhook"]; !ok {
		t.Errorf("the webhook section is missing:\n%s", data)
	}
}
