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

package chartsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const repoRoot = "../../.."

// The checked-in lists of kinds are what the table renders: a kind added to
// (or removed from) kinds.All without make chart-sync fails here.
func TestKindFilesUpToDate(t *testing.T) {
	want, err := Generate(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ChartKinds, ChartValuesSchema, KubeflowRoles, CRDKustomization, ConfigSchemes} {
		got, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want[p]), string(got)); diff != "" {
			t.Errorf("%s is stale; run make chart-sync (-want +got):\n%s", p, diff)
		}
	}
}

func TestSchemaWithSchemes(t *testing.T) {
	in := `{
  "definitions": {
    "scheme": {
      "type": "string",
      "enum": ["OldJob", "oldjob"]
    },
    "other": {"enum": ["x"]},
    "podGroupAPI": {"type": "string", "enum": []}
  }
}`
	want := `{
  "definitions": {
    "scheme": {
      "type": "string",
      "enum": [
        "FooJob", "BarJob",
        "foojob", "barjob"
      ]
    },
    "other": {"enum": ["x"]},
    "podGroupAPI": {"type": "string", "enum": [
        "volcano", "scheduler-plugins", "kubernetes"
      ]}
  }
}`
	got, err := SchemaWithSchemes([]byte(in), []ChartKind{{Kind: "FooJob"}, {Kind: "BarJob"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := SchemaWithSchemes([]byte(strings.Replace(in, `"scheme"`, `"kind"`, 1)), nil); err == nil {
		t.Errorf("a schema without a scheme enum was accepted")
	}
}
