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

// Command chart copies the generated manifests of config/ into the Helm
// chart and the kustomize RBAC (make chart-sync): CRDs, RBAC rules grouped
// by scope, webhooks; and renders the chart's and kustomize's lists of job
// kinds from the table of kinds. With -check it only reports files that are
// stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed-d8a409e9/training-operator/hack/chart/chartsync"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "report stale files instead of writing them")
	flag.Parse()
	if *check {
		stale, err := chartsync.Stale(*root)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if len(stale) > 0 {
			fmt.Fprintln(os.Stderr, "stale chart/kustomize files; run make chart-sync:")
			for _, p := range stale {
				fmt.Fprintln(os.Stderr, "  "+p)
			}
			os.Exit(1)
		}
		return
	}
	if err := chartsync.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
