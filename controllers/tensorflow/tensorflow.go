// Package tensorflow plugs TFJob into the job engine: replica types, the
// TF_CONFIG cluster spec and v1's success rule (Chief/Master, else worker 0
// or all workers).
package tensorflow

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for TFJob children.
const ControllerName = kubeflowv1.TFJobControllerName

// EnvCustomClusterDomain is the operator env var v1 read the TF_CONFIG
// cluster domain from; the operator passes its value as Options.ClusterDomain.
const EnvCustomClusterDomain = "CUSTOM_CLUSTER_DOMAIN"

// Options configure the adapter (from the operator Configuration).
type Options struct {
	// ClusterDomain is appended to the Service FQDNs in TF_CONFIG
	// ("<job>-<rt>-<i>.<ns>.svc.<ClusterDomain>"); v1 read it from the
	// operator's CUSTOM_CLUSTER_DOMAIN env var. "" leaves the names ending in ".svc".
	ClusterDomain string
}

// Framework is the TFJob adapter.
type Framework struct {
	opts Options
}

var _ engine.Framework[*kubeflowv1.TFJob] = (*Framework)(nil)

// NewJob implements engine.Framework.
func (*Framework) NewJob() *kubeflowv1.TFJob { return &kubeflowv1.TFJob{} }

// New builds the adapter.
func New(opts Options) *Framework { return &Framework{opts: opts} }

// replicaOrder is the order pods are made in: Chief, Master, PS, Worker, Evaluator.
var replicaOrder = []kubeflowv1.ReplicaType{
	kubeflowv1.TFJobReplicaTypeChief,
	kubeflowv1.TFJobReplicaTypeMaster,
	kubeflowv1.TFJobReplicaTypePS,
	kubeflowv1.TFJobReplicaTypeWorker,
	kubeflowv1.TFJobReplicaTypeEval,
}

// ReplicaTypes implements engine.Framework: Chief, Master, PS, Worker,
// Evaluator, those present only.
func (*Framework) ReplicaTypes(j *kubeflowv1.TFJob) []kubeflowv1.ReplicaType {
	return engine.PresentTypes(j.Spec.TFReplicaSpecs, replicaOrder...)
}

// hasChiefOrMaster reports whether the job has a Chief or Master spec.
func hasChiefOrMaster(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) bool {
	_, chief := specs[kubeflowv1.TFJobReplicaTypeChief]
	_, master := specs[kubeflowv1.TFJobReplicaTypeMaster]
	return chief || master
}

// IsMasterRole implements engine.Framework: Chief/Master pods, or worker 0
// when the job has neither.
func (*Framework) IsMasterRole(j *kubeflowv1.TFJob, rt kubeflowv1.ReplicaType, index int) bool {
	if hasChiefOrMaster(j.Spec.TFReplicaSpecs) {
		return kubeflowv1.IsChiefOrMaster(rt)
	}
	return rt == kubeflowv1.TFJobReplicaTypeWorker && index == 0
}

// DecoratePod implements engine.Framework: TF_CONFIG on the first container
// named tensorflow, for distributed jobs only. No other env is added.
func (f *Framework) DecoratePod(j *kubeflowv1.TFJob, rt kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error {
	if !isDistributed(j) {
		return nil
	}
	cfg, err := tfConfig(j, rt, index, f.opts.ClusterDomain)
	if err != nil {
		return err
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if c.Name == kubeflowv1.TFJobDefaultContainerName {
			c.Env = append(c.Env, corev1.EnvVar{Name: EnvTFConfig, Value: cfg})
			break
		}
	}
	return nil
}

var _ engine.FailureWording[*kubeflowv1.TFJob] = (*Framework)(nil)

// FailedMessage implements engine.FailureWording: v1's TF controller says
// "<ns>/<name> has failed" where the others say "<name> is failed".
func (*Framework) FailedMessage(j *kubeflowv1.TFJob, failedReplicas string) string {
	return fmt.Sprintf("TFJob %s/%s has failed because %s replica(s) failed", j.GetNamespace(), j.GetName(), failedReplicas)
}

var _ engine.FailureTolerance[*kubeflowv1.TFJob] = (*Framework)(nil)

// ToleratesFailure implements engine.FailureTolerance: with
// enableDynamicWorker, workers join and leave, and v1 ignores a failed one.
func (*Framework) ToleratesFailure(j *kubeflowv1.TFJob, rt kubeflowv1.ReplicaType) bool {
	return rt == kubeflowv1.TFJobReplicaTypeWorker && j.Spec.EnableDynamicWorker
}

// Evaluate implements engine.Framework with v1's TF rule: with a Chief or
// Master, it decides; otherwise the workers do, and by default worker 0
// finishing cleanly is enough (successPolicy AllWorkers waits for all).
func (*Framework) Evaluate(j *kubeflowv1.TFJob, v engine.ReplicaView) engine.Verdict {
	verdict := engine.Verdict{
		RunningMessage:   fmt.Sprintf("TFJob %s/%s is running.", j.Namespace, j.Name),
		SucceededMessage: fmt.Sprintf("TFJob %s/%s successfully completed.", j.Namespace, j.Name),
	}
	if hasChiefOrMaster(v.Specs) {
		for _, rt := range []kubeflowv1.ReplicaType{kubeflowv1.TFJobReplicaTypeChief, kubeflowv1.TFJobReplicaTypeMaster} {
			spec, ok := v.Specs[rt]
			if !ok {
				continue
			}
			st := status(v, rt)
			verdict.Running = verdict.Running || st.Active > 0
			verdict.Succeeded = verdict.Succeeded || spec.ReplicaCount()-st.Succeeded == 0
		}
		return verdict
	}
	spec, ok := v.Specs[kubeflowv1.TFJobReplicaTypeWorker]
	if !ok {
		return verdict
	}
	st := status(v, kubeflowv1.TFJobReplicaTypeWorker)
	allWorkers := j.Spec.SuccessPolicy != nil && *j.Spec.SuccessPolicy == kubeflowv1.SuccessPolicyAllWorkers
	verdict.Succeeded = spec.ReplicaCount()-st.Succeeded == 0 || (!allWorkers && worker0Completed(v))
	verdict.Running = !verdict.Succeeded && st.Active > 0
	return verdict
}

// worker0Completed reports whether worker 0's pod Succeeded with exit code 0
// in its tensorflow container, as v1 reads it.
func worker0Completed(v engine.ReplicaView) bool {
	pod := v.Pods[kubeflowv1.TFJobReplicaTypeWorker][0]
	if pod == nil || pod.Status.Phase != corev1.PodSucceeded {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == kubeflowv1.TFJobDefaultContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated.ExitCode == 0
		}
	}
	return false // no terminated tensorflow container: v1's 0xbeef sentinel
}

func status(v engine.ReplicaView, rt kubeflowv1.ReplicaType) *kubeflowv1.ReplicaStatus {
	if st := v.Statuses[rt]; st != nil {
		return st
	}
	return &kubeflowv1.ReplicaStatus{}
}
