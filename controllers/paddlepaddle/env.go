package paddlepaddle

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Env var names read by `python -m paddle.distributed.launch`.
const (
	EnvMasterEndpoint = "PADDLE_MASTER"
	EnvNumNodes       = "PADDLE_NNODES"
	EnvJobID          = "PADDLE_JOB_ID"
	EnvServerNum      = "PADDLE_SERVER_NUM"
	EnvTrainerNum     = "PADDLE_TRAINER_NUM"
	// envPodIP is resolved by the kubelet from status.podIP so the
	// rendezvous pod can advertise its own address.
	envPodIP = "POD_IP_DUMMY"
)

// envVars builds the paddle launch environment in v1's order. Without a
// Master the job runs in collective mode and worker 0 is the rendezvous;
// with one it runs in parameter-server mode and master 0 is.
func envVars(j *kubeflowv1.PaddleJob, rt kubeflowv1.ReplicaType, index int) []corev1.EnvVar {
	total := 0
	for _, s := range j.Spec.PaddleReplicaSpecs {
		total += int(s.ReplicaCount())
	}
	env := []corev1.EnvVar{
		{Name: "PYTHONUNBUFFERED", Value: "1"},
		{Name: EnvJobID, Value: j.Name},
		{Name: EnvNumNodes, Value: strconv.Itoa(total)},
	}

	_, psMode := j.Spec.PaddleReplicaSpecs[kubeflowv1.PaddleJobReplicaTypeMaster]
	rendezvous := kubeflowv1.PaddleJobReplicaTypeWorker
	if psMode {
		rendezvous = kubeflowv1.PaddleJobReplicaTypeMaster
	}
	port := replicaPort(j, rendezvous)
	if rt == rendezvous && index == 0 {
		env = append(env,
			corev1.EnvVar{Name: envPodIP, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			corev1.EnvVar{Name: EnvMasterEndpoint, Value: fmt.Sprintf("$(%s):%d", envPodIP, port)},
		)
	} else {
		env = append(env, corev1.EnvVar{Name: EnvMasterEndpoint,
			Value: fmt.Sprintf("%s:%d", kubeflowv1.ReplicaName(j.Name, rendezvous, 0), port)})
	}
	if psMode {
		// Each pod holds exactly one server or one trainer.
		if rt == kubeflowv1.PaddleJobReplicaTypeMaster {
			env = append(env, corev1.EnvVar{Name: EnvServerNum, Value: "1"})
		} else {
			env = append(env, corev1.EnvVar{Name: EnvTrainerNum, Value: "1"})
		}
	}
	return env
}

// replicaPort is the "master" port of the replica type's paddle container,
// else 36543.
func replicaPort(j *kubeflowv1.PaddleJob, rt kubeflowv1.ReplicaType) int32 {
	if p, ok := j.Spec.PaddleReplicaSpecs[rt].ContainerPort(kubeflowv1.PaddleJobDefaultContainerName, kubeflowv1.PaddleJobDefaultPortName); ok {
		return p
	}
	return kubeflowv1.PaddleJobDefaultPort
}
