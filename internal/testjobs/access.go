package testjobs

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// ReplicaSpecs gives tests one way into the six kinds' replica spec maps.
// It panics on anything that is not a kubeflow.org/v1 job: a test bug.
func ReplicaSpecs(obj client.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
	specs, _, _ := parts(obj)
	return specs
}

// RunPolicy is the job's runPolicy, whatever its kind (see ReplicaSpecs).
func RunPolicy(obj client.Object) *kubeflowv1.RunPolicy {
	_, rp, _ := parts(obj)
	return rp
}

// Status is the job's status, whatever its kind (see ReplicaSpecs).
func Status(obj client.Object) *kubeflowv1.JobStatus {
	_, _, st := parts(obj)
	return st
}

// Default applies the kind's defaults, as the defaulting webhook does.
func Default(obj client.Object) {
	switch j := obj.(type) {
	case *kubeflowv1.PyTorchJob:
		kubeflowv1.SetDefaults_PyTorchJob(j)
	case *kubeflowv1.TFJob:
		kubeflowv1.SetDefaults_TFJob(j)
	case *kubeflowv1.MPIJob:
		kubeflowv1.SetDefaults_MPIJob(j)
	case *kubeflowv1.XGBoostJob:
		kubeflowv1.SetDefaults_XGBoostJob(j)
	case *kubeflowv1.PaddleJob:
		kubeflowv1.SetDefaults_PaddleJob(j)
	case *kubeflowv1.JAXJob:
		kubeflowv1.SetDefaults_JAXJob(j)
	}
}

// parts is the one place that knows the six spec shapes.
func parts(obj client.Object) (map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, *kubeflowv1.RunPolicy, *kubeflowv1.JobStatus) {
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
	panic(fmt.Sprintf("not a kubeflow.org/v1 job: %T", obj))
}
