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
func Default(obj client.Object) { asJob(obj).ApplyDefaults() }

// parts reads the three through the API's Job interface.
func parts(obj client.Object) (map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, *kubeflowv1.RunPolicy, *kubeflowv1.JobStatus) {
	j := asJob(obj)
	return j.ReplicaSpecs(), j.RunPolicy(), j.JobStatus()
}

func asJob(obj client.Object) kubeflowv1.Job {
	j, ok := obj.(kubeflowv1.Job)
	if !ok {
		panic(fmt.Sprintf("not a kubeflow.org/v1 job: %T", obj))
	}
	return j
}
