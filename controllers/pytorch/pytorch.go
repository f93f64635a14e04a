// Package pytorch plugs PyTorchJob into the job engine: replica types, env
// wiring, the worker init container, the success rule and the elastic HPA.
package pytorch

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for PyTorchJob children.
const ControllerName = "pytorchjob-controller"

// Options configure the adapter (from the operator Configuration).
type Options struct {
	// InitContainerImage runs the worker's wait-for-master init container.
	InitContainerImage string
	// InitContainerTemplate overrides the built-in init container template
	// (a YAML list of containers rendered with text/template); "" keeps the default.
	InitContainerTemplate string
	// InitContainerMaxTries bounds how often the init container looks for the master.
	InitContainerMaxTries int
}

// Framework is the PyTorchJob adapter.
type Framework struct {
	opts Options
	init *initContainerRenderer
}

var _ engine.Framework[*kubeflowv1.PyTorchJob] = (*Framework)(nil)

// NewJob implements engine.Framework.
func (*Framework) NewJob() *kubeflowv1.PyTorchJob { return &kubeflowv1.PyTorchJob{} }

// New builds the adapter; it fails on an unparsable init container template.
func New(opts Options) (*Framework, error) {
	if opts.InitContainerImage == "" {
		opts.InitContainerImage = "alpine:3.10"
	}
	if opts.InitContainerMaxTries <= 0 {
		opts.InitContainerMaxTries = 100
	}
	r, err := newInitContainerRenderer(opts.InitContainerTemplate)
	if err != nil {
		return nil, err
	}
	return &Framework{opts: opts, init: r}, nil
}

// ReplicaTypes implements engine.Framework: Master before Worker.
func (*Framework) ReplicaTypes(j *kubeflowv1.PyTorchJob) []kubeflowv1.ReplicaType {
	return engine.PresentTypes(j.Spec.PyTorchReplicaSpecs, kubeflowv1.PyTorchJobReplicaTypeMaster, kubeflowv1.PyTorchJobReplicaTypeWorker)
}

// IsMasterRole implements engine.Framework: the Master, or worker 0 without one.
func (*Framework) IsMasterRole(j *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType, index int) bool {
	if _, ok := j.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster]; ok {
		return rt == kubeflowv1.PyTorchJobReplicaTypeMaster
	}
	return rt == kubeflowv1.PyTorchJobReplicaTypeWorker && index == 0
}

// DecoratePod implements engine.Framework: env in every container and the
// wait-for-master init container on workers.
func (f *Framework) DecoratePod(j *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType, index int, pod *corev1.Pod) error {
	env, err := envVars(j, rt, index)
	if err != nil {
		return err
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	if _, hasMaster := j.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster]; hasMaster && rt == kubeflowv1.PyTorchJobReplicaTypeWorker {
		port, err := replicaPort(j, kubeflowv1.PyTorchJobReplicaTypeMaster)
		if err != nil {
			return err
		}
		cs, err := f.init.render(initContainerData{
			MasterAddr:         kubeflowv1.ReplicaName(j.Name, kubeflowv1.PyTorchJobReplicaTypeMaster, 0),
			MasterPort:         port,
			InitContainerImage: f.opts.InitContainerImage,
			MaxTries:           f.opts.InitContainerMaxTries,
		})
		if err != nil {
			return err
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, cs...)
	}
	return nil
}

// Evaluate implements engine.Framework with v1's PyTorch rule: the Master
// decides; without one, all workers (or any worker of an elastic job).
func (*Framework) Evaluate(j *kubeflowv1.PyTorchJob, v engine.ReplicaView) engine.Verdict {
	if spec, ok := v.Specs[kubeflowv1.PyTorchJobReplicaTypeMaster]; ok {
		st := v.Statuses[kubeflowv1.PyTorchJobReplicaTypeMaster]
		return engine.Verdict{
			Running:          st.Active > 0,
			RunningMessage:   fmt.Sprintf("PyTorchJob %s is running.", j.Name),
			Succeeded:        spec.ReplicaCount()-st.Succeeded == 0,
			SucceededMessage: fmt.Sprintf("PyTorchJob %s is successfully completed.", j.Name),
		}
	}
	spec, ok := v.Specs[kubeflowv1.PyTorchJobReplicaTypeWorker]
	if !ok {
		return engine.Verdict{}
	}
	st := v.Statuses[kubeflowv1.PyTorchJobReplicaTypeWorker]
	return engine.Verdict{
		Running:          st.Active > 0,
		RunningMessage:   fmt.Sprintf("PyTorchJob %s/%s is running.", j.Namespace, j.Name),
		Succeeded:        spec.ReplicaCount()-st.Succeeded == 0 || (j.Spec.ElasticPolicy != nil && st.Succeeded > 0),
		SucceededMessage: fmt.Sprintf("PyTorchJob %s/%s successfully completed.", j.Namespace, j.Name),
	}
}

var _ engine.JobDeleteEvents = (*Framework)(nil)

// JobDeleteReasons implements engine.JobDeleteEvents: v1's PyTorch controller
// announced a TTL deletion with the pod reasons ("Deleted job: <name>").
func (*Framework) JobDeleteReasons() (succeeded, failed string) {
	return "SuccessfulDeletePod", "FailedDeletePod"
}
