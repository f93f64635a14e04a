// Package paddlepaddle plugs PaddleJob into the job engine: Master before
// Worker, the collective / parameter-server env wiring, the success rule and
// the elastic HPA.
package paddlepaddle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for PaddleJob children.
const ControllerName = kubeflowv1.PaddleJobControllerName

// Options configure the adapter; there is nothing to configure yet.
type Options struct{}

// Framework is the PaddleJob adapter.
type Framework struct{}

var _ engine.Framework[*kubeflowv1.PaddleJob] = (*Framework)(nil)

// NewJob implements engine.Framework.
func (*Framework) NewJob() *kubeflowv1.PaddleJob { return &kubeflowv1.PaddleJob{} }

// New builds the adapter.
func New(Options) *Framework { return &Framework{} }

// ReplicaTypes implements engine.Framework: Master before Worker.
func (*Framework) ReplicaTypes(j *kubeflowv1.PaddleJob) []kubeflowv1.ReplicaType {
	return engine.PresentTypes(j.Spec.PaddleReplicaSpecs, kubeflowv1.PaddleJobReplicaTypeMaster, kubeflowv1.PaddleJobReplicaTypeWorker)
}

// IsMasterRole implements engine.Framework: every Master pod; none in
// collective (worker-only) mode.
func (*Framework) IsMasterRole(_ *kubeflowv1.PaddleJob, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == kubeflowv1.PaddleJobReplicaTypeMaster
}

// DecoratePod implements engine.Framework: the same env in every container.
func (*Framework) DecoratePod(j *kubeflowv1.PaddleJob, rt kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error {
	env := envVars(j, rt, index)
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	return nil
}

// Evaluate implements engine.Framework with v1's Paddle rule: the Master
// decides; without one, all workers must succeed (no elastic shortcut).
func (*Framework) Evaluate(j *kubeflowv1.PaddleJob, v engine.ReplicaView) engine.Verdict {
	if spec, ok := v.Specs[kubeflowv1.PaddleJobReplicaTypeMaster]; ok {
		st := status(v, kubeflowv1.PaddleJobReplicaTypeMaster)
		return engine.Verdict{
			Running:          st.Active > 0,
			RunningMessage:   fmt.Sprintf("PaddleJob %s is running.", j.Name),
			Succeeded:        spec.ReplicaCount()-st.Succeeded == 0,
			SucceededMessage: fmt.Sprintf("PaddleJob %s is successfully completed.", j.Name),
		}
	}
	verdict := engine.Verdict{
		RunningMessage:   fmt.Sprintf("PaddleJob %s/%s is running.", j.Namespace, j.Name),
		SucceededMessage: fmt.Sprintf("PaddleJob %s/%s successfully completed.", j.Namespace, j.Name),
	}
	spec, ok := v.Specs[kubeflowv1.PaddleJobReplicaTypeWorker]
	if !ok {
		return verdict
	}
	st := status(v, kubeflowv1.PaddleJobReplicaTypeWorker)
	verdict.Running = st.Active > 0
	verdict.Succeeded = spec.ReplicaCount()-st.Succeeded == 0
	return verdict
}

func status(v engine.ReplicaView, rt kubeflowv1.ReplicaType) *kubeflowv1.ReplicaStatus {
	if st := v.Statuses[rt]; st != nil {
		return st
	}
	return &kubeflowv1.ReplicaStatus{}
}

var _ engine.JobDeleteEvents = (*Framework)(nil)

// JobDeleteReasons implements engine.JobDeleteEvents: v1's Paddle controller
// announced a TTL deletion with the pod reasons ("Deleted job: <name>").
func (*Framework) JobDeleteReasons() (succeeded, failed string) {
	return "SuccessfulDeletePod", "FailedDeletePod"
}
