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

package kueueproc

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// Object is a Kueue object of kind (ResourceFlavor, ClusterQueue,
// LocalQueue, ...) with spec (none when nil).
func Object(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	u.SetGroupVersionKind(Group.WithKind(kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// Condition is the status and reason of a condition of a Kueue object,
// empty if it has none of that type.
func Condition(u *unstructured.Unstructured, t string) (status, reason string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == t {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			return status, reason
		}
	}
	return "", ""
}

// AdmissionReady reports whether queued jobs are admitted through Kueue in
// namespace ns: a dry-run create of a PyTorchJob naming queue comes back
// suspended (Kueue's defaulting webhook, or the operator's in operator
// mode). Jobs created before would start unqueued.
func AdmissionReady(ctx context.Context, c client.Client, ns, queue string) error {
	job := testjobs.MakePyTorchJob("kueue-probe", ns).Master(1).Obj()
	job.Labels = map[string]string{QueueLabel: queue}
	if err := c.Create(ctx, job, client.DryRunAll); err != nil {
		return err
	}
	if !ptr.Deref(job.Spec.RunPolicy.Suspend, false) {
		return errors.New("a queued job's create was not suspended")
	}
	return nil
}
