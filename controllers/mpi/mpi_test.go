package mpi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/engine/frameworktest"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const deliveryImage = "kubectl-delivery:test"

func defaulted(w *testjobs.MPIJobWrapper) *kubeflowv1.MPIJob {
	j := w.UID("uid-1").Obj()
	kubeflowv1.SetDefaults_MPIJob(j)
	return j
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

// launcherVolumes and workerVolume are v1's config volumes.
func launcherVolumes() []corev1.Volume {
	return []corev1.Volume{
		{Name: "mpi-job-kubectl", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "mpi-job-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "pi-config"},
			Items: []corev1.KeyToPath{
				{Key: "kubexec.sh", Path: "kubexec.sh", Mode: ptr.To[int32](0o555)},
				{Key: "hostfile", Path: "hostfile", Mode: ptr.To[int32](0o444)},
				{Key: "discover_hosts.sh", Path: "discover_hosts.sh", Mode: ptr.To[int32](0o555)},
			},
		}}},
	}
}

func workerVolume() corev1.Volume {
	return corev1.Volume{Name: "mpi-job-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "pi-config"},
		Items:                []corev1.KeyToPath{{Key: "kubexec.sh", Path: "kubexec.sh", Mode: ptr.To[int32](0o555)}},
	}}}
}

func kubectlDelivery() corev1.Container {
	rl := corev1.ResourceList{"cpu": q("100m"), "memory": q("512Mi"), "ephemeral-storage": q("5Gi")}
	return corev1.Container{
		Name:            "kubectl-delivery",
		Image:           deliveryImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Env:             testjobs.Env("TARGET_DIR", "/opt/kube", "NAMESPACE", "ns"),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "mpi-job-kubectl", MountPath: "/opt/kube"},
			{Name: "mpi-job-config", MountPath: "/etc/mpi"},
		},
		Resources: corev1.ResourceRequirements{Limits: rl, Requests: rl.DeepCopy()},
	}
}

var launcherMounts = []corev1.VolumeMount{
	{Name: "mpi-job-kubectl", MountPath: "/opt/kube"},
	{Name: "mpi-job-config", MountPath: "/etc/mpi"},
}

// Names (pi-launcher), labels (job-role on the launcher), owner and
// restartPolicy are the conformance test's; MPIJobs have no Services.
func TestConformance(t *testing.T) {
	frameworktest.Conformance(t, New(Options{KubectlDeliveryImage: deliveryImage}), map[string]*kubeflowv1.MPIJob{
		"launcher and workers": testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2).Obj(),
		"launcher only":        testjobs.MakeMPIJob("pi", "ns").Launcher().Obj(),
	})
}

