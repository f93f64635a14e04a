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

// testsummary records one suite's counts of tests (or specs) run, skipped
// and failed in make test's summary file, prints the file, and fails when
// the suite skipped anything: make test runs on the local control plane,
// which has everything every spec needs, so a skip there is a check that
// silently did not run. Against an external cluster (E2E_KUBECONFIG set)
// skips are allowed and only reported.
//
//	testsummary -suite unit -summary F            counts from gotestsum's
//	                                             TESTS_* variables (post-run command)
//	testsummary -suite e2e -summary F -ginkgo R   counts from a ginkgo JSON report
//	testsummary -summary F -print                 print the summary
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
)

type counts struct{ run, skipped, failed int }

func main() {
	suite := flag.String("suite", "", "suite name")
	summary := flag.String("summary", "_output/test-summary.txt", "summary file to append to")
	ginkgoReport := flag.String("ginkgo", "", "ginkgo JSON report to count (default: gotestsum's TESTS_* variables)")
	printOnly := flag.Bool("print", false, "only print the summary file")
	flag.Parse()
	if err := run(*suite, *summary, *ginkgoReport, *printOnly); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}

func run(suite, summary, ginkgoReport string, printOnly bool) error {
	if printOnly {
		b, err := os.ReadFile(summary)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		fmt.Printf("\n==== make test: tests run, skipped and failed per suite ====\n%s", b)
		return nil
	}
	if suite == "" {
		return errors.New("-suite is required")
	}
	var c counts
	var err error
	if ginkgoReport != "" {
		c, err = fromGinkgo(ginkgoReport)
	} else {
		c, err = fromEnv()
	}
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%-12s run %5d   skipped %3d   failed %3d\n", suite, c.run, c.skipped, c.failed)
	f, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Print(line)
	if c.skipped > 0 && os.Getenv("E2E_KUBECONFIG") == "" {
		return fmt.Errorf("%s: %d skipped on the local control plane, which has everything the suite needs: "+
			"a skipped check is one that did not run (see the skips listed above)", suite, c.skipped)
	}
	return nil
}

// fromEnv reads the counts gotestsum gives its post-run command.
func fromEnv() (counts, error) {
	var c counts
	for name, dst := range map[string]*int{"TESTS_TOTAL": &c.run, "TESTS_SKIPPED": &c.skipped, "TESTS_FAILED": &c.failed} {
		n, err := strconv.Atoi(os.Getenv(name))
		if err != nil {
			return c, fmt.Errorf("%s=%q: run as gotestsum's --post-run-command", name, os.Getenv(name))
		}
		*dst = n
	}
	c.run -= c.skipped
	return c, nil
}

// fromGinkgo counts the specs of a ginkgo JSON report (one report per
// suite); filtered-out specs are not counted at all.
func fromGinkgo(path string) (counts, error) {
	var c counts
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	var reports []struct {
		SpecReports []struct {
			LeafNodeType string
			State        string
		}
	}
	if err := json.Unmarshal(b, &reports); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != "It" {
				continue // suite and per-process set-up nodes
			}
			switch s.State {
			case "passed":
				c.run++
			case "skipped", "pending":
				c.skipped++
			default: // failed, panicked, interrupted, aborted, timedout
				c.run++
				c.failed++
			}
		}
	}
	return c, nil
}
