// Package engine is the one job engine shared by every training framework.
//
// It owns pods, services, status, restarts, backoff, deadlines, TTL, cleanup,
// suspend and managedBy. It never learns a framework's name: a framework plugs
// in through the Framework interface and optional capability interfaces.
package engine

import (
	"time"

	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Job is what the engine needs of a kind's API type J (a pointer, such as
// *kubeflowv1.PyTorchJob): the kubeflow.org/v1 job accessors, and a deep
// copy of its own type, so the engine copies jobs without a type assertion.
type Job[J any] interface {
	kubeflowv1.Job
	DeepCopy() J
}

// Framework describes one training framework (one kind, API type J) to the
// engine. The kind's constants and the job's specs, run policy and status
// come from J itself (kubeflowv1.Job); the framework adds its behaviour.
type Framework[J Job[J]] interface {
	// NewJob returns an empty job of the kind.
	NewJob() J
	// ReplicaTypes lists the job's replica types in the order pods are made.
	ReplicaTypes(job J) []kubeflowv1.ReplicaType
	// IsMasterRole reports whether a pod carries job-role=master.
	IsMasterRole(job J, rtype kubeflowv1.ReplicaType, index int) bool
	// DecoratePod adds the framework's wiring (env, init containers) to a pod
	// the engine has built from the replica template.
	DecoratePod(job J, rtype kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error
	// Evaluate applies the framework's running and success rule.
	Evaluate(job J, replicas ReplicaView) Verdict
}

// ReplicaView is what a framework's status rule may look at.
type ReplicaView struct {
	Specs    map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec
	Statuses map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus
	// Pods are the job's current pods by replica type and index.
	Pods map[kubeflowv1.ReplicaType]map[int]*corev1.Pod
}

// Verdict is a framework's reading of its replicas.
type Verdict struct {
	Running          bool
	RunningMessage   string
	Succeeded        bool
	SucceededMessage string
}

// The optional capabilities below are looked up once, when a framework's
// reconciler is built (resolve), never during a pass.

// ServiceLess is an optional capability for frameworks whose replicas need no
// per-replica headless Service.
type ServiceLess interface {
	NeedsServices() bool
}

// conflictRetry is how often a job blocked by a child-name conflict looks again.
const conflictRetry = 30 * time.Second

// OrderedCreation is an optional capability for frameworks whose replica
// types must be created one after the other in ReplicaTypes order (MPI's
// launcher after its workers). Others get all missing children of a job in
// one parallel batch, one round trip instead of one per type.
type OrderedCreation interface {
	CreateInOrder() bool
}

// FailureWording is an optional capability for frameworks whose v1 failure
// message is not "<Kind> <name> is failed because <n> <Type> replica(s)
// failed" (TF's is "TFJob <ns>/<name> has failed because ..."). It returns
// that sentence without its final period; the engine appends the details.
type FailureWording[J Job[J]] interface {
	FailedMessage(job J, failedReplicas string) string
}

// ReplicaNamer is an optional capability for frameworks whose children are
// not named <job>-<lower rtype>-<index> (MPI's launcher is <job>-launcher).
// Children still carry the replica-type and replica-index labels.
type ReplicaNamer[J Job[J]] interface {
	ReplicaName(job J, rtype kubeflowv1.ReplicaType, index int) string
}

// RunPolicyOverride is an optional capability for frameworks whose
// effective run policy is not the job's spec.runPolicy as it stands (MPI's
// cleanPodPolicy falls back to the deprecated spec.cleanPodPolicy).
type RunPolicyOverride[J Job[J]] interface {
	RunPolicy(job J) *kubeflowv1.RunPolicy
}

// GangJob is one job as its gang scheduler reads it: the job, and what its
// framework says of it.
type GangJob struct {
	// Job is the job, defaulted; read-only.
	Job kubeflowv1.Job
	// ReplicaTypes are the job's replica types in the framework's order.
	ReplicaTypes []kubeflowv1.ReplicaType
	// BuildPod builds a replica's pod as the engine creates it (BuildPod),
	// before the gang decorates it.
	BuildPod func(rtype kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) (*corev1.Pod, bool, error)
}

// GangScheduler keeps a job's pods in one gang (a PodGroup of some backend).
// The engine calls Sync before creating pods of an active job, decorates every
// pod it builds, and calls Delete when the job finishes or is suspended.
type GangScheduler interface {
	// Sync creates or updates the job's PodGroup. ready=false holds pod
	// creation back (for example Volcano has not admitted the gang yet) and
	// message says why; it is shown on the job.
	Sync(ctx context.Context, job GangJob) (ready bool, message string, err error)
	// DecoratePod joins a pod to the gang (scheduler name, annotations, labels).
	// It returns a warning to record when the template's scheduler name was overridden.
	DecoratePod(job client.Object, rtype kubeflowv1.ReplicaType, pod *corev1.Pod) (warning string)
	// Delete removes the job's PodGroup, if any.
	Delete(ctx context.Context, job GangJob) error
}

// GangSelector picks the gang backend of one job (by its templates'
// scheduler name or the operator default); nil means no gang scheduling.
type GangSelector func(job GangJob) GangScheduler

// FailureTolerance is an optional capability for frameworks whose jobs go on
// when replicas of some type fail for good (TF with enableDynamicWorker:
// workers come and go, and v1 ignores a failed one). Such a failure leaves
// the pod failed and counted in replicaStatuses but does not fail the job;
// retryable failures still restart per restartPolicy.
type FailureTolerance[J Job[J]] interface {
	ToleratesFailure(job J, rtype kubeflowv1.ReplicaType) bool
}

// JobDeleteEvents is an optional capability for frameworks whose v1
// controller announced the TTL deletion of a job with other event reasons
// than SuccessfulDeleteJob/FailedDeleteJob (PyTorch, Paddle and JAX reused
// the pod reasons; tools filter events on them).
type JobDeleteEvents interface {
	JobDeleteReasons() (succeeded, failed string)
}
