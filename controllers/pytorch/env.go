package pytorch

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// envVars builds the torch.distributed / torchrun environment in v1's order.
func envVars(j *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType, index int) ([]corev1.EnvVar, error) {
	specs := j.Spec.PyTorchReplicaSpecs
	env := []corev1.EnvVar{{Name: "PYTHONUNBUFFERED", Value: "1"}}

	total := 0
	for _, s := range specs {
		total += int(s.ReplicaCount())
	}
	// The rendezvous master is the Master, or worker 0 for worker-only jobs
	// (v1 left those without MASTER_ADDR/RANK/WORLD_SIZE).
	masterType := kubeflowv1.PyTorchJobReplicaTypeMaster
	rank := index
	if _, ok := specs[masterType]; ok {
		if rt == kubeflowv1.PyTorchJobReplicaTypeWorker {
			rank = index + int(specs[masterType].ReplicaCount())
		}
	} else {
		masterType = kubeflowv1.PyTorchJobReplicaTypeWorker
	}
	if _, ok := specs[masterType]; ok {
		port, err := replicaPort(j, masterType)
		if err != nil {
			return nil, err
		}
		addr := kubeflowv1.ReplicaName(j.Name, masterType, 0)
		p := strconv.Itoa(int(port))
		env = append(env,
			corev1.EnvVar{Name: "MASTER_PORT", Value: p},
			corev1.EnvVar{Name: "PET_MASTER_PORT", Value: p},
			corev1.EnvVar{Name: "MASTER_ADDR", Value: addr},
			corev1.EnvVar{Name: "PET_MASTER_ADDR", Value: addr},
			corev1.EnvVar{Name: "WORLD_SIZE", Value: strconv.Itoa(total * nprocPerNode(j))},
			corev1.EnvVar{Name: "RANK", Value: strconv.Itoa(rank)},
			corev1.EnvVar{Name: "PET_NODE_RANK", Value: strconv.Itoa(rank)},
		)
	}
	if j.Spec.NprocPerNode != nil {
		env = append(env, corev1.EnvVar{Name: "PET_NPROC_PER_NODE", Value: *j.Spec.NprocPerNode})
	}
	ep := j.Spec.ElasticPolicy
	if ep == nil {
		return append(env, corev1.EnvVar{Name: "PET_NNODES", Value: strconv.Itoa(total)}), nil
	}
	host := kubeflowv1.ReplicaName(j.Name, kubeflowv1.PyTorchJobReplicaTypeWorker, 0)
	if ep.RDZVHost != nil && *ep.RDZVHost != "" {
		host = *ep.RDZVHost
	}
	var port int32
	if ep.RDZVPort != nil {
		port = *ep.RDZVPort
	} else {
		p, err := replicaPort(j, kubeflowv1.PyTorchJobReplicaTypeWorker)
		if err != nil {
			return nil, err
		}
		port = p
	}
	backend := string(kubeflowv1.BackendC10D)
	if ep.RDZVBackend != nil && *ep.RDZVBackend != "" {
		backend = string(*ep.RDZVBackend)
	}
	env = append(env,
		corev1.EnvVar{Name: "PET_RDZV_ENDPOINT", Value: fmt.Sprintf("%s:%d", host, port)},
		corev1.EnvVar{Name: "PET_RDZV_BACKEND", Value: backend},
		corev1.EnvVar{Name: "PET_NNODES", Value: nnodes(j)},
	)
	if ep.MaxRestarts != nil {
		env = append(env, corev1.EnvVar{Name: "PET_MAX_RESTARTS", Value: strconv.Itoa(int(*ep.MaxRestarts))})
	}
	if ep.NProcPerNode != nil {
		env = append(env, corev1.EnvVar{Name: "PET_NPROC_PER_NODE", Value: strconv.Itoa(int(*ep.NProcPerNode))})
	}
	if ep.RDZVID != nil {
		env = append(env, corev1.EnvVar{Name: "PET_RDZV_ID", Value: *ep.RDZVID})
	}
	if ep.RDZVConf != nil {
		kv := make([]string, 0, len(ep.RDZVConf))
		for _, c := range ep.RDZVConf {
			kv = append(kv, c.Key+"="+c.Value)
		}
		env = append(env, corev1.EnvVar{Name: "PET_RDZV_CONF", Value: strings.Join(kv, ",")})
	}
	if ep.Standalone != nil && *ep.Standalone {
		env = append(env, corev1.EnvVar{Name: "PET_STANDALONE", Value: ""})
	}
	return env, nil
}

// nnodes is "<min>:<max>" for elastic jobs, from the effective bounds so
// that unset ones follow Worker.replicas.
func nnodes(j *kubeflowv1.PyTorchJob) string {
	if minR, maxR, ok := j.Spec.ElasticReplicas(); ok {
		return fmt.Sprintf("%d:%d", minR, maxR)
	}
	return strconv.Itoa(int(j.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker].ReplicaCount()))
}

// nprocPerNode is spec.nprocPerNode as an integer; auto/cpu/gpu count as 1.
func nprocPerNode(j *kubeflowv1.PyTorchJob) int {
	if j.Spec.NprocPerNode != nil {
		if n, err := strconv.Atoi(*j.Spec.NprocPerNode); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// replicaPort is the pytorchjob-port of the replica type's pytorch container.
func replicaPort(j *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType) (int32, error) {
	spec := j.Spec.PyTorchReplicaSpecs[rt]
	if spec == nil {
		return 0, fmt.Errorf("PyTorchJob %s has no %s replica spec", j.Name, rt)
	}
	// Like port defaulting: the pytorch container, else the first one.
	c := kubeflowv1.DefaultContainer(spec.Template.Spec.Containers, kubeflowv1.PyTorchJobDefaultContainerName)
	if p, ok := kubeflowv1.NamedPort(c, kubeflowv1.PyTorchJobDefaultPortName); ok {
		return p, nil
	}
	return 0, fmt.Errorf("PyTorchJob %s: %s has no port named %s in container %s",
		j.Name, rt, kubeflowv1.PyTorchJobDefaultPortName, kubeflowv1.PyTorchJobDefaultContainerName)
}
