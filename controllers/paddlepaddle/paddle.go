// Package paddlepaddle plugs PaddleJob into the job engine: Master before
// Worker, the collective / parameter-server env wiring, the success rule and
// the elastic HPA.
package paddlepaddle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for PaddleJob children.
const ControllerName = kubeflowv1.PaddleJobControllerName

// Options configure the adapter; there is nothing to configure yet.
type Options struct{}

// Framework is the PaddleJob adapter.
type Framework struct{}

var (
	_ engine.Framework       = (*Framework)(nil)
	_ engine.Autoscaled      = (*Framework)(nil)
	_ engine.JobDeleteEvents = (*Framework)(nil)
)

// New builds the adapter.
func New(Options) *Framework { return &Framework{} }

func job(obj client.Object) *kubeflowv1.PaddleJob { return obj.(*kubeflowv1.PaddleJob) }

// Kind implements engine.Framework.
func (*Framework) Kind() string { return kubeflowv1.PaddleJobKind }

// ControllerName implements engine.Framework.
func (*Framework) ControllerName() string { return ControllerName }

// MetricsLabel implements engine.Framework.
func (*Framework) MetricsLabel() string { return kubeflowv1.PaddleJobFrameworkName }

// NewJob implements engine.Framework.
func (*Framework) NewJob() client.Object { return &kubeflowv1.PaddleJob{} }

// Default implements engine.Framework.
func (*Framework) Default(obj client.Object) { kubeflowv1.SetDefaults_PaddleJob(job(obj)) }

// ReplicaSpecs implements engine.Framework.
func (*Framework) ReplicaSpecs(obj client.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
	return job(obj).Spec.PaddleReplicaSpecs
}

// RunPolicy implements engine.Framework.
func (*Framework) RunPolicy(obj client.Object) *kubeflowv1.RunPolicy { return &job(obj).Spec.RunPolicy }

// Status implements engine.Framework.
func (*Framework) Status(obj client.Object) *kubeflowv1.JobStatus { return &job(obj).Status }

// ReplicaTypes implements engine.Framework: Master before Worker.
func (*Framework) ReplicaTypes(obj client.Object) []kubeflowv1.ReplicaType {
	return engine.PresentTypes(job(obj).Spec.PaddleReplicaSpecs, kubeflowv1.PaddleJobReplicaTypeMaster, kubeflowv1.PaddleJobReplicaTypeWorker)
}

// DefaultContainerName implements engine.Framework.
func (*Framework) DefaultContainerName() string { return kubeflowv1.PaddleJobDefaultContainerName }

// IsMasterRole implements engine.Framework: every Master pod; none in
// collective (worker-only) mode.
func (*Framework) IsMasterRole(_ client.Object, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == kubeflowv1.PaddleJobReplicaTypeMaster
}

// DecoratePod implements engine.Framework: the same env in every container.
func (*Framework) DecoratePod(obj client.Object, rt kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error {
	env := envVars(job(obj), rt, index)
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	return nil
}

// Evaluate implements engine.Framework with v1's Paddle rule: the Master
// decides; without one, all workers must succeed (no elastic shortcut).
func (*Framework) Evaluate(obj client.Object, v engine.ReplicaView) engine.Verdict {
	j := job(obj)
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

// JobDeleteReasons implements engine.JobDeleteEvents: v1's Paddle controller
// announced a TTL deletion with the pod reasons ("Deleted job: <name>").
func (*Framework) JobDeleteReasons() (succeeded, failed string) {
	return "SuccessfulDeletePod", "FailedDeletePod"
}
