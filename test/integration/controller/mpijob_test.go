package controller_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func getMPIJob(ctx context.Context, ns, name string) *kubeflowv1.MPIJob {
	var j kubeflowv1.MPIJob
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j)).To(Succeed())
	return &j
}

// eventuallyMPICondition waits for a True condition and returns the job.
func eventuallyMPICondition(ctx context.Context, ns, name string, t kubeflowv1.JobConditionType) *kubeflowv1.MPIJob {
	var job *kubeflowv1.MPIJob
	Eventually(func(g Gomega) {
		var j kubeflowv1.MPIJob
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j)).To(Succeed())
		c := condition(j.Status, t)
		g.Expect(c).NotTo(BeNil(), "conditions: %v", conditionTypes(j.Status))
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "conditions: %v", conditionTypes(j.Status))
		job = &j
	}, timeout, interval).Should(Succeed())
	return job
}

// expectControlledBy checks the controller reference of an MPIJob child.
func expectControlledBy(obj client.Object, job *kubeflowv1.MPIJob) {
	ref := metav1.GetControllerOf(obj)
	ExpectWithOffset(1, ref).NotTo(BeNil(), "%T %s has no controller", obj, obj.GetName())
	ExpectWithOffset(1, *ref).To(Equal(metav1.OwnerReference{
		APIVersion: "kubeflow.org/v1", Kind: "MPIJob", Name: job.Name, UID: job.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}))
	ExpectWithOffset(1, obj.GetLabels()).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "mpijob-controller"))
	ExpectWithOffset(1, obj.GetLabels()).To(HaveKeyWithValue(kubeflowv1.JobNameLabel, job.Name))
}

