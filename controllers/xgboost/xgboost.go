// Package xgboost plugs XGBoostJob into the job engine: Master before
// Worker, the Rabit/LightGBM env wiring and the Master-decides success rule.
package xgboost

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for XGBoostJob children.
const ControllerName = kubeflowv1.XGBoostJobControllerName

// Options configure the adapter; there is nothing to configure yet.
type Options struct{}

// Framework is the XGBoostJob adapter.
type Framework struct{}

var _ engine.Framework[*kubeflowv1.XGBoostJob] = (*Framework)(nil)

// NewJob implements engine.Framework.
func (*Framework) NewJob() *kubeflowv1.XGBoostJob { return &kubeflowv1.XGBoostJob{} }

// New builds the adapter.
func New(Options) *Framework { return &Framework{} }

// ReplicaTypes implements engine.Framework: Master before Worker.
func (*Framework) ReplicaTypes(j *kubeflowv1.XGBoostJob) []kubeflowv1.ReplicaType {
	return engine.PresentTypes(j.Spec.XGBReplicaSpecs, kubeflowv1.XGBoostJobReplicaTypeMaster, kubeflowv1.XGBoostJobReplicaTypeWorker)
}

// IsMasterRole implements engine.Framework: the Master pods.
func (*Framework) IsMasterRole(_ *kubeflowv1.XGBoostJob, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == kubeflowv1.XGBoostJobReplicaTypeMaster
}

// DecoratePod implements engine.Framework: the same env in every container.
func (*Framework) DecoratePod(j *kubeflowv1.XGBoostJob, rt kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error {
	env, err := envVars(j, rt, index)
	if err != nil {
		return err
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	return nil
}

// Evaluate implements engine.Framework with v1's rule: the Master decides.
// A finished Master also reads as running, so that a job whose Master ended
// between two passes records Running before Succeeded, as v1 does.
func (*Framework) Evaluate(j *kubeflowv1.XGBoostJob, v engine.ReplicaView) engine.Verdict {
	verdict := engine.Verdict{
		RunningMessage:   fmt.Sprintf("XGBoostJob %s is running.", j.Name),
		SucceededMessage: fmt.Sprintf("XGBoostJob %s is successfully completed.", j.Name),
	}
	spec, ok := v.Specs[kubeflowv1.XGBoostJobReplicaTypeMaster]
	if !ok {
		return verdict
	}
	st := v.Statuses[kubeflowv1.XGBoostJobReplicaTypeMaster]
	if st == nil {
		st = &kubeflowv1.ReplicaStatus{}
	}
	verdict.Succeeded = spec.ReplicaCount()-st.Succeeded == 0
	verdict.Running = st.Active > 0 || verdict.Succeeded
	return verdict
}

// envVars builds the Rabit tracker / LightGBM environment in v1's order.
func envVars(j *kubeflowv1.XGBoostJob, rt kubeflowv1.ReplicaType, index int) ([]corev1.EnvVar, error) {
	specs := j.Spec.XGBReplicaSpecs
	master, ok := specs[kubeflowv1.XGBoostJobReplicaTypeMaster]
	if !ok || master == nil {
		return nil, fmt.Errorf("XGBoostJob %s has no %s replica spec", j.Name, kubeflowv1.XGBoostJobReplicaTypeMaster)
	}
	rank := index
	if rt == kubeflowv1.XGBoostJobReplicaTypeWorker {
		rank += int(master.ReplicaCount())
	}
	masterPort, err := replicaPort(j, kubeflowv1.XGBoostJobReplicaTypeMaster)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, s := range specs {
		if s != nil && s.Replicas != nil {
			total += int(*s.Replicas)
		}
	}
	env := []corev1.EnvVar{
		{Name: "MASTER_PORT", Value: strconv.Itoa(int(masterPort))},
		{Name: "MASTER_ADDR", Value: kubeflowv1.ReplicaName(j.Name, kubeflowv1.XGBoostJobReplicaTypeMaster, 0)},
		{Name: "WORLD_SIZE", Value: strconv.Itoa(total)},
		{Name: "RANK", Value: strconv.Itoa(rank)},
		{Name: "PYTHONUNBUFFERED", Value: "1"},
	}
	if total > 1 {
		// LightGBM wants the worker port and the worker host names.
		workerPort, err := replicaPort(j, kubeflowv1.XGBoostJobReplicaTypeWorker)
		if err != nil {
			return nil, err
		}
		addrs := make([]string, total-1)
		for i := range addrs {
			addrs[i] = kubeflowv1.ReplicaName(j.Name, kubeflowv1.XGBoostJobReplicaTypeWorker, i)
		}
		env = append(env,
			corev1.EnvVar{Name: "WORKER_PORT", Value: strconv.Itoa(int(workerPort))},
			corev1.EnvVar{Name: "WORKER_ADDRS", Value: strings.Join(addrs, ",")},
		)
	}
	return env, nil
}

// replicaPort is the xgboostjob-port of the replica type's xgboost container.
func replicaPort(j *kubeflowv1.XGBoostJob, rt kubeflowv1.ReplicaType) (int32, error) {
	if p, ok := j.Spec.XGBReplicaSpecs[rt].ContainerPort(kubeflowv1.XGBoostJobDefaultContainerName, kubeflowv1.XGBoostJobDefaultPortName); ok {
		return p, nil
	}
	return 0, fmt.Errorf("XGBoostJob %s: %s has no port named %s in container %s",
		j.Name, rt, kubeflowv1.XGBoostJobDefaultPortName, kubeflowv1.XGBoostJobDefaultContainerName)
}
