// Package jax plugs JAXJob into the job engine: Worker replicas only, the
// jax.distributed coordinator env and the all-workers success rule.
package jax

import (
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for JAXJob children.
const ControllerName = kubeflowv1.JAXJobControllerName

// errPortNotExposed is v1's error when the Worker's jax container has no jaxjob-port.
var errPortNotExposed = errors.New("default container port is not exposed")

// Options configure the adapter; there is nothing to configure yet.
type Options struct{}

// Framework is the JAXJob adapter.
type Framework struct{}

var _ engine.Framework[*kubeflowv1.JAXJob] = (*Framework)(nil)

// NewJob implements engine.Framework.
func (*Framework) NewJob() *kubeflowv1.JAXJob { return &kubeflowv1.JAXJob{} }

// New builds the adapter.
func New(Options) *Framework { return &Framework{} }

// ReplicaTypes implements engine.Framework: Worker is the only type.
func (*Framework) ReplicaTypes(j *kubeflowv1.JAXJob) []kubeflowv1.ReplicaType {
	if _, ok := j.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker]; ok {
		return []kubeflowv1.ReplicaType{kubeflowv1.JAXJobReplicaTypeWorker}
	}
	return nil
}

// IsMasterRole implements engine.Framework: index 0, which hosts the coordinator.
func (*Framework) IsMasterRole(_ *kubeflowv1.JAXJob, _ kubeflowv1.ReplicaType, index int) bool {
	return index == 0
}

// DecoratePod implements engine.Framework: the same env in every container.
func (*Framework) DecoratePod(j *kubeflowv1.JAXJob, _ kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error {
	env, err := envVars(j, index)
	if err != nil {
		return err
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	return nil
}

// Evaluate implements engine.Framework with v1's JAX rule: all workers.
func (*Framework) Evaluate(j *kubeflowv1.JAXJob, v engine.ReplicaView) engine.Verdict {
	verdict := engine.Verdict{
		RunningMessage:   fmt.Sprintf("JAXJob %s/%s is running.", j.Namespace, j.Name),
		SucceededMessage: fmt.Sprintf("JAXJob %s/%s successfully completed.", j.Namespace, j.Name),
	}
	spec, ok := v.Specs[kubeflowv1.JAXJobReplicaTypeWorker]
	if !ok {
		return verdict
	}
	st := v.Statuses[kubeflowv1.JAXJobReplicaTypeWorker]
	if st == nil {
		st = &kubeflowv1.ReplicaStatus{}
	}
	verdict.Running = st.Active > 0
	verdict.Succeeded = spec.ReplicaCount()-st.Succeeded == 0
	return verdict
}

// envVars builds the jax.distributed.initialize environment in v1's order.
func envVars(j *kubeflowv1.JAXJob, index int) ([]corev1.EnvVar, error) {
	port, err := coordinatorPort(j)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, s := range j.Spec.JAXReplicaSpecs {
		if s != nil && s.Replicas != nil {
			total += int(*s.Replicas)
		}
	}
	return []corev1.EnvVar{
		{Name: "PYTHONUNBUFFERED", Value: "1"},
		{Name: "COORDINATOR_PORT", Value: strconv.Itoa(int(port))},
		{Name: "COORDINATOR_ADDRESS", Value: kubeflowv1.ReplicaName(j.Name, kubeflowv1.JAXJobReplicaTypeWorker, 0)},
		{Name: "NUM_PROCESSES", Value: strconv.Itoa(total)},
		{Name: "PROCESS_ID", Value: strconv.Itoa(index)},
	}, nil
}

// coordinatorPort is the jaxjob-port of the Worker's jax container.
func coordinatorPort(j *kubeflowv1.JAXJob) (int32, error) {
	if p, ok := j.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker].ContainerPort(kubeflowv1.JAXJobDefaultContainerName, kubeflowv1.JAXJobDefaultPortName); ok {
		return p, nil
	}
	return 0, errPortNotExposed
}

var _ engine.JobDeleteEvents = (*Framework)(nil)

// JobDeleteReasons implements engine.JobDeleteEvents: v1's JAX controller
// announced a TTL deletion with the pod reasons ("Deleted job: <name>").
func (*Framework) JobDeleteReasons() (succeeded, failed string) {
	return "SuccessfulDeletePod", "FailedDeletePod"
}
