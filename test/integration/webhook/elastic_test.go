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
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

var _ = Describe("An elastic PyTorchJob without min/max replicas", func() {
	// The defaulting webhook stores the job; if it persisted
	// minReplicas = maxReplicas = Worker.replicas, the HPA would keep the
	// old bounds (and pull the Workers back) after a kubectl scale.
	It("keeps its HPA bounds on Worker.replicas after a scale", func(ctx context.Context) {
		ns := newNamespace(ctx)
		job := testjobs.MakePyTorchJob("el", ns).Workers(2).
			ElasticPolicy(&kubeflowv1.ElasticPolicy{Metrics: []autoscalingv2.MetricSpec{testjobs.CPUMetric(80)}}).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())

		op, err := util.StartOperator(restCfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(op.Stop)

		key := client.ObjectKeyFromObject(job)
		bounds := func() []int32 {
			var hpa autoscalingv2.HorizontalPodAutoscaler
			if err := k8s.Get(ctx, key, &hpa); err != nil || hpa.Spec.MinReplicas == nil {
				return nil
			}
			return []int32{*hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas}
		}
		Eventually(bounds, timeout, interval).Should(Equal([]int32{2, 2}))

		// Scaled through the scale subresource like kubectl scale. The
		// cluster's HPA controller may pull the Workers back to the old
		// bounds before the operator updates them, so scale until it sticks.
		Eventually(func(g Gomega) []int32 {
			var scale autoscalingv1.Scale
			g.Expect(k8s.SubResource("scale").Get(ctx, job, &scale)).To(Succeed())
			if scale.Spec.Replicas != 3 {
				scale.Spec.Replicas = 3
				g.Expect(k8s.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(&scale))).To(Succeed())
			}
			return bounds()
		}, timeout, interval).Should(Equal([]int32{3, 3}))

		var stored kubeflowv1.PyTorchJob
		Expect(k8s.Get(ctx, key, &stored)).To(Succeed())
		Expect(stored.Spec.ElasticPolicy.MinReplicas).To(BeNil(), "not stored by defaulting")
		Expect(stored.Spec.ElasticPolicy.MaxReplicas).To(BeNil(), "not stored by defaulting")
	})
})
