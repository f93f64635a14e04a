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

package kueue

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// ConditionKueueIntegrationConflict is an additive condition type: the
// operator runs with --kueue-integration=operator, but Kueue's
// configuration also has Kueue's own integration manage the job's kind.
// Kueue's integration keeps the job (one Workload, one starter); the
// condition and a Warning event of the same reason say how to fix the
// configuration.
const ConditionKueueIntegrationConflict kubeflowv1.JobConditionType = "KueueIntegrationConflict"

// conflictMessage tells what is wrong and how to fix it.
func conflictMessage(kind string) string {
	return fmt.Sprintf("Kueue's integrations.frameworks lists %s while this operator runs with --kueue-integration=operator: "+
		"Kueue's own integration manages this job. Remove %s from integrations.frameworks and list %s in integrations.externalFrameworks, "+
		"or run the operator with --kueue-integration=builtin",
		builtinFramework(kind), builtinFramework(kind), ExternalFramework(kind))
}

// builtinFramework is the integrations.frameworks entry of Kueue's own
// integration of a kind, e.g. kubeflow.org/pytorchjob.
func builtinFramework(kind string) string {
	return kubeflowv1.GroupVersion.Group + "/" + strings.ToLower(kind)
}

// conflicts marks the queued jobs of a kind both integrations would manage.
type conflicts struct {
	client client.Client
	newJob func() kubeflowv1.Job
	rec    record.EventRecorder
}

func setupConflicts(mgr ctrl.Manager, newJob func() kubeflowv1.Job, rec record.EventRecorder) error {
	r := &conflicts{client: mgr.GetClient(), newJob: newJob, rec: rec}
	queued := predicate.NewPredicateFuncs(func(o client.Object) bool { return jobframework.QueueNameForObject(o) != "" })
	return ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(newJob().KindInfo().Kind)+"-kueue-conflict").
		For(newJob(), builder.WithPredicates(queued)).
		Complete(r)
}

func (r *conflicts) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := r.newJob()
	if err := r.client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if jobframework.QueueNameForObject(job) == "" {
		return ctrl.Result{}, nil
	}
	for _, c := range job.JobStatus().Conditions {
		if c.Type == ConditionKueueIntegrationConflict && c.Status == corev1.ConditionTrue {
			return ctrl.Result{}, nil
		}
	}
	kind := job.KindInfo().Kind
	orig := job.DeepCopyObject().(kubeflowv1.Job)
	now := metav1.Now()
	st := job.JobStatus()
	st.Conditions = append(st.Conditions, kubeflowv1.JobCondition{
		Type: ConditionKueueIntegrationConflict, Status: corev1.ConditionTrue,
		Reason: string(ConditionKueueIntegrationConflict), Message: conflictMessage(kind),
		LastUpdateTime: now, LastTransitionTime: now,
	})
	if err := r.client.Status().Patch(ctx, job, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.rec.Event(job, corev1.EventTypeWarning, string(ConditionKueueIntegrationConflict), conflictMessage(kind))
	return ctrl.Result{}, nil
}
