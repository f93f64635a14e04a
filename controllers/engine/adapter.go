package engine

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// adapter is a framework with its kind's constants and its optional
// capabilities looked up once, when its reconciler is built: a pass reads
// these fields and asserts nothing. A capability the framework lacks is nil,
// or the engine's default.
type adapter[J Job[J]] struct {
	Framework[J]
	info kubeflowv1.KindInfo

	namer      ReplicaNamer[J]
	wording    FailureWording[J]
	tolerance  FailureTolerance[J]
	autoscaled Autoscaled[J]
	extra      ExtraChildren[J]
	runPolicy  RunPolicyOverride[J]
	// extraTypes are the kinds of extra children: the autoscaler's for an
	// elastic framework, then the framework's own (ExtraChildren).
	extraTypes []ExtraType
	// services: replicas get a headless Service each (not ServiceLess).
	services bool
	// ordered: replica types are created one after the other (OrderedCreation).
	ordered bool
	// deleted and deleteFailed are the event reasons of a TTL deletion.
	deleted, deleteFailed string
	// noTracking: pod tracking is off (Options.NoPodTracking).
	noTracking bool
}

// resolve looks up fw's constants and capabilities.
func resolve[J Job[J]](fw Framework[J]) *adapter[J] {
	a := &adapter[J]{Framework: fw, info: fw.NewJob().KindInfo(), services: true,
		deleted: "SuccessfulDeleteJob", deleteFailed: "FailedDeleteJob"}
	a.namer, _ = fw.(ReplicaNamer[J])
	a.wording, _ = fw.(FailureWording[J])
	a.tolerance, _ = fw.(FailureTolerance[J])
	a.autoscaled, _ = fw.(Autoscaled[J])
	a.extra, _ = fw.(ExtraChildren[J])
	a.runPolicy, _ = fw.(RunPolicyOverride[J])
	if a.autoscaled != nil {
		a.extraTypes = append(a.extraTypes, ExtraType{Object: &autoscalingv2.HorizontalPodAutoscaler{}})
	}
	if a.extra != nil {
		a.extraTypes = append(a.extraTypes, a.extra.ExtraTypes()...)
	}
	if sl, ok := fw.(ServiceLess); ok {
		a.services = sl.NeedsServices()
	}
	if oc, ok := fw.(OrderedCreation); ok {
		a.ordered = oc.CreateInOrder()
	}
	if d, ok := fw.(JobDeleteEvents); ok {
		a.deleted, a.deleteFailed = d.JobDeleteReasons()
	}
	return a
}

// Kind is the job kind, e.g. "PyTorchJob"; it prefixes condition reasons.
func (fw *adapter[J]) Kind() string { return fw.info.Kind }

// ControllerName is the value of the operator-name label and the event source.
func (fw *adapter[J]) ControllerName() string { return fw.info.ControllerName }

// MetricsLabel is the `framework` label of the job metrics.
func (fw *adapter[J]) MetricsLabel() string { return fw.info.FrameworkName }

// DefaultContainerName is the container that carries ports and exit codes.
func (fw *adapter[J]) DefaultContainerName() string { return fw.info.DefaultContainerName }

// mainContainer is the container of a replica's pods that runs the job's
// program, as the kind resolves it per job (kubeflowv1.MainContainerName;
// MPIJob: spec.mainContainer, else the first), the same way its webhook
// does. It is read from the replica's template: cached pods have no spec.
func (fw *adapter[J]) mainContainer(job J, spec *kubeflowv1.ReplicaSpec) string {
	if spec == nil {
		return kubeflowv1.MainContainerName(job, &corev1.PodSpec{})
	}
	return kubeflowv1.MainContainerName(job, &spec.Template.Spec)
}

// RunPolicy is the job's effective run policy.
func (fw *adapter[J]) RunPolicy(job J) *kubeflowv1.RunPolicy {
	if fw.runPolicy != nil {
		return fw.runPolicy.RunPolicy(job)
	}
	return job.RunPolicy()
}

// Adapter is a framework bound to its job type (Adapt): one type for every
// kind, so the operator's setup builds each kind's controller and cache
// from a list without naming the kinds' types.
type Adapter interface {
	// NewJob returns an empty job of the kind.
	NewJob() kubeflowv1.Job
	// ExtraTypes are the kinds of the jobs' children besides pods and
	// Services: the HPA of an elastic framework and its ExtraChildren.
	ExtraTypes() []ExtraType
	// NewReconciler builds the kind's controller (see NewReconciler).
	NewReconciler(c client.Client, apiReader client.Reader, rec EventRecorder, opts Options) Controller
}

// Controller is one kind's job controller, to be registered with a manager.
type Controller interface {
	SetupWithManager(mgr ctrl.Manager) error
}

// Adapt binds fw to its job type J.
func Adapt[J Job[J]](fw Framework[J]) Adapter { return bound[J]{fw} }

type bound[J Job[J]] struct{ fw Framework[J] }

func (b bound[J]) NewJob() kubeflowv1.Job { return b.fw.NewJob() }

func (b bound[J]) ExtraTypes() []ExtraType { return resolve(b.fw).extraTypes }

func (b bound[J]) NewReconciler(c client.Client, apiReader client.Reader, rec EventRecorder, opts Options) Controller {
	return NewReconciler(b.fw, c, apiReader, rec, opts)
}
