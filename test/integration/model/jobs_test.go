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

package model

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// newJob returns an empty job object of a kind, for reads.
func newJob(kind string) client.Object {
	switch kind {
	case kubeflowv1.PyTorchJobKind:
		return &kubeflowv1.PyTorchJob{}
	case kubeflowv1.TFJobKind:
		return &kubeflowv1.TFJob{}
	case kubeflowv1.MPIJobKind:
		return &kubeflowv1.MPIJob{}
	case kubeflowv1.XGBoostJobKind:
		return &kubeflowv1.XGBoostJob{}
	case kubeflowv1.PaddleJobKind:
		return &kubeflowv1.PaddleJob{}
	case kubeflowv1.JAXJobKind:
		return &kubeflowv1.JAXJob{}
	}
	panic("unknown kind " + kind)
}

// jobParts exposes the common fields of any kind.
func jobParts(obj client.Object) (map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, *kubeflowv1.RunPolicy, *kubeflowv1.JobStatus) {
	switch j := obj.(type) {
	case *kubeflowv1.PyTorchJob:
		return j.Spec.PyTorchReplicaSpecs, &j.Spec.RunPolicy, &j.Status
	case *kubeflowv1.TFJob:
		return j.Spec.TFReplicaSpecs, &j.Spec.RunPolicy, &j.Status
	case *kubeflowv1.MPIJob:
		return j.Spec.MPIReplicaSpecs, &j.Spec.RunPolicy, &j.Status
	case *kubeflowv1.XGBoostJob:
		return j.Spec.XGBReplicaSpecs, &j.Spec.RunPolicy, &j.Status
	case *kubeflowv1.PaddleJob:
		return j.Spec.PaddleReplicaSpecs, &j.Spec.RunPolicy, &j.Status
	case *kubeflowv1.JAXJob:
		return j.Spec.JAXReplicaSpecs, &j.Spec.RunPolicy, &j.Status
	}
	panic(fmt.Sprintf("unknown job type %T", obj))
}

func jobStatus(obj client.Object) *kubeflowv1.JobStatus {
	_, _, st := jobParts(obj)
	return st
}

// buildJob turns a scenario into its job object.
func buildJob(s *Scenario) client.Object {
	n := func(rt kubeflowv1.ReplicaType) int32 {
		if r := s.Replica(rt); r != nil {
			return int32(r.Replicas)
		}
		return 0
	}
	var obj client.Object
	switch s.Kind {
	case kubeflowv1.PyTorchJobKind:
		w := testjobs.MakePyTorchJob(s.Name, s.Namespace)
		if n("Master") > 0 {
			w.Master(n("Master"))
		}
		if n("Worker") > 0 {
			w.Workers(n("Worker"))
		}
		obj = w.Obj()
	case kubeflowv1.TFJobKind:
		w := testjobs.MakeTFJob(s.Name, s.Namespace)
		for _, r := range s.Replicas {
			w.Replicas(r.Type, int32(r.Replicas))
		}
		if s.AllWorkers {
			w.SuccessPolicy(kubeflowv1.SuccessPolicyAllWorkers)
		}
		obj = w.Obj()
	case kubeflowv1.MPIJobKind:
		w := testjobs.MakeMPIJob(s.Name, s.Namespace).Launcher().Workers(n("Worker"))
		if s.Naming == NamedMain {
			w.MainContainer(trainer)
		}
		for _, r := range s.Replicas {
			w.ContainerName(r.Type, s.MainContainer(r.Type))
		}
		obj = w.Obj()
	case kubeflowv1.XGBoostJobKind:
		w := testjobs.MakeXGBoostJob(s.Name, s.Namespace).Master(1)
		if n("Worker") > 0 {
			w.Workers(n("Worker"))
		}
		obj = w.Obj()
	case kubeflowv1.PaddleJobKind:
		w := testjobs.MakePaddleJob(s.Name, s.Namespace)
		if n("Master") > 0 {
			w.Master(n("Master"))
		}
		w.Workers(n("Worker"))
		obj = w.Obj()
	case kubeflowv1.JAXJobKind:
		obj = testjobs.MakeJAXJob(s.Name, s.Namespace).Workers(n("Worker")).Obj()
	default:
		panic("unknown kind " + s.Kind)
	}
	specs, rp, _ := jobParts(obj)
	for _, r := range s.Replicas {
		specs[r.Type].RestartPolicy = r.Policy
		tmpl := &specs[r.Type].Template.Spec
		tmpl.SchedulerName = noScheduler
		if s.FailurePolicy != nil {
			// A sidecar keeps the pod running when the main container exits
			// (MainExit), which the failure policy counts as a failure. It
			// comes first where spec.mainContainer says which one is main.
			c := corev1.Container{Name: sidecar, Image: tmpl.Containers[0].Image}
			if s.Naming == NamedMain {
				tmpl.Containers = append([]corev1.Container{c}, tmpl.Containers...)
			} else {
				tmpl.Containers = append(tmpl.Containers, c)
			}
		}
	}
	rp.BackoffLimit = s.BackoffLimit
	rp.FailurePolicy = s.FailurePolicy.DeepCopy()
	return obj
}

// sidecar is the second container of a failure-policy scenario's pods.
const sidecar = "sidecar"
