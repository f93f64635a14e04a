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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Admission is what Kueue's webhooks did for the kinds it integrated, in
// the operator's webhooks: defaulting (the namespace's default LocalQueue,
// suspend a job Kueue is to queue, hand a job to MultiKueue) and
// validation (queue-name label, its immutability while the job runs,
// priority class, topology annotations), with jobframework's functions.
type Admission struct {
	// reader reads LocalQueues, ClusterQueues, AdmissionChecks, Namespaces
	// and a job's owners (the manager's cached client).
	reader   client.Client
	settings *Settings
}

// NewAdmission is the admission of queued jobs with Kueue's settings.
func NewAdmission(reader client.Client, settings *Settings) *Admission {
	return &Admission{reader: reader, settings: settings}
}

// Default defaults a job being created, as Kueue's own webhooks default
// the kinds they integrate.
func (a *Admission) Default(ctx context.Context, job kubeflowv1.Job) error {
	j := NewJob(job)
	jobframework.ApplyDefaultLocalQueue(job, a.defaultQueueExists(ctx))
	if err := jobframework.ApplyDefaultForSuspend(ctx, j, a.reader, a.settings.ManageJobsWithoutQueueName,
		a.settings.ManagedJobsNamespaceSelector); err != nil {
		return err
	}
	a.defaultManagedBy(ctx, j)
	return nil
}

// Validate validates a job being created (old is nil) or updated.
func (a *Admission) Validate(ctx context.Context, old, new kubeflowv1.Job) (field.ErrorList, error) {
	j := NewJob(new)
	if old == nil {
		errs := jobframework.ValidateJobOnCreate(j)
		more, err := j.ValidateOnCreate(ctx)
		return append(errs, more...), err
	}
	errs := jobframework.ValidateJobOnUpdate(NewJob(old), j, a.defaultQueueExists(ctx))
	more, err := j.ValidateOnUpdate(ctx, NewJob(old))
	return append(errs, more...), err
}

// defaultQueueExists reports whether a namespace has Kueue's default
// LocalQueue ("default").
func (a *Admission) defaultQueueExists(ctx context.Context) func(string) bool {
	return func(ns string) bool {
		var lq kueuev1beta2.LocalQueue
		return a.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: string(constants.DefaultLocalQueueName)}, &lq) == nil
	}
}

// defaultManagedBy hands a job to MultiKueue when its LocalQueue's
// ClusterQueue has a MultiKueue admission check. jobframework's own
// ApplyDefaultForManagedBy reads this from Kueue's in-memory queue and
// scheduler caches, which only Kueue's process fills; this reads the same
// objects from the API.
func (a *Admission) defaultManagedBy(ctx context.Context, j *Job) {
	if !j.CanDefaultManagedBy() {
		return
	}
	lqName := jobframework.QueueName(j)
	if lqName == "" {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	var lq kueuev1beta2.LocalQueue
	if err := a.reader.Get(ctx, types.NamespacedName{Namespace: j.job.GetNamespace(), Name: string(lqName)}, &lq); err != nil {
		log.V(5).Info("LocalQueue not found, managedBy not defaulted", "localQueue", lqName, "error", err)
		return
	}
	var cq kueuev1beta2.ClusterQueue
	if err := a.reader.Get(ctx, types.NamespacedName{Name: string(lq.Spec.ClusterQueue)}, &cq); err != nil || cq.Spec.AdmissionChecksStrategy == nil {
		return
	}
	for _, rule := range cq.Spec.AdmissionChecksStrategy.AdmissionChecks {
		var ac kueuev1beta2.AdmissionCheck
		if err := a.reader.Get(ctx, types.NamespacedName{Name: string(rule.Name)}, &ac); err != nil {
			continue
		}
		if ac.Spec.ControllerName == kueuev1beta2.MultiKueueControllerName {
			j.SetManagedBy(ptr.To(kueuev1beta2.MultiKueueControllerName))
			return
		}
	}
}
