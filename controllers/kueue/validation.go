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

	"k8s.io/apimachinery/pkg/util/validation/field"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/features"
)

// ValidateOnCreate implements JobWithCustomValidation: the replica
// templates' topology annotations, with the paths of the templates'
// metadata (spec.pytorchReplicaSpecs[Worker].template.metadata...).
func (j *Job) ValidateOnCreate(ctx context.Context) (field.ErrorList, error) {
	if !features.Enabled(features.TopologyAwareScheduling) {
		return nil, nil
	}
	specsPath := field.NewPath("spec", j.job.KindInfo().ReplicaSpecsField)
	specs := j.job.ReplicaSpecs()
	podSets, podSetsErr := j.PodSets(ctx)
	var errs field.ErrorList
	annotations := map[kueuev1beta2.PodSetReference]*field.Path{}
	for i, rt := range j.replicaTypes() {
		meta := &specs[rt].Template.ObjectMeta
		metaPath := specsPath.Key(string(rt)).Child("template", "metadata")
		annotations[kueuev1beta2.NewPodSetReference(string(rt))] = metaPath.Child("annotations")
		errs = append(errs, jobframework.ValidateTASPodSetRequest(metaPath, meta)...)
		if podSetsErr == nil {
			errs = append(errs, jobframework.ValidateSliceSizeAnnotationUpperBound(metaPath, meta, &podSets[i])...)
		}
	}
	if podSetsErr == nil {
		errs = append(errs, jobframework.ValidatePodSetGroupingTopology(podSets, annotations)...)
	}
	if len(errs) > 0 {
		return errs, nil
	}
	return nil, podSetsErr
}

// ValidateOnUpdate implements JobWithCustomValidation.
func (j *Job) ValidateOnUpdate(ctx context.Context, _ jobframework.GenericJob) (field.ErrorList, error) {
	return j.ValidateOnCreate(ctx)
}
