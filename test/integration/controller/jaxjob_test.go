package controller_test

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

var _ = Describe("JAXJob", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("runs to Succeeded once every worker succeeds, with the coordinator env", func(ctx context.Context) {
		job := testjobs.MakeJAXJob("jx", ns).Workers(2).
			Annotation(cluster.ExitCodeAnnotation, "0").Annotation(cluster.ExitDelayAnnotation, "3s").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())

		Eventually(func() []string { return podNames(jobPods(ctx, ns, "jx")) }, timeout, interval).
			Should(Equal([]string{"jx-worker-0", "jx-worker-1"}))
		for i, p := range jobPods(ctx, ns, "jx") {
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "jaxjob-controller"))
			if i == 0 {
				Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))
			} else {
				Expect(p.Labels).NotTo(HaveKey(kubeflowv1.JobRoleLabel))
			}
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
			Expect(containerEnv(p, "jax")).To(Equal(map[string]string{
				"PYTHONUNBUFFERED":    "1",
				"COORDINATOR_PORT":    "6666",
				"COORDINATOR_ADDRESS": "jx-worker-0",
				"NUM_PROCESSES":       "2",
				"PROCESS_ID":          fmt.Sprint(i),
			}))
		}
		Eventually(func() int { return len(liveServices(ctx, ns)) }, timeout, interval).Should(Equal(2))
		for _, s := range liveServices(ctx, ns) {
			Expect(s.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "jaxjob-port", Port: 6666, Protocol: corev1.ProtocolTCP, TargetPort: intstrFromInt(6666)}}))
		}

		j := awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		c := condition(j.Status, kubeflowv1.JobSucceeded)
		Expect(c.Reason).To(Equal("JAXJobSucceeded"))
		Expect(c.Message).To(Equal(fmt.Sprintf("JAXJob %s/jx successfully completed.", ns)))
		Expect(j.Status.ReplicaStatuses["Worker"].Succeeded).To(Equal(int32(2)))
	})

	It("keeps running while only some workers have finished", func(ctx context.Context) {
		job := testjobs.MakeJAXJob("part", ns).Workers(2).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "part", 2)
		finishPod(ctx, ns, "part-worker-1", 0)
		Eventually(func(g Gomega) {
			j, err := freshJob(ctx, job)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(j.Status.ReplicaStatuses["Worker"].Succeeded).To(Equal(int32(1)))
			g.Expect(condition(j.Status, kubeflowv1.JobSucceeded)).To(BeNil())
			g.Expect(condition(j.Status, kubeflowv1.JobRunning)).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())
		finishPod(ctx, ns, "part-worker-0", 0)
		awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
	})
})
