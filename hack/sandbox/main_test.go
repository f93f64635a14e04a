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

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadCRDs(t *testing.T) {
	f := filepath.Join(t.TempDir(), "crds.yaml")
	data := `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  names: {kind: Foo, plural: foos}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
---
# a comment-only document
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-a-crd
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bars.example.com
`
	if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	crds, err := readCRDs(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 2 || crds[0].Name != "foos.example.com" || crds[1].Name != "bars.example.com" {
		t.Fatalf("got %d CRDs: %+v", len(crds), crds)
	}
	if crds[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Type != "object" {
		t.Errorf("schema not decoded: %+v", crds[0].Spec.Versions[0])
	}

	// The project's own CRDs, if present, must decode.
	matches, _ := filepath.Glob("../../config/crd/bases/*.yaml")
	for _, m := range matches {
		crds, err := readCRDs(m)
		if err != nil || len(crds) == 0 {
			t.Errorf("%s: %d CRDs, err %v", m, len(crds), err)
		}
	}
}

func TestCheckWorkDir(t *testing.T) {
	dir := t.TempDir()
	if err := checkWorkDir(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing dir: %v", err)
	}
	if err := checkWorkDir(dir); err != nil {
		t.Errorf("empty dir: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "precious.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkWorkDir(dir); err == nil {
		t.Errorf("unrelated non-empty dir accepted")
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkWorkDir(dir); err != nil {
		t.Errorf("sandbox dir refused: %v", err)
	}
	cwd, _ := os.Getwd()
	if err := checkWorkDir(filepath.Dir(cwd)); err == nil {
		t.Errorf("parent of the working directory accepted")
	}
}
