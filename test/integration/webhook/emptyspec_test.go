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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A job without replica specs", func() {
	// v1's CRDs require spec.<x>ReplicaSpecs, so `spec: {}` is rejected by
	// the schema. The defaulting webhook must not turn the missing map into
	// null (Invalid value: "null": must be of type object). JAXJob is not
	// enabled in this suite; its request skips the webhooks.
	DescribeTable("is rejected as spec.<x>ReplicaSpecs: Required value",
		func(ctx context.Context, kind, field string) {
			ns := newNamespace(ctx)
			obj := yamlObject(fmt.Sprintf("apiVersion: kubeflow.org/v1\nkind: %s\nmetadata:\n  name: empty\nspec: {}\n", kind), ns)
			err := k8s.Create(ctx, obj)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("spec." + field + ": Required value"))
			Expect(err.Error()).NotTo(ContainSubstring("must be of type object"))
		},
		Entry("PyTorchJob", "PyTorchJob", "pytorchReplicaSpecs"),
		Entry("TFJob", "TFJob", "tfReplicaSpecs"),
		Entry("MPIJob", "MPIJob", "mpiReplicaSpecs"),
		Entry("XGBoostJob", "XGBoostJob", "xgbReplicaSpecs"),
		Entry("PaddleJob", "PaddleJob", "paddleReplicaSpecs"),
		Entry("JAXJob", "JAXJob", "jaxReplicaSpecs"),
	)
})
