// Package mpi plugs MPIJob into the job engine: a launcher pod that runs
// mpirun and reaches the worker pods through `kubectl exec`, the ConfigMap
// with kubexec.sh, the hostfile and discover_hosts.sh, and the launcher's
// ServiceAccount, Role and RoleBinding. MPIJobs have no Services.
package mpi

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// ControllerName is v1's operator-name label value for MPIJob children.
const ControllerName = kubeflowv1.MPIJobControllerName

// Names and paths of v1's MPI wiring; users' scripts and images rely on them.
const (
	configSuffix = "-config"

	kubexecScriptName       = "kubexec.sh"
	hostfileName            = "hostfile"
	discoverHostsScriptName = "discover_hosts.sh"

	configVolumeName  = "mpi-job-config"
	configMountPath   = "/etc/mpi"
	kubectlVolumeName = "mpi-job-kubectl"
	kubectlMountPath  = "/opt/kube"

	kubectlDeliveryName = "kubectl-delivery"
	kubectlTargetDirEnv = "TARGET_DIR"

	iMPIDefaultBootstrap = "rsh"

	gpuResourceNameSuffix  = ".com/gpu"
	gpuResourceNamePattern = "gpu"
)

// Options configure the adapter (from the operator Configuration).
type Options struct {
	// KubectlDeliveryImage is the launcher's init container that copies
	// kubectl into /opt/kube ("" uses the Configuration default).
	KubectlDeliveryImage string
}

// Framework is the MPIJob adapter.
type Framework struct {
	opts Options
}

var _ engine.Framework[*kubeflowv1.MPIJob] = (*Framework)(nil)

// NewJob implements engine.Framework.
func (*Framework) NewJob() *kubeflowv1.MPIJob { return &kubeflowv1.MPIJob{} }

// New builds the adapter.
func New(opts Options) *Framework {
	if opts.KubectlDeliveryImage == "" {
		opts.KubectlDeliveryImage = configv1alpha1.DefaultMPIKubectlDeliveryImage
	}
	return &Framework{opts: opts}
}

var _ engine.RunPolicyOverride[*kubeflowv1.MPIJob] = (*Framework)(nil)

// RunPolicy implements engine.RunPolicyOverride. It is a copy whose
// cleanPodPolicy is the effective one (runPolicy's, else the deprecated
// spec.cleanPodPolicy), read at use time so that an update of either field
// takes effect, as in v1. With neither set it stays unset, the engine's
// default (a job with a failure policy has none stored).
func (*Framework) RunPolicy(j *kubeflowv1.MPIJob) *kubeflowv1.RunPolicy {
	rp := j.Spec.RunPolicy
	rp.CleanPodPolicy = nil
	set := func(p *kubeflowv1.CleanPodPolicy) bool { return p != nil && *p != kubeflowv1.CleanPodPolicyUndefined }
	if set(j.Spec.RunPolicy.CleanPodPolicy) || set(j.Spec.CleanPodPolicy) {
		p := kubeflowv1.EffectiveCleanPodPolicy(j)
		rp.CleanPodPolicy = &p
	}
	return &rp
}

// ReplicaTypes implements engine.Framework: the workers first, so the
// launcher is created after them. The Launcher is always listed: a job
// without one cannot run, and the engine fails it as invalid instead of
// running workers nobody drives.
func (*Framework) ReplicaTypes(j *kubeflowv1.MPIJob) []kubeflowv1.ReplicaType {
	var out []kubeflowv1.ReplicaType
	if _, ok := j.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeWorker]; ok {
		out = append(out, kubeflowv1.MPIJobReplicaTypeWorker)
	}
	return append(out, kubeflowv1.MPIJobReplicaTypeLauncher)
}

var _ engine.ServiceLess = (*Framework)(nil)

// NeedsServices implements engine.ServiceLess: MPI peers talk through kubectl exec.
func (*Framework) NeedsServices() bool { return false }

var _ engine.OrderedCreation = (*Framework)(nil)

// CreateInOrder implements engine.OrderedCreation: the launcher starts mpirun
// at once, so its workers must exist first.
func (*Framework) CreateInOrder() bool { return true }

var _ engine.ReplicaNamer[*kubeflowv1.MPIJob] = (*Framework)(nil)

// ReplicaName implements engine.ReplicaNamer: <job>-launcher and <job>-worker-<i>.
func (*Framework) ReplicaName(j *kubeflowv1.MPIJob, rt kubeflowv1.ReplicaType, index int) string {
	if rt == kubeflowv1.MPIJobReplicaTypeLauncher {
		return kubeflowv1.MPIJobLauncherName(j.GetName())
	}
	return kubeflowv1.ReplicaName(j.GetName(), rt, index)
}

// IsMasterRole implements engine.Framework: the launcher.
func (*Framework) IsMasterRole(_ *kubeflowv1.MPIJob, rt kubeflowv1.ReplicaType, _ int) bool {
	return rt == kubeflowv1.MPIJobReplicaTypeLauncher
}

func configMapName(jobName string) string { return jobName + configSuffix }

// workerName is the name of worker i, as the hostfile and the Role list it.
func workerName(jobName string, i int) string {
	return kubeflowv1.ReplicaName(jobName, kubeflowv1.MPIJobReplicaTypeWorker, i)
}

