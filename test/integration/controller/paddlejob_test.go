package controller_test

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// envVar finds an env var of a container by name.
func envVar(p corev1.Pod, container, name string) *corev1.EnvVar {
	for _, c := range p.Spec.Containers {
		if c.Name != container {
			continue
		}
		for i := range c.Env {
			if c.Env[i].Name == name {
				return &c.Env[i]
			}
		}
	}
	return nil
}

var _ = Describe("PaddleJob", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("runs a collective job to Succeeded with worker 0 as the rendezvous", func(ctx context.Context) {
		job := testjobs.MakePaddleJob("pd", ns).Workers(2).
			Annotation("Worker", cluster.ExitCodeAnnotation, "0").Annotation("Worker", cluster.ExitDelayAnnotation, "3s").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())

		Eventually(func() []string { return podNames(jobPods(ctx, ns, "pd")) }, timeout, interval).
			Should(Equal([]string{"pd-worker-0", "pd-worker-1"}))
		pods := jobPods(ctx, ns, "pd")
		for _, p := range pods {
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "paddlejob-controller"))
			Expect(p.Labels).NotTo(HaveKey(kubeflowv1.JobRoleLabel), "collective mode has no master role")
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyOnFailure))
			e := containerEnv(p, "paddle")
			Expect(e).To(HaveKeyWithValue("PYTHONUNBUFFERED", "1"))
			Expect(e).To(HaveKeyWithValue("PADDLE_JOB_ID", "pd"))
			Expect(e).To(HaveKeyWithValue("PADDLE_NNODES", "2"))
		}
		Expect(envVar(pods[0], "paddle", "POD_IP_DUMMY").ValueFrom.FieldRef.FieldPath).To(Equal("status.podIP"))
		Expect(containerEnv(pods[0], "paddle")).To(HaveKeyWithValue("PADDLE_MASTER", "$(POD_IP_DUMMY):36543"))
		Expect(envVar(pods[1], "paddle", "POD_IP_DUMMY")).To(BeNil())
		Expect(containerEnv(pods[1], "paddle")).To(HaveKeyWithValue("PADDLE_MASTER", "pd-worker-0:36543"))
		Eventually(func() int { return len(liveServices(ctx, ns)) }, timeout, interval).Should(Equal(2))
		for _, s := range liveServices(ctx, ns) {
			Expect(s.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "master", Port: 36543, Protocol: corev1.ProtocolTCP, TargetPort: intstrFromInt(36543)}}))
		}

		j := awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		c := condition(j.Status, kubeflowv1.JobSucceeded)
		Expect(c.Reason).To(Equal("PaddleJobSucceeded"))
		Expect(c.Message).To(Equal(fmt.Sprintf("PaddleJob %s/pd successfully completed.", ns)))
	})

	It("runs a parameter-server job to Succeeded when the master succeeds", func(ctx context.Context) {
		job := testjobs.MakePaddleJob("ps", ns).Master(1).Workers(2).
			Annotation("Master", cluster.ExitCodeAnnotation, "0").Annotation("Master", cluster.ExitDelayAnnotation, "3s").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "ps")) }, timeout, interval).
			Should(Equal([]string{"ps-master-0", "ps-worker-0", "ps-worker-1"}))
		pods := jobPods(ctx, ns, "ps")
		Expect(pods[0].Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))
		Expect(containerEnv(pods[0], "paddle")).To(HaveKeyWithValue("PADDLE_MASTER", "$(POD_IP_DUMMY):36543"))
		Expect(containerEnv(pods[0], "paddle")).To(HaveKeyWithValue("PADDLE_SERVER_NUM", "1"))
		for _, p := range pods[1:] {
			Expect(p.Labels).NotTo(HaveKey(kubeflowv1.JobRoleLabel))
			Expect(containerEnv(p, "paddle")).To(HaveKeyWithValue("PADDLE_MASTER", "ps-master-0:36543"))
			Expect(containerEnv(p, "paddle")).To(HaveKeyWithValue("PADDLE_TRAINER_NUM", "1"))
			Expect(containerEnv(p, "paddle")).To(HaveKeyWithValue("PADDLE_NNODES", "3"))
		}
		j := awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
		Expect(condition(j.Status, kubeflowv1.JobSucceeded).Message).To(Equal("PaddleJob ps is successfully completed."))
		Expect(condition(j.Status, kubeflowv1.JobRunning).Message).To(Equal("PaddleJob ps is running."))
	})

	It("manages the elastic HPA: created, repaired on drift, deleted on suspend", func(ctx context.Context) {
		job := testjobs.MakePaddleJob("el", ns).Workers(2).Elastic(1, 4, testjobs.CPUMetric(80)).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		var hpa autoscalingv2.HorizontalPodAutoscaler
		key := client.ObjectKey{Namespace: ns, Name: "el"}
		Eventually(func() error { return k8s.Get(ctx, key, &hpa) }, timeout, interval).Should(Succeed())
		Expect(hpa.Spec.MaxReplicas).To(Equal(int32(4)))
		Expect(*hpa.Spec.MinReplicas).To(Equal(int32(1)))
		Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{Kind: "PaddleJob", Name: "el", APIVersion: "kubeflow.org/v1"}))
		Expect(hpa.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "paddlejob-controller"))

		setHPAMaxReplicas(ctx, key, 99)
		Eventually(func() int32 {
			Expect(k8s.Get(ctx, key, &hpa)).To(Succeed())
			return hpa.Spec.MaxReplicas
		}, timeout, interval).Should(Equal(int32(4)))

		Eventually(func() error {
			j, err := freshJob(ctx, job)
			if err != nil {
				return err
			}
			j.Spec.RunPolicy.Suspend = ptr.To(true)
			return k8s.Update(ctx, j)
		}, timeout, interval).Should(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, key, &hpa)) }, timeout, interval).Should(BeTrue())
		Eventually(func() []string { return livePodNames(ctx, ns, "el") }, timeout, interval).Should(BeEmpty())
	})
})
