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

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

func TestElasticReplicas(t *testing.T) {
	type bounds struct {
		Min, Max int32
		OK       bool
	}
	worker := func(n *int32) specs { return specs{"Worker": replica(n, "", container("pytorch"))} }
	cases := map[string]struct {
		specs    specs
		min, max *int32
		want     bounds
	}{
		"both set are kept":              {specs: worker(i32(2)), min: i32(1), max: i32(4), want: bounds{1, 4, true}},
		"only max: min = max":            {specs: worker(i32(2)), max: i32(4), want: bounds{4, 4, true}},
		"only min: max = min":            {specs: worker(i32(2)), min: i32(3), want: bounds{3, 3, true}},
		"neither: the Worker replicas":   {specs: worker(i32(5)), want: bounds{5, 5, true}},
		"neither, Worker replicas unset": {specs: worker(nil), want: bounds{1, 1, true}},
		"neither and no Worker":          {specs: specs{"Master": replica(i32(1), "", container("pytorch"))}, want: bounds{}},
		"set bounds need no Worker":      {specs: specs{}, min: i32(2), want: bounds{2, 2, true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pt := PyTorchJobSpec{PyTorchReplicaSpecs: tc.specs, ElasticPolicy: &ElasticPolicy{MinReplicas: tc.min, MaxReplicas: tc.max}}
			var got bounds
			got.Min, got.Max, got.OK = pt.ElasticReplicas()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PyTorch (-want +got):\n%s", diff)
			}
			pd := PaddleJobSpec{PaddleReplicaSpecs: tc.specs, ElasticPolicy: &PaddleElasticPolicy{MinReplicas: tc.min, MaxReplicas: tc.max}}
			got.Min, got.Max, got.OK = pd.ElasticReplicas()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Paddle (-want +got):\n%s", diff)
			}
		})
	}
	var notElastic PyTorchJobSpec
	if _, _, ok := notElastic.ElasticReplicas(); ok {
		t.Error("a job without elasticPolicy has no elastic range")
	}
}

func TestAutoscaling(t *testing.T) {
	type hpa struct {
		Min     *int32
		Max     int32
		Metrics []autoscalingv2.MetricSpec
		OK      bool
	}
	cpu := []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType}}
	worker := specs{"Worker": replica(i32(3), "", container("pytorch"))}
	cases := map[string]struct {
		elastic bool
		metrics []autoscalingv2.MetricSpec
		want    hpa
	}{
		"not elastic: none":             {},
		"elastic without metrics: none": {elastic: true},
		"elastic with metrics: bounds":  {elastic: true, metrics: cpu, want: hpa{i32(3), 3, cpu, true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pt := PyTorchJobSpec{PyTorchReplicaSpecs: worker}
			pd := PaddleJobSpec{PaddleReplicaSpecs: worker}
			if tc.elastic {
				pt.ElasticPolicy = &ElasticPolicy{Metrics: tc.metrics}
				pd.ElasticPolicy = &PaddleElasticPolicy{Metrics: tc.metrics}
			}
			var got hpa
			got.Min, got.Max, got.Metrics, got.OK = pt.Autoscaling()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PyTorch (-want +got):\n%s", diff)
			}
			got.Min, got.Max, got.Metrics, got.OK = pd.Autoscaling()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Paddle (-want +got):\n%s", diff)
			}
		})
	}
}
