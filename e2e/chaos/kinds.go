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

package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// kindDef describes one job kind to the suite: how to build a small job of
// it and which replica types play which role in a scenario design.
type kindDef struct {
	kind   string
	abbr   string // name prefix of its jobs
	plural string
	// decisive is the replica type whose success finishes the job.
	decisive kubeflowv1.ReplicaType
	// other is a replica type that is not decisive ("" when the kind has one
	// type only: JAX, whose job succeeds when all workers do).
	other kubeflowv1.ReplicaType
	// build returns a job with one decisive replica (JAX: `others` workers
	// only) and `others` replicas of the other type.
	build func(name, ns string, others int32) client.Object
}

var kinds = []kindDef{
	{
		kind: kubeflowv1.PyTorchJobKind, abbr: "pt", plural: kubeflowv1.PyTorchJobPlural,
		decisive: kubeflowv1.PyTorchJobReplicaTypeMaster, other: kubeflowv1.PyTorchJobReplicaTypeWorker,
		build: func(name, ns string, n int32) client.Object {
			return testjobs.MakePyTorchJob(name, ns).Master(1).Workers(n).Obj()
		},
	},
	{
		kind: kubeflowv1.TFJobKind, abbr: "tf", plural: kubeflowv1.TFJobPlural,
		decisive: kubeflowv1.TFJobReplicaTypeChief, other: kubeflowv1.TFJobReplicaTypeWorker,
		build: func(name, ns string, n int32) client.Object {
			return testjobs.MakeTFJob(name, ns).Chief(1).Workers(n).Obj()
		},
	},
	{
		kind: kubeflowv1.MPIJobKind, abbr: "mpi", plural: kubeflowv1.MPIJobPlural,
		decisive: kubeflowv1.MPIJobReplicaTypeLauncher, other: kubeflowv1.MPIJobReplicaTypeWorker,
		build: func(name, ns string, n int32) client.Object {
			return testjobs.MakeMPIJob(name, ns).Launcher().Workers(n).Obj()
		},
	},
	{
		kind: kubeflowv1.XGBoostJobKind, abbr: "xgb", plural: kubeflowv1.XGBoostJobPlural,
		decisive: kubeflowv1.XGBoostJobReplicaTypeMaster, other: kubeflowv1.XGBoostJobReplicaTypeWorker,
		build: func(name, ns string, n int32) client.Object {
			return testjobs.MakeXGBoostJob(name, ns).Master(1).Workers(n).Obj()
		},
	},
	{
		kind: kubeflowv1.PaddleJobKind, abbr: "pd", plural: kubeflowv1.PaddleJobPlural,
		decisive: kubeflowv1.PaddleJobReplicaTypeMaster, other: kubeflowv1.PaddleJobReplicaTypeWorker,
		build: func(name, ns string, n int32) client.Object {
			return testjobs.MakePaddleJob(name, ns).Master(1).Workers(n).Obj()
		},
	},
	{
		kind: kubeflowv1.JAXJobKind, abbr: "jax", plural: kubeflowv1.JAXJobPlural,
		decisive: kubeflowv1.JAXJobReplicaTypeWorker,
		build: func(name, ns string, n int32) client.Object {
			return testjobs.MakeJAXJob(name, ns).Workers(n).Obj()
		},
	},
}

func (k kindDef) gvr() schema.GroupVersionResource {
	return kubeflowv1.GroupVersion.WithResource(k.plural)
}

// podName is the operator's name for a replica's pod (MPI's launcher has
// no index in it).
func (k kindDef) podName(job string, rt kubeflowv1.ReplicaType, index int) string {
	if k.kind == kubeflowv1.MPIJobKind && rt == kubeflowv1.MPIJobReplicaTypeLauncher {
		return job + "-launcher"
	}
	return kubeflowv1.ReplicaName(job, rt, index)
}

// annotate sets a pod-template annotation on one replica type.
func annotate(obj client.Object, rt kubeflowv1.ReplicaType, k, v string) {
	s := testjobs.ReplicaSpecs(obj)[rt]
	if s.Template.Annotations == nil {
		s.Template.Annotations = map[string]string{}
	}
	s.Template.Annotations[k] = v
}
