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

var _ = Describe("XGBoostJob", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("runs the seed XGBoostJob to Succeeded with v1 names, labels, services and env", func(ctx context.Context) {
		var seed kubeflowv1.XGBoostJob
		seedJob("XGBoostJob", &seed, ns)
		for _, rt := range []kubeflowv1.ReplicaType{"Master", "Worker"} {
			seed.Spec.XGBReplicaSpecs[rt].Template.Annotations = exitAnnotations(0, "3s")
		}
		Expect(k8s.Create(ctx, &seed)).To(Succeed())

		want := []string{"xgboost-job-master-0", "xgboost-job-worker-0", "xgboost-job-worker-1", "xgboost-job-worker-2"}
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "xgboost-job")) }, timeout, interval).Should(Equal(want))
		for i, p := range jobPods(ctx, ns, "xgboost-job") {
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "xgboostjob-controller"))
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.JobNameLabel, "xgboost-job"))
			if i == 0 {
				Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaTypeLabel, "master"))
				Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))
			} else {
				Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaTypeLabel, "worker"))
				Expect(p.Labels).NotTo(HaveKey(kubeflowv1.JobRoleLabel))
			}
			Expect(p.OwnerReferences).To(HaveLen(1))
			Expect(p.OwnerReferences[0].Kind).To(Equal("XGBoostJob"))
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyOnFailure))
			Expect(containerEnv(p, "xgboost")).To(Equal(map[string]string{
				"MASTER_PORT":      "9999",
				"MASTER_ADDR":      "xgboost-job-master-0",
				"WORLD_SIZE":       "4",
				"RANK":             fmt.Sprint(i),
				"PYTHONUNBUFFERED": "1",
				"WORKER_PORT":      "9999",
				"WORKER_ADDRS":     "xgboost-job-worker-0,xgboost-job-worker-1,xgboost-job-worker-2",
			}))
		}
		Eventually(func() int { return len(liveServices(ctx, ns)) }, timeout, interval).Should(Equal(4))
		for _, s := range liveServices(ctx, ns) {
			Expect(want).To(ContainElement(s.Name))
			Expect(s.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
			Expect(s.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "xgboostjob-port", Port: 9999, Protocol: corev1.ProtocolTCP, TargetPort: intstrFromInt(9999)}}))
		}

		j := awaitJobCondition(ctx, &seed, kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		c := condition(j.Status, kubeflowv1.JobSucceeded)
		Expect(c.Reason).To(Equal("XGBoostJobSucceeded"))
		Expect(c.Message).To(Equal("XGBoostJob xgboost-job is successfully completed."))
		Expect(condition(j.Status, kubeflowv1.JobRunning).Message).To(Equal("XGBoostJob xgboost-job is running."))
		Expect(j.Status.ReplicaStatuses["Master"].Succeeded).To(Equal(int32(1)))
		Expect(j.Status.CompletionTime).NotTo(BeNil())
	})

	It("succeeds when the master succeeds while workers still run, and applies cleanPodPolicy", func(ctx context.Context) {
		job := testjobs.MakeXGBoostJob("xgb", ns).Master(1).Workers(2).CleanPodPolicy(kubeflowv1.CleanPodPolicyRunning).
			Annotation("Master", cluster.ExitCodeAnnotation, "0").Annotation("Master", cluster.ExitDelayAnnotation, "2s").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		Eventually(func() []string { return livePodNames(ctx, ns, "xgb") }, timeout, interval).Should(Equal([]string{"xgb-master-0"}))
	})
})
