// Command crdpatch post-processes the CRDs controller-gen writes, for the one
// place where v1 samples are looser than the generated schema: replica
// templates may omit container names (the seed MPIJob does). Containers are a
// list-map keyed by name, so instead of requiring the name the schema defaults
// it to the kind's default container name. It rewrites files in place.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/seed-d8a409e9/training-operator/kinds"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch <crd-dir>")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "kubeflow.org_*.yaml"))
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "no CRDs found:", err)
		os.Exit(1)
	}
	for _, f := range files {
		if err := patch(f); err != nil {
			fmt.Fprintln(os.Stderr, f+":", err)
			os.Exit(1)
		}
	}
}

// defaultContainer is each kind's default container name (spec B1.4), from
// the table of kinds.
var defaultContainer = func() map[string]string {
	out := map[string]string{}
	for _, k := range kinds.All() {
		out[k.Info.Kind] = k.Info.DefaultContainerName
	}
	return out
}()

func patch(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return err
	}
	patched := 0
	for vi := range crd.Spec.Versions {
		s := crd.Spec.Versions[vi].Schema.OpenAPIV3Schema
		spec := s.Properties["spec"]
		for name, prop := range spec.Properties {
			if !strings.HasSuffix(name, "ReplicaSpecs") || prop.AdditionalProperties == nil || prop.AdditionalProperties.Schema == nil {
				continue
			}
			rs := prop.AdditionalProperties.Schema
			tmpl := rs.Properties["template"]
			podSpec := tmpl.Properties["spec"]
			containers := podSpec.Properties["containers"]
			if containers.Items == nil || containers.Items.Schema == nil {
				return fmt.Errorf("%s: no containers schema", name)
			}
			def, ok := defaultContainer[crd.Spec.Names.Kind]
			if !ok {
				return fmt.Errorf("unknown kind %s", crd.Spec.Names.Kind)
			}
			item := containers.Items.Schema
			item.Required = without(item.Required, "name")
			nameProp := item.Properties["name"]
			nameProp.Default = &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", def))}
			item.Properties["name"] = nameProp
			podSpec.Properties["containers"] = containers
			tmpl.Properties["spec"] = podSpec
			rs.Properties["template"] = tmpl
			spec.Properties[name] = prop
			patched++
		}
		s.Properties["spec"] = spec
	}
	if patched == 0 {
		return fmt.Errorf("no replica specs found")
	}
	out, err := yaml.Marshal(&crd)
	if err != nil {
		return err
	}
	// Keep controller-gen's header and drop the empty status it cannot omit.
	header := "---\n"
	if strings.HasPrefix(string(data), "---\n") {
		out = append([]byte(header), out...)
	}
	return os.WriteFile(path, stripStatus(out), 0o644)
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// stripStatus removes the zero-valued status block yaml.Marshal emits.
func stripStatus(b []byte) []byte {
	s := string(b)
	if i := strings.Index(s, "\nstatus:\n"); i >= 0 {
		s = s[:i+1]
	}
	return []byte(s)
}
