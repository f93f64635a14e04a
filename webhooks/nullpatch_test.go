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

package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"gomodules.xyz/jsonpatch/v2"
)

func TestDropNulls(t *testing.T) {
	op := func(operation, path string, value any) jsonpatch.JsonPatchOperation {
		return jsonpatch.JsonPatchOperation{Operation: operation, Path: path, Value: value}
	}
	cases := map[string]struct {
		in, want []jsonpatch.JsonPatchOperation
	}{
		"an added null is dropped": {
			in:   []jsonpatch.JsonPatchOperation{op("add", "/spec/pytorchReplicaSpecs", nil), op("add", "/spec/nprocPerNode", "auto")},
			want: []jsonpatch.JsonPatchOperation{op("add", "/spec/nprocPerNode", "auto")},
		},
		"null members of an added object are dropped at any depth": {
			in: []jsonpatch.JsonPatchOperation{op("add", "/spec", map[string]any{
				"tfReplicaSpecs": nil,
				"runPolicy":      map[string]any{"cleanPodPolicy": "None", "suspend": nil},
				"list":           []any{map[string]any{"a": nil, "b": 1.0}, nil},
			})},
			want: []jsonpatch.JsonPatchOperation{op("add", "/spec", map[string]any{
				"runPolicy": map[string]any{"cleanPodPolicy": "None"},
				"list":      []any{map[string]any{"b": 1.0}, nil},
			})},
		},
		"replaced objects lose their null members": {
			in:   []jsonpatch.JsonPatchOperation{op("replace", "/spec/runPolicy", map[string]any{"cleanPodPolicy": "None", "x": nil})},
			want: []jsonpatch.JsonPatchOperation{op("replace", "/spec/runPolicy", map[string]any{"cleanPodPolicy": "None"})},
		},
		"removes are kept": {
			in:   []jsonpatch.JsonPatchOperation{op("remove", "/spec/x", nil)},
			want: []jsonpatch.JsonPatchOperation{op("remove", "/spec/x", nil)},
		},
		"only nulls leave no ops": {
			in:   []jsonpatch.JsonPatchOperation{op("add", "/spec/mpiReplicaSpecs", nil)},
			want: []jsonpatch.JsonPatchOperation{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, dropNulls(tc.in)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
		})
	}
}