var _ = Describe("MPIJob", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("runs the seed MPIJob to Succeeded with v1 names, the launcher wiring and its RBAC", func(ctx context.Context) {
		var seed kubeflowv1.MPIJob
		seedJob("MPIJob", &seed, ns)
		seed.Spec.MPIReplicaSpecs["Launcher"].Template.Annotations = exitAnnotations(0, "3s")
		Expect(k8s.Create(ctx, &seed)).To(Succeed())

		Eventually(func() []string { return podNames(jobPods(ctx, ns, "mpi-job")) }, timeout, interval).
			Should(Equal([]string{"mpi-job-launcher", "mpi-job-worker-0", "mpi-job-worker-1"}))
		job := getMPIJob(ctx, ns, "mpi-job")
		pods := jobPods(ctx, ns, "mpi-job")
		for _, p := range pods {
			expectControlledBy(&p, job)
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		}
		launcher, w1 := pods[0], pods[2]
		Expect(launcher.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaTypeLabel, "launcher"))
		Expect(launcher.Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))
		Expect(launcher.Spec.ServiceAccountName).To(Equal("mpi-job-launcher"))
		Expect(launcher.Spec.InitContainers).To(HaveLen(1))
		Expect(launcher.Spec.InitContainers[0].Name).To(Equal("kubectl-delivery"))
		Expect(launcher.Spec.InitContainers[0].Image).To(Equal("ghcr.io/kubeflow/training-v1/kubectl-delivery:latest"))
		Expect(containerEnv(launcher, "mpi")).To(Equal(map[string]string{
			"OMPI_MCA_plm_rsh_agent":         "/etc/mpi/kubexec.sh",
			"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
			"NVIDIA_VISIBLE_DEVICES":         "",
			"NVIDIA_DRIVER_CAPABILITIES":     "",
			"I_MPI_HYDRA_BOOTSTRAP":          "rsh",
			"I_MPI_HYDRA_BOOTSTRAP_EXEC":     "/etc/mpi/kubexec.sh",
		}))
		Expect(w1.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaTypeLabel, "worker"))
		Expect(w1.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaIndexLabel, "1"))
		Expect(w1.Labels).NotTo(HaveKey(kubeflowv1.JobRoleLabel))
		Expect(w1.Spec.Containers[0].Command).To(Equal([]string{"sleep"}))
		Expect(w1.Spec.Containers[0].Args).To(Equal([]string{"365d"}))
		Expect(w1.Spec.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "mpi-job-config", MountPath: "/etc/mpi"}))

		key := func(n string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: n} }
		var cm corev1.ConfigMap
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key("mpi-job-config"), &cm)).To(Succeed())
			g.Expect(cm.Data["discover_hosts.sh"]).To(Equal("#!/bin/sh\necho mpi-job-worker-0:4\necho mpi-job-worker-1:4"))
		}, timeout, interval).Should(Succeed())
		expectControlledBy(&cm, job)
		Expect(cm.Data["hostfile"]).To(Equal("mpi-job-worker-0 slots=4\nmpi-job-worker-1 slots=4\n"))
		Expect(cm.Data["kubexec.sh"]).To(Equal("#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME} -- /bin/sh -c \"$*\""))

		var sa corev1.ServiceAccount
		Expect(k8s.Get(ctx, key("mpi-job-launcher"), &sa)).To(Succeed())
		expectControlledBy(&sa, job)
		var role rbacv1.Role
		Expect(k8s.Get(ctx, key("mpi-job-launcher"), &role)).To(Succeed())
		expectControlledBy(&role, job)
		Expect(role.Rules).To(HaveLen(2))
		Expect(role.Rules[1].Resources).To(Equal([]string{"pods/exec"}))
		Expect(role.Rules[1].ResourceNames).To(Equal([]string{"mpi-job-worker-0", "mpi-job-worker-1"}))
		var rb rbacv1.RoleBinding
		Expect(k8s.Get(ctx, key("mpi-job-launcher"), &rb)).To(Succeed())
		expectControlledBy(&rb, job)
		Expect(rb.Subjects).To(Equal([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "mpi-job-launcher", Namespace: ns}}))
		Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "mpi-job-launcher"}))

		j := eventuallyMPICondition(ctx, ns, "mpi-job", kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		c := condition(j.Status, kubeflowv1.JobSucceeded)
		Expect(c.Reason).To(Equal("MPIJobSucceeded"))
		Expect(c.Message).To(Equal("MPIJob mpi-job is successfully completed."))
		Expect(condition(j.Status, kubeflowv1.JobRunning).Message).To(Equal("MPIJob mpi-job is running."))
		Expect(j.Status.ReplicaStatuses["Launcher"].Succeeded).To(Equal(int32(1)))
		Expect(j.Status.CompletionTime).NotTo(BeNil())
		Expect(liveServices(ctx, ns)).To(BeEmpty(), "MPIJobs have no Services")
	})

	It("fails with reason MPIJobFailed when the launcher exits 1 under restartPolicy Never", func(ctx context.Context) {
		job := testjobs.MakeMPIJob("fail", ns).Launcher().Workers(1).
			Annotation("Launcher", cluster.ExitCodeAnnotation, "1").Annotation("Launcher", cluster.ExitDelayAnnotation, "1s").Obj()
		launchers := watchPodIncarnations(ctx, ns, "fail-launcher")
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := eventuallyMPICondition(ctx, ns, "fail", kubeflowv1.JobFailed)
		c := condition(j.Status, kubeflowv1.JobFailed)
		Expect(c.Reason).To(Equal("MPIJobFailed"))
		Expect(c.Message).To(HavePrefix("MPIJob fail is failed because 1 Launcher replica(s) failed."))
		Expect(c.Message).To(ContainSubstring("fail-launcher: container mpi exited with code 1"))
		Expect(condition(j.Status, kubeflowv1.JobSucceeded)).To(BeNil())
		Expect(j.Status.ReplicaStatuses["Launcher"].Failed).To(Equal(int32(1)))
		// The failing pass decided: no restart counted.
		Expect(j.Status.RestartCount).To(BeZero())
		var launcher corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fail-launcher"}, &launcher)).To(Succeed())

		// A later pass over the finished job shows itself: asked for
		// cleanPodPolicy Running, it deletes the running worker and keeps the
		// failed launcher. Only then is the launcher's staying telling.
		Eventually(func() error {
			j := getMPIJob(ctx, ns, "fail")
			j.Spec.RunPolicy.CleanPodPolicy = ptr.To(kubeflowv1.CleanPodPolicyRunning)
			return k8s.Update(ctx, j)
		}, timeout, interval).Should(Succeed())
		Eventually(func() []string { return livePodNames(ctx, ns, "fail") }, timeout, interval).Should(Equal([]string{"fail-launcher"}))
		// Never: the launcher is neither deleted for a retry nor recreated.
		var now corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fail-launcher"}, &now)).To(Succeed())
		Expect(now.UID).To(Equal(launcher.UID))
		Expect(now.DeletionTimestamp).To(BeNil())
		Expect(launchers()).To(Equal(1), "launcher pods created")
		Expect(getMPIJob(ctx, ns, "fail").Status.RestartCount).To(BeZero())
	})

	It("suspends at creation, resumes, suspends while running and resumes again", func(ctx context.Context) {
		job := testjobs.MakeMPIJob("sus", ns).Launcher().Workers(2).Suspend(true).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := eventuallyMPICondition(ctx, ns, "sus", kubeflowv1.JobSuspended)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Suspended=True"}))
		Consistently(func() []string { return podNames(jobPods(ctx, ns, "sus")) }, 2*time.Second, interval).Should(BeEmpty())

		setSuspend := func(s bool) {
			Eventually(func() error {
				j := getMPIJob(ctx, ns, "sus")
				j.Spec.RunPolicy.Suspend = ptr.To(s)
				return k8s.Update(ctx, j)
			}, timeout, interval).Should(Succeed())
		}
		setSuspend(false)
		j = eventuallyMPICondition(ctx, ns, "sus", kubeflowv1.JobRunning)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Suspended=False", "Running=True"}))
		Expect(condition(j.Status, kubeflowv1.JobSuspended).Reason).To(Equal("MPIJobResumed"))
		Expect(livePodNames(ctx, ns, "sus")).To(Equal([]string{"sus-launcher", "sus-worker-0", "sus-worker-1"}))

		setSuspend(true)
		j = eventuallyMPICondition(ctx, ns, "sus", kubeflowv1.JobSuspended)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Running=False", "Suspended=True"}))
		Expect(condition(j.Status, kubeflowv1.JobSuspended).Reason).To(Equal("MPIJobSuspended"))
		Eventually(func() []string { return livePodNames(ctx, ns, "sus") }, timeout, interval).Should(BeEmpty())

		setSuspend(false)
		eventuallyMPICondition(ctx, ns, "sus", kubeflowv1.JobRunning)
		Eventually(func() []string { return livePodNames(ctx, ns, "sus") }, timeout, interval).
			Should(Equal([]string{"sus-launcher", "sus-worker-0", "sus-worker-1"}))
	})

	It("updates the ConfigMap and Role in place when workers are scaled, and repairs drift", func(ctx context.Context) {
		job := testjobs.MakeMPIJob("sc", ns).Launcher().Workers(1).SlotsPerWorker(2).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		key := func(n string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: n} }
		var cm corev1.ConfigMap
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key("sc-config"), &cm)).To(Succeed())
			g.Expect(cm.Data["discover_hosts.sh"]).To(Equal("#!/bin/sh\necho sc-worker-0:2"))
		}, timeout, interval).Should(Succeed())

		Eventually(func() error {
			j := getMPIJob(ctx, ns, "sc")
			j.Spec.MPIReplicaSpecs["Worker"].Replicas = ptr.To[int32](3)
			return k8s.Update(ctx, j)
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key("sc-config"), &cm)).To(Succeed())
			g.Expect(cm.Data["hostfile"]).To(Equal("sc-worker-0 slots=2\nsc-worker-1 slots=2\nsc-worker-2 slots=2\n"))
			g.Expect(cm.Data["discover_hosts.sh"]).To(Equal("#!/bin/sh\necho sc-worker-0:2\necho sc-worker-1:2\necho sc-worker-2:2"))
			var role rbacv1.Role
			g.Expect(k8s.Get(ctx, key("sc-launcher"), &role)).To(Succeed())
			g.Expect(role.Rules[1].ResourceNames).To(Equal([]string{"sc-worker-0", "sc-worker-1", "sc-worker-2"}))
		}, timeout, interval).Should(Succeed())

		cm.Data["hostfile"] = "tampered\n"
		Expect(k8s.Update(ctx, &cm)).To(Succeed())
		Eventually(func() string {
			Expect(k8s.Get(ctx, key("sc-config"), &cm)).To(Succeed())
			return cm.Data["hostfile"]
		}, timeout, interval).Should(Equal("sc-worker-0 slots=2\nsc-worker-1 slots=2\nsc-worker-2 slots=2\n"))
	})

	It("does not adopt a ConfigMap it does not own, and proceeds once the name is free", func(ctx context.Context) {
		blocker := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "own-config", Namespace: ns}, Data: map[string]string{"hostfile": "theirs"}}
		Expect(k8s.Create(ctx, blocker)).To(Succeed())
		Expect(k8s.Create(ctx, testjobs.MakeMPIJob("own", ns).Launcher().Workers(1).Obj())).To(Succeed())
		// The pass that finds the name taken says so, and creates no pod.
		j := eventuallyMPICondition(ctx, ns, "own", "ChildConflict")
		Expect(condition(j.Status, "ChildConflict").Message).To(ContainSubstring("own-config"))
		Expect(podNames(jobPods(ctx, ns, "own"))).To(BeEmpty())
		Consistently(func() []string { return podNames(jobPods(ctx, ns, "own")) }, time.Second, interval).Should(BeEmpty())
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(blocker), &cm)).To(Succeed())
		Expect(cm.OwnerReferences).To(BeEmpty())
		Expect(cm.Data).To(Equal(map[string]string{"hostfile": "theirs"}))

		Expect(k8s.Delete(ctx, blocker)).To(Succeed())
		eventuallyMPICondition(ctx, ns, "own", kubeflowv1.JobRunning)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(blocker), &cm)).To(Succeed())
		expectControlledBy(&cm, getMPIJob(ctx, ns, "own"))
	})
})