// isGPULauncher reports whether any launcher container asks for a GPU: a
// limit named *.com/gpu or containing "gpu". Such a launcher takes part in
// the computation, so it is listed in the hostfile.
func isGPULauncher(j *kubeflowv1.MPIJob) bool {
	spec := j.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeLauncher]
	if spec == nil {
		return false
	}
	for _, c := range spec.Template.Spec.Containers {
		for name := range c.Resources.Limits {
			if strings.HasSuffix(string(name), gpuResourceNameSuffix) || strings.Contains(string(name), gpuResourceNamePattern) {
				return true
			}
		}
	}
	return false
}

// DecoratePod implements engine.Framework.
func (f *Framework) DecoratePod(j *kubeflowv1.MPIJob, rt kubeflowv1.ReplicaType, _ int, pod *corev1.Pod) error {
	c := j.MainContainer(&pod.Spec)
	if c == nil {
		return fmt.Errorf("MPIJob %s: %s template has no containers", j.Name, rt)
	}
	switch rt {
	case kubeflowv1.MPIJobReplicaTypeWorker:
		decorateWorker(j, c, pod)
	case kubeflowv1.MPIJobReplicaTypeLauncher:
		f.decorateLauncher(j, c, pod)
	}
	return nil
}

// decorateWorker keeps the worker alive for kubectl exec and mounts kubexec.sh,
// which Open MPI looks for on every rank.
func decorateWorker(j *kubeflowv1.MPIJob, c *corev1.Container, pod *corev1.Pod) {
	if len(c.Command) == 0 {
		c.Command = []string{"sleep"}
		c.Args = []string{"365d"}
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: configVolumeName, MountPath: configMountPath})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
		Name: configVolumeName,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMapName(j.Name)},
			Items:                []corev1.KeyToPath{{Key: kubexecScriptName, Path: kubexecScriptName, Mode: mode(0o555)}},
		}},
	})
}

// decorateLauncher adds the kubectl delivery, the ServiceAccount, the Open MPI
// and Intel MPI bootstrap env and the config volumes.
func (f *Framework) decorateLauncher(j *kubeflowv1.MPIJob, c *corev1.Container, pod *corev1.Pod) {
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = kubeflowv1.MPIJobLauncherName(j.Name)
	}
	initResources := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("100m"),
		corev1.ResourceMemory:           resource.MustParse("512Mi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("5Gi"),
	}
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{
		Name:            kubectlDeliveryName,
		Image:           f.opts.KubectlDeliveryImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Env: []corev1.EnvVar{
			{Name: kubectlTargetDirEnv, Value: kubectlMountPath},
			{Name: "NAMESPACE", Value: j.Namespace},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: kubectlVolumeName, MountPath: kubectlMountPath},
			{Name: configVolumeName, MountPath: configMountPath},
		},
		Resources: corev1.ResourceRequirements{Limits: initResources, Requests: initResources.DeepCopy()},
	})

	kubexec := configMountPath + "/" + kubexecScriptName
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "OMPI_MCA_plm_rsh_agent", Value: kubexec},
		corev1.EnvVar{Name: "OMPI_MCA_orte_default_hostfile", Value: configMountPath + "/" + hostfileName},
	)
	if !isGPULauncher(j) {
		// Keep a CPU launcher off the node's GPUs whatever the runtime defaults to.
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "NVIDIA_VISIBLE_DEVICES", Value: ""},
			corev1.EnvVar{Name: "NVIDIA_DRIVER_CAPABILITIES", Value: ""},
		)
	}
	if !hasEnv(c.Env, "I_MPI_HYDRA_BOOTSTRAP") {
		c.Env = append(c.Env, corev1.EnvVar{Name: "I_MPI_HYDRA_BOOTSTRAP", Value: iMPIDefaultBootstrap})
	}
	if !hasEnv(c.Env, "I_MPI_HYDRA_BOOTSTRAP_EXEC") {
		c.Env = append(c.Env, corev1.EnvVar{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC", Value: kubexec})
	}
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: kubectlVolumeName, MountPath: kubectlMountPath},
		corev1.VolumeMount{Name: configVolumeName, MountPath: configMountPath},
	)
	pod.Spec.Volumes = append(pod.Spec.Volumes,
		corev1.Volume{Name: kubectlVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: configVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMapName(j.Name)},
			Items: []corev1.KeyToPath{
				{Key: kubexecScriptName, Path: kubexecScriptName, Mode: mode(0o555)},
				{Key: hostfileName, Path: hostfileName, Mode: mode(0o444)},
				{Key: discoverHostsScriptName, Path: discoverHostsScriptName, Mode: mode(0o555)},
			},
		}}},
	)
}

func hasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}

func mode(m int32) *int32 { return &m }

// Evaluate implements engine.Framework with v1's MPI rule: the launcher
// decides. Failures (reason MPIJobFailed) come from the engine's restart rule.
func (*Framework) Evaluate(j *kubeflowv1.MPIJob, v engine.ReplicaView) engine.Verdict {
	spec, st := v.Specs[kubeflowv1.MPIJobReplicaTypeLauncher], v.Statuses[kubeflowv1.MPIJobReplicaTypeLauncher]
	if spec == nil || st == nil {
		return engine.Verdict{}
	}
	return engine.Verdict{
		Running:          st.Active > 0,
		RunningMessage:   fmt.Sprintf("MPIJob %s is running.", j.Name),
		Succeeded:        spec.ReplicaCount()-st.Succeeded == 0,
		SucceededMessage: fmt.Sprintf("MPIJob %s is successfully completed.", j.Name),
	}
}