// TestBuildPod checks MPI's wiring: the launcher's kubectl delivery, service
// account, hostfile and bootstrap env, the workers' config volume and command.
func TestBuildPod(t *testing.T) {
	fw := New(Options{KubectlDeliveryImage: deliveryImage})
	cpuEnv := testjobs.Env(
		"OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh",
		"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile",
		"NVIDIA_VISIBLE_DEVICES", "", "NVIDIA_DRIVER_CAPABILITIES", "",
		"I_MPI_HYDRA_BOOTSTRAP", "rsh", "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/etc/mpi/kubexec.sh")
	sidecar := corev1.Container{Name: "sidecar", Image: "proxy"}

	cases := map[string]struct {
		job   *kubeflowv1.MPIJob
		rtype kubeflowv1.ReplicaType
		index int
		want  corev1.PodSpec
	}{
		"launcher": {
			job:   defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2).SlotsPerWorker(4)),
			rtype: "Launcher",
			want: corev1.PodSpec{
				ServiceAccountName: "pi-launcher",
				InitContainers:     []corev1.Container{kubectlDelivery()},
				Containers: []corev1.Container{{
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"mpirun", "-np", "2", "/home/mpiuser/pi"},
					Env: cpuEnv, VolumeMounts: launcherMounts,
				}},
				Volumes: launcherVolumes(),
			},
		},
		"worker": {
			job:   defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2).SlotsPerWorker(4)),
			rtype: "Worker", index: 1,
			want: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"sleep"}, Args: []string{"365d"},
					VolumeMounts: []corev1.VolumeMount{{Name: "mpi-job-config", MountPath: "/etc/mpi"}},
				}},
				Volumes: []corev1.Volume{workerVolume()},
			},
		},
		"worker keeps its own command": {
			job: func() *kubeflowv1.MPIJob {
				j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1))
				j.Spec.MPIReplicaSpecs["Worker"].Template.Spec.Containers[0].Command = []string{"/usr/sbin/sshd", "-De"}
				return j
			}(),
			rtype: "Worker", index: 0,
			want: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"/usr/sbin/sshd", "-De"},
					VolumeMounts: []corev1.VolumeMount{{Name: "mpi-job-config", MountPath: "/etc/mpi"}},
				}},
				Volumes: []corev1.Volume{workerVolume()},
			},
		},
		"GPU launcher keeps the NVIDIA env and a user service account": {
			job: defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).GPUs("Launcher", 1).
				ServiceAccount("Launcher", "mine").RestartPolicy(kubeflowv1.RestartPolicyExitCode)),
			rtype: "Launcher",
			want: corev1.PodSpec{
				ServiceAccountName: "mine",
				InitContainers:     []corev1.Container{kubectlDelivery()},
				Containers: []corev1.Container{{
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"mpirun", "-np", "2", "/home/mpiuser/pi"},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q("1")}},
					Env: testjobs.Env(
						"OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh",
						"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile",
						"I_MPI_HYDRA_BOOTSTRAP", "rsh", "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/etc/mpi/kubexec.sh"),
					VolumeMounts: launcherMounts,
				}},
				Volumes: launcherVolumes(),
			},
		},
		"Intel MPI bootstrap set by the user is kept": {
			job: defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).
				Env("Launcher", "I_MPI_HYDRA_BOOTSTRAP", "ssh", "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/usr/bin/ssh")),
			rtype: "Launcher",
			want: corev1.PodSpec{
				ServiceAccountName: "pi-launcher",
				InitContainers:     []corev1.Container{kubectlDelivery()},
				Containers: []corev1.Container{{
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"mpirun", "-np", "2", "/home/mpiuser/pi"},
					Env: testjobs.Env(
						"I_MPI_HYDRA_BOOTSTRAP", "ssh", "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/usr/bin/ssh",
						"OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh",
						"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile",
						"NVIDIA_VISIBLE_DEVICES", "", "NVIDIA_DRIVER_CAPABILITIES", ""),
					VolumeMounts: launcherMounts,
				}},
				Volumes: launcherVolumes(),
			},
		},
		"launcher wiring goes to mainContainer, not containers[0]": {
			job: func() *kubeflowv1.MPIJob {
				w := testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).MainContainer("mpi")
				w.Spec.MPIReplicaSpecs["Launcher"].Template.Spec.Containers = append([]corev1.Container{sidecar},
					w.Spec.MPIReplicaSpecs["Launcher"].Template.Spec.Containers...)
				return defaulted(w)
			}(),
			rtype: "Launcher",
			want: corev1.PodSpec{
				ServiceAccountName: "pi-launcher",
				InitContainers:     []corev1.Container{kubectlDelivery()},
				Containers: []corev1.Container{sidecar, {
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"mpirun", "-np", "2", "/home/mpiuser/pi"},
					Env: cpuEnv, VolumeMounts: launcherMounts,
				}},
				Volumes: launcherVolumes(),
			},
		},
		"worker wiring goes to mainContainer, not containers[0]": {
			job: func() *kubeflowv1.MPIJob {
				w := testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).MainContainer("mpi")
				w.Spec.MPIReplicaSpecs["Worker"].Template.Spec.Containers = append([]corev1.Container{sidecar},
					w.Spec.MPIReplicaSpecs["Worker"].Template.Spec.Containers...)
				return defaulted(w)
			}(),
			rtype: "Worker",
			want: corev1.PodSpec{
				Containers: []corev1.Container{sidecar, {
					Name: "mpi", Image: testjobs.MPIImage, Command: []string{"sleep"}, Args: []string{"365d"},
					VolumeMounts: []corev1.VolumeMount{{Name: "mpi-job-config", MountPath: "/etc/mpi"}},
				}},
				Volumes: []corev1.Volume{workerVolume()},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, err := engine.BuildPod(fw, tc.job, tc.rtype, tc.index, tc.job.Spec.MPIReplicaSpecs[tc.rtype])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Spec, cmpopts.IgnoreFields(corev1.PodSpec{}, "RestartPolicy")); diff != "" {
				t.Errorf("pod spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewDefaultsDeliveryImage(t *testing.T) {
	if got := New(Options{}).opts.KubectlDeliveryImage; got != "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest" {
		t.Errorf("default kubectl delivery image = %q", got)
	}
}

func TestReplicaTypesAndNames(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(3))
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Worker", "Launcher"}, fw.ReplicaTypes(j)); diff != "" {
		t.Errorf("replica types (-want +got), workers come first:\n%s", diff)
	}
	launcherOnly := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher())
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Launcher"}, fw.ReplicaTypes(launcherOnly)); diff != "" {
		t.Errorf("launcher-only replica types (-want +got):\n%s", diff)
	}
	noLauncher := defaulted(testjobs.MakeMPIJob("pi", "ns").Workers(1))
	if diff := cmp.Diff([]kubeflowv1.ReplicaType{"Worker", "Launcher"}, fw.ReplicaTypes(noLauncher)); diff != "" {
		t.Errorf("a missing launcher is still listed so the engine rejects the job (-want +got):\n%s", diff)
	}
	if got := fw.ReplicaName(j, "Launcher", 0); got != "pi-launcher" {
		t.Errorf("launcher name = %q", got)
	}
	if got := fw.ReplicaName(j, "Worker", 2); got != "pi-worker-2" {
		t.Errorf("worker name = %q", got)
	}
	if fw.NeedsServices() {
		t.Error("MPIJobs have no Services")
	}
	if !fw.IsMasterRole(j, "Launcher", 0) || fw.IsMasterRole(j, "Worker", 0) {
		t.Error("only the launcher carries job-role=master")
	}
}

