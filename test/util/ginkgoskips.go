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
	"fmt"

	"github.com/onsi/ginkgo/v2/types"
)

// SkippedSpecs lists the specs of a Ginkgo suite that did not run for a
// reason other than the run's filters: a Skip() call, or a pending spec
// in a run without filters. A Ginkgo suite is one Go test, so hack/testsummary
// sees it passed however many of its specs skipped; the integration suites
// fail on this list from a ReportAfterSuite instead. Specs a focus or label
// filter left out are skipped too, but without a failure: they are not
// listed.
func SkippedSpecs(r types.Report) []string {
	filtered := len(r.SuiteConfig.FocusStrings) > 0 || len(r.SuiteConfig.SkipStrings) > 0 ||
		len(r.SuiteConfig.FocusFiles) > 0 || len(r.SuiteConfig.SkipFiles) > 0 || r.SuiteConfig.LabelFilter != ""
	var out []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		switch {
		case s.State == types.SpecStateSkipped && !s.Failure.IsZero():
			out = append(out, fmt.Sprintf("%s: skipped at %s: %s", s.FullText(), s.Failure.Location, s.Failure.Message))
		case s.State == types.SpecStatePending && !filtered:
			out = append(out, fmt.Sprintf("%s: pending at %s", s.FullText(), s.LeafNodeLocation))
		}
	}
	return out
}
