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

import "gomodules.xyz/jsonpatch/v2"

// dropNulls keeps the defaulting patch from writing nulls. The patch is
// the difference between the request and the defaulted object marshalled
// from Go, where a nil map or slice without omitempty (a job's
// <x>ReplicaSpecs, a pod template's containers) is null. Added, such a null
// turns v1's schema error `spec.pytorchReplicaSpecs: Required value` into
// `Invalid value: "null": must be of type object`. Defaulting never sets a
// field to null, so a null it adds only ever stands for "absent".
//
// It returns ops without the adds of null and with the null members
// of added or replaced objects removed, at any depth.
func dropNulls(ops []jsonpatch.JsonPatchOperation) []jsonpatch.JsonPatchOperation {
	out := make([]jsonpatch.JsonPatchOperation, 0, len(ops))
	for _, op := range ops {
		if op.Operation == "add" || op.Operation == "replace" {
			if op.Value == nil && op.Operation == "add" {
				continue
			}
			op.Value = withoutNullMembers(op.Value)
		}
		out = append(out, op)
	}
	return out
}

// withoutNullMembers is a copy of v without null object members; null list
// elements are kept, since removing them would shift indices.
func withoutNullMembers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			if e != nil {
				m[k] = withoutNullMembers(e)
			}
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = withoutNullMembers(e)
		}
		return l
	}
	return v
}