func TestIsGPULauncher(t *testing.T) {
	cases := map[string]struct {
		limits corev1.ResourceList
		want   bool
	}{
		"cpu only":         {limits: corev1.ResourceList{"cpu": q("1")}},
		"nvidia":           {limits: corev1.ResourceList{"nvidia.com/gpu": q("1")}, want: true},
		"amd":              {limits: corev1.ResourceList{"amd.com/gpu": q("1")}, want: true},
		"contains gpu":     {limits: corev1.ResourceList{"example.org/gpu-mig-1g": q("1")}, want: true},
		"no limits at all": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := testjobs.MakeMPIJob("pi", "ns").Launcher()
			w.Spec.MPIReplicaSpecs["Launcher"].Template.Spec.Containers[0].Resources.Limits = tc.limits
			if got := isGPULauncher(w.Obj()); got != tc.want {
				t.Errorf("isGPULauncher = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	fw := New(Options{})
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2))
	st := func(active, succeeded, failed int32) *kubeflowv1.ReplicaStatus {
		return &kubeflowv1.ReplicaStatus{Active: active, Succeeded: succeeded, Failed: failed}
	}
	const running, done = "MPIJob pi is running.", "MPIJob pi is successfully completed."
	cases := map[string]struct {
		statuses map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus
		want     engine.Verdict
	}{
		"pending": {
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Launcher": st(0, 0, 0), "Worker": st(2, 0, 0)},
			want:     engine.Verdict{RunningMessage: running, SucceededMessage: done},
		},
		"launcher running": {
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Launcher": st(1, 0, 0), "Worker": st(1, 0, 0)},
			want:     engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: done},
		},
		"launcher succeeded decides, workers still running": {
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Launcher": st(0, 1, 0), "Worker": st(2, 0, 0)},
			want:     engine.Verdict{Succeeded: true, RunningMessage: running, SucceededMessage: done},
		},
		"workers succeeding do not finish the job": {
			statuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Launcher": st(1, 0, 0), "Worker": st(0, 2, 0)},
			want:     engine.Verdict{Running: true, RunningMessage: running, SucceededMessage: done},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fw.Evaluate(j, engine.ReplicaView{Specs: j.Spec.MPIReplicaSpecs, Statuses: tc.statuses})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
	noLauncher := defaulted(testjobs.MakeMPIJob("pi", "ns").Workers(1))
	if v := fw.Evaluate(noLauncher, engine.ReplicaView{Specs: noLauncher.Spec.MPIReplicaSpecs}); v.Running || v.Succeeded {
		t.Errorf("a job without launcher never runs or succeeds: %+v", v)
	}
}

// The effective cleanPodPolicy is read at use time, as v1 does on every
// reconcile: runPolicy.cleanPodPolicy if set, else the deprecated
// spec.cleanPodPolicy, else unset (nil), which the engine reads as v1's
// None or, for a failed job with a failure policy, as the policy's cleanup.
func TestRunPolicyCleanPodPolicy(t *testing.T) {
	all, running := kubeflowv1.CleanPodPolicyAll, kubeflowv1.CleanPodPolicyRunning
	cases := map[string]struct {
		runPolicy, spec *kubeflowv1.CleanPodPolicy
		want            *kubeflowv1.CleanPodPolicy
	}{
		"neither":           {},
		"only spec":         {spec: &all, want: &all},
		"only runPolicy":    {runPolicy: &running, want: &running},
		"runPolicy wins":    {runPolicy: &running, spec: &all, want: &running},
		"empty runPolicy":   {runPolicy: ptr.To(kubeflowv1.CleanPodPolicyUndefined), spec: &all, want: &all},
		"empty both fields": {runPolicy: ptr.To(kubeflowv1.CleanPodPolicyUndefined), spec: ptr.To(kubeflowv1.CleanPodPolicyUndefined)},
	}
	fw := New(Options{})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).Obj()
			j.Spec.RunPolicy.CleanPodPolicy, j.Spec.CleanPodPolicy = tc.runPolicy, tc.spec
			if diff := cmp.Diff(tc.want, fw.RunPolicy(j).CleanPodPolicy); diff != "" {
				t.Errorf("cleanPodPolicy (-want +got):\n%s", diff)
			}
			if j.Spec.RunPolicy.CleanPodPolicy != tc.runPolicy {
				t.Error("reading the run policy changed the job")
			}
		})
	}
}

// An update of the deprecated spec.cleanPodPolicy takes effect when
// runPolicy.cleanPodPolicy is unset, even after the webhook has defaulted
// the job at create and again at the update.
func TestDeprecatedCleanPodPolicyUpdateTakesEffect(t *testing.T) {
	j := testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).Obj()
	kubeflowv1.SetDefaults_MPIJob(j) // create
	j.Spec.CleanPodPolicy = ptr.To(kubeflowv1.CleanPodPolicyAll)
	kubeflowv1.SetDefaults_MPIJob(j) // update
	if got := New(Options{}).RunPolicy(j).CleanPodPolicy; got == nil || *got != kubeflowv1.CleanPodPolicyAll {
		t.Errorf("effective cleanPodPolicy = %v after updating spec.cleanPodPolicy to All", got)
	}
}
