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

package v1

import autoscalingv2 "k8s.io/api/autoscaling/v2"

// The elastic replica range is computed where it is used (PET_NNODES, the
// HPA, validation) instead of being stored by defaulting: v1 recomputes it
// from Worker.replicas on every reconcile, so after `kubectl scale` or an
// edit of Worker.replicas the unset bounds follow the new count. Stored
// once, they would keep the old count forever.

// ElasticReplicas returns the effective minReplicas and maxReplicas of a
// PyTorchJob's elastic policy; ok is false when the job is not elastic or
// its bounds are unset and it has no Worker spec.
func (s *PyTorchJobSpec) ElasticReplicas() (minReplicas, maxReplicas int32, ok bool) {
	if s.ElasticPolicy == nil {
		return 0, 0, false
	}
	return elasticReplicas(s.ElasticPolicy.MinReplicas, s.ElasticPolicy.MaxReplicas, s.PyTorchReplicaSpecs[PyTorchJobReplicaTypeWorker])
}

// ElasticReplicas returns the effective minReplicas and maxReplicas of a
// PaddleJob's elastic policy, like PyTorchJobSpec.ElasticReplicas.
func (s *PaddleJobSpec) ElasticReplicas() (minReplicas, maxReplicas int32, ok bool) {
	if s.ElasticPolicy == nil {
		return 0, 0, false
	}
	return elasticReplicas(s.ElasticPolicy.MinReplicas, s.ElasticPolicy.MaxReplicas, s.PaddleReplicaSpecs[PaddleJobReplicaTypeWorker])
}

// elasticReplicas is v1's rule: a missing bound copies the other one; when
// both are missing they are the Worker replicas (1 when unset).
func elasticReplicas(minReplicas, maxReplicas *int32, worker *ReplicaSpec) (int32, int32, bool) {
	switch {
	case minReplicas != nil && maxReplicas != nil:
		return *minReplicas, *maxReplicas, true
	case maxReplicas != nil:
		return *maxReplicas, *maxReplicas, true
	case minReplicas != nil:
		return *minReplicas, *minReplicas, true
	case worker == nil:
		return 0, 0, false
	case worker.Replicas == nil:
		return 1, 1, true
	}
	return *worker.Replicas, *worker.Replicas, true
}

// Autoscaling returns the bounds and metrics of the HPA an elastic
// PyTorchJob gets over its Worker replicas; ok is false when it wants none.
func (s *PyTorchJobSpec) Autoscaling() (minReplicas *int32, maxReplicas int32, metrics []autoscalingv2.MetricSpec, ok bool) {
	if s.ElasticPolicy == nil {
		return nil, 0, nil, false
	}
	return autoscaling(s.ElasticReplicas, s.ElasticPolicy.Metrics)
}

// Autoscaling is PyTorchJobSpec.Autoscaling for a PaddleJob: v1 ignored
// Paddle's elastic policy; here it gets the same HPA.
func (s *PaddleJobSpec) Autoscaling() (minReplicas *int32, maxReplicas int32, metrics []autoscalingv2.MetricSpec, ok bool) {
	if s.ElasticPolicy == nil {
		return nil, 0, nil, false
	}
	return autoscaling(s.ElasticReplicas, s.ElasticPolicy.Metrics)
}

// autoscaling wants metrics: with none the apiserver would default the HPA
// to 80% CPU, which would then look like drift forever.
func autoscaling(bounds func() (int32, int32, bool), metrics []autoscalingv2.MetricSpec) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	minReplicas, maxReplicas, ok := bounds()
	if !ok || len(metrics) == 0 {
		return nil, 0, nil, false
	}
	return &minReplicas, maxReplicas, metrics, true
}
