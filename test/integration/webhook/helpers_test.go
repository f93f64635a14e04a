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

package webhook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seed-d8a409e9/training-operator/test/util"
)

// kustomization is the subset of a kustomization.yaml that
// config/webhook uses: resources and JSON 6902 patches with a target.
type kustomization struct {
	Resources []string `json:"resources"`
	Patches   []struct {
		Path   string `json:"path"`
		Target struct {
			Group   string `json:"group"`
			Version string `json:"version"`
			Kind    string `json:"kind"`
			Name    string `json:"name"`
		} `json:"target"`
	} `json:"patches"`
}

// renderKustomization renders a kustomization of plain resources and JSON
// 6902 patches, as `kubectl kustomize` does for config/webhook.
func renderKustomization(dir string) ([]client.Object, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, err
	}
	var out []client.Object
	for _, res := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, res))
		if err != nil {
			return nil, err
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", res, err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				return nil, fmt.Errorf("%s: %w", res, err)
			}
			gvk := u.GroupVersionKind()
			for _, p := range k.Patches {
				t := p.Target
				if t.Kind != gvk.Kind || t.Group != gvk.Group || t.Version != gvk.Version || (t.Name != "" && t.Name != u.GetName()) {
					continue
				}
				pdata, err := os.ReadFile(filepath.Join(dir, p.Path))
				if err != nil {
					return nil, err
				}
				pjs, err := yaml.YAMLToJSON(pdata)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", p.Path, err)
				}
				patch, err := jsonpatch.DecodePatch(pjs)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", p.Path, err)
				}
				if js, err = patch.Apply(js); err != nil {
					return nil, fmt.Errorf("applying %s: %w", p.Path, err)
				}
			}
			u = &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				return nil, err
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// seedObject is the seed document's sample of a kind, as written there
// (decoded like kubectl does, not through the Go types), in namespace ns.
func seedObject(kind, ns string) *unstructured.Unstructured {
	m, err := util.SeedManifests()
	Expect(err).NotTo(HaveOccurred())
	Expect(m).To(HaveKey(kind))
	return yamlObject(m[kind], ns)
}

// yamlObject decodes a manifest into an unstructured object in namespace ns.
func yamlObject(manifest, ns string) *unstructured.Unstructured {
	js, err := yaml.YAMLToJSON([]byte(manifest))
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(u.UnmarshalJSON(js)).To(Succeed())
	u.SetNamespace(ns)
	return u
}

// configWebhookDir is config/webhook of the repository.
func configWebhookDir() string { return filepath.Join(util.RepoRoot(), "config", "webhook") }
