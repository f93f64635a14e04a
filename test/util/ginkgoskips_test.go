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

package util

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func TestSkippedSpecs(t *testing.T) {
	spec := func(text string, state types.SpecState, msg string) types.SpecReport {
		s := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state}
		if msg != "" {
			s.Failure = types.Failure{Message: msg, Location: types.CodeLocation{FileName: "x_test.go", LineNumber: 1}}
		}
		return s
	}
	specs := types.SpecReports{
		spec("runs", types.SpecStatePassed, ""),
		spec("calls Skip", types.SpecStateSkipped, "no kubectl"),
		spec("filtered out", types.SpecStateSkipped, ""),
		spec("pending", types.SpecStatePending, ""),
	}
	for _, tc := range []struct {
		name   string
		config types.SuiteConfig
		want   int
	}{
		{"no filter: Skip() and pending", types.SuiteConfig{}, 2},
		{"focus: Skip() only", types.SuiteConfig{FocusStrings: []string{"x"}}, 1},
		{"label filter: Skip() only", types.SuiteConfig{LabelFilter: "kueue"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SkippedSpecs(types.Report{SuiteConfig: tc.config, SpecReports: specs})
			if len(got) != tc.want {
				t.Errorf("%d skipped specs, want %d: %q", len(got), tc.want, got)
			}
		})
	}
}
