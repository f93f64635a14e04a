package engine

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// JobType is the part of Framework that the API type answers by itself: its
// constants and accessors. Adapters embed JobKind for it instead of writing
// it out.
type JobType interface {
	// Kind is the job kind, e.g. "PyTorchJob"; it prefixes condition reasons.
	Kind() string
	// ControllerName is the value of the operator-name label and the event source.
	ControllerName() string
	// MetricsLabel is the `framework` label of the job metrics.
	MetricsLabel() string
	// NewJob returns an empty job object of this kind.
	NewJob() client.Object
	// Default applies the kind's defaults in place (the webhook's defaulter).
	Default(job client.Object)
	// ReplicaSpecs returns the job's replica specs (read-only for the engine).
	ReplicaSpecs(job client.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec
	// RunPolicy returns the job's run policy.
	RunPolicy(job client.Object) *kubeflowv1.RunPolicy
	// Status returns a pointer to the job's status, so the engine can set it.
	Status(job client.Object) *kubeflowv1.JobStatus
	// DefaultContainerName is the container that carries ports and exit codes.
	DefaultContainerName() string
}

// JobKind implements JobType for the API type P (a pointer to J) from its
// kubeflowv1.Job methods. Embedded in an adapter, it leaves the adapter
// only the framework's behaviour.
type JobKind[J any, P interface {
	*J
	kubeflowv1.Job
}] struct{}

var _ JobType = JobKind[kubeflowv1.PyTorchJob, *kubeflowv1.PyTorchJob]{}

func (JobKind[J, P]) info() kubeflowv1.KindInfo { return P(new(J)).KindInfo() }

// Job is obj as the adapter's API type; the engine only hands an adapter
// jobs of its own kind.
func (JobKind[J, P]) Job(obj client.Object) P { return obj.(P) }

// Kind implements JobType.
func (k JobKind[J, P]) Kind() string { return k.info().Kind }

// ControllerName implements JobType.
func (k JobKind[J, P]) ControllerName() string { return k.info().ControllerName }

// MetricsLabel implements JobType.
func (k JobKind[J, P]) MetricsLabel() string { return k.info().FrameworkName }

// DefaultContainerName implements JobType.
func (k JobKind[J, P]) DefaultContainerName() string { return k.info().DefaultContainerName }

// NewJob implements JobType.
func (JobKind[J, P]) NewJob() client.Object { return P(new(J)) }

// Default implements JobType.
func (k JobKind[J, P]) Default(obj client.Object) { k.Job(obj).ApplyDefaults() }

// ReplicaSpecs implements JobType.
func (k JobKind[J, P]) ReplicaSpecs(obj client.Object) map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec {
	return k.Job(obj).ReplicaSpecs()
}

// RunPolicy implements JobType.
func (k JobKind[J, P]) RunPolicy(obj client.Object) *kubeflowv1.RunPolicy {
	return k.Job(obj).RunPolicy()
}

// Status implements JobType.
func (k JobKind[J, P]) Status(obj client.Object) *kubeflowv1.JobStatus { return k.Job(obj).JobStatus() }
