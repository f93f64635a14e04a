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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/kinds"
)

// The files that list the job kinds, derived from the table of kinds
// (package kinds).
const (
	// KindsSource names the table in the generated files' headers.
	KindsSource = "kinds/kinds.go"
	// ChartKinds lists every kind and its plural resource for the chart's
	// templates (the enabled webhooks, the user roles).
	ChartKinds = ChartDir + "/files/kinds.yaml"
	// ChartValuesSchema is the chart's values schema; only its enum of
	// scheme names (definitions.scheme) is derived.
	ChartValuesSchema = ChartDir + "/values.schema.json"
	// KubeflowRoles are the user roles of the kustomize "kubeflow" overlay,
	// the same as the chart renders with rbac.userRoles.
	KubeflowRoles = "config/overlays/kubeflow/kubeflow-training-roles.yaml"
	// CRDKustomization lists the CRDs of config/crd/bases for kustomize.
	CRDKustomization = "config/crd/kustomization.yaml"
)

// ChartKind is an entry of ChartKinds.
type ChartKind struct {
	Kind   string `json:"kind"`
	Plural string `json:"plural"`
}

// chartKinds returns the kinds of the table, in its order.
func chartKinds() []ChartKind {
	var out []ChartKind
	for _, k := range kinds.All() {
		out = append(out, ChartKind{Kind: k.Info.Kind, Plural: k.Info.Plural})
	}
	return out
}

// generateKinds adds the files derived from the table of kinds to out.
func generateKinds(root string, out map[string][]byte) error {
	all := chartKinds()
	data, err := yaml.Marshal(map[string]any{"kinds": all})
	if err != nil {
		return err
	}
	out[ChartKinds] = append([]byte(fmt.Sprintf(header, KindsSource)+
		"# The job kinds and their plural resources, for the chart's templates.\n"), data...)

	schema, err := os.ReadFile(filepath.Join(root, ChartValuesSchema))
	if err != nil {
		return err
	}
	if out[ChartValuesSchema], err = SchemaWithSchemes(schema, all); err != nil {
		return fmt.Errorf("%s: %w", ChartValuesSchema, err)
	}

	var roles bytes.Buffer
	if err := kubeflowRoles.Execute(&roles, all); err != nil {
		return err
	}
	out[KubeflowRoles] = append([]byte(fmt.Sprintf(header, KindsSource)), roles.Bytes()...)

	crds, err := filepath.Glob(filepath.Join(root, CRDSourceDir, "*.yaml"))
	if err != nil {
		return err
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
	for _, f := range crds {
		k += "- bases/" + filepath.Base(f) + "\n"
	}
	out[CRDKustomization] = []byte(fmt.Sprintf(header, CRDSourceDir) + k)
	return nil
}

// definitionEnum matches the enum of one definition of the values schema:
// the definition's opening up to and including the enum's closing bracket.
func definitionEnum(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)("` + regexp.QuoteMeta(name) + `": \{[^{}]*?"enum": \[)[^\]]*(\])`)
}

// setEnum replaces the enum of the schema's definition name with values,
// one line per group; the rest of the file is kept as written.
func setEnum(schema []byte, name string, groups ...[]string) ([]byte, error) {
	re := definitionEnum(name)
	if n := len(re.FindAllIndex(schema, -1)); n != 1 {
		return nil, fmt.Errorf(`%d enums of a %q definition, want 1`, n, name)
	}
	var lines []string
	for _, g := range groups {
		quoted := make([]string, len(g))
		for i, v := range g {
			quoted[i] = fmt.Sprintf("%q", v)
		}
		lines = append(lines, strings.Join(quoted, ", "))
	}
	enum := "\n        " + strings.Join(lines, ",\n        ") + "\n      "
	return re.ReplaceAll(schema, []byte("${1}"+strings.ReplaceAll(enum, "$", "$$")+"${2}")), nil
}

// SchemaWithSchemes returns the values schema with the enum of its "scheme"
// definition (the accepted enabledSchemes entries) set to the kind names,
// as written and in lower case, and that of its "podGroupAPI" definition
// (gangScheduling.podGroupAPI and podGroupAPIs) to the gang backends'.
func SchemaWithSchemes(schema []byte, all []ChartKind) ([]byte, error) {
	var names, lower []string
	for _, k := range all {
		names = append(names, k.Kind)
		lower = append(lower, strings.ToLower(k.Kind))
	}
	schema, err := setEnum(schema, "scheme", names, lower)
	if err != nil {
		return nil, err
	}
	var apis []string
	for _, a := range configv1alpha1.PodGroupAPIs() {
		apis = append(apis, string(a))
	}
	return setEnum(schema, "podGroupAPI", apis)
}

// kubeflowRoles renders KubeflowRoles; templates/user-roles.yaml renders
// the same roles in the chart.
var kubeflowRoles = template.Must(template.New("roles").Funcs(template.FuncMap{
	"resources": func(all []ChartKind, suffix string) string {
		var out []string
		for _, k := range all {
			out = append(out, fmt.Sprintf("%q", k.Plural+suffix))
		}
		return "[" + strings.Join(out, ", ") + "]"
	},
}).Parse(`# User roles of v1's "kubeflow" overlay (same names, rules and aggregation
# labels; the Helm chart renders the same with rbac.userRoles=true).
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeflow-training-admin
  labels:
    rbac.authorization.kubeflow.org/aggregate-to-kubeflow-admin: "true"
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rbac.authorization.kubeflow.org/aggregate-to-kubeflow-training-admin: "true"
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeflow-training-edit
  labels:
    rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit: "true"
    rbac.authorization.kubeflow.org/aggregate-to-kubeflow-training-admin: "true"
rules:
- apiGroups: ["kubeflow.org"]
  resources: {{ resources . "" }}
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"]
- apiGroups: ["kubeflow.org"]
  resources: {{ resources . "/status" }}
  verbs: ["get"]
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["create", "delete", "get", "list", "watch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["kueue.x-k8s.io"]
  resources: ["localqueues"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeflow-training-view
  labels:
    rbac.authorization.kubeflow.org/aggregate-to-kubeflow-view: "true"
rules:
- apiGroups: ["kubeflow.org"]
  resources: {{ resources . "" }}
  verbs: ["get", "list"]
- apiGroups: ["kubeflow.org"]
  resources: {{ resources . "/status" }}
  verbs: ["get"]
`))
