package suite

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// pytorchYAML is a PyTorchJob manifest with a Master of n replicas and extra
// lines under spec (indented by two spaces).
func pytorchYAML(name string, masterReplicas int, extraSpec string, ann map[string]string) string {
	var annotations string
	if len(ann) > 0 {
		annotations = "        metadata:\n          annotations:\n"
		for k, v := range ann {
			annotations += fmt.Sprintf("            %s: %q\n", k, v)
		}
	}
	return fmt.Sprintf(`apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: %s
spec:
%s  pytorchReplicaSpecs:
    Master:
      replicas: %d
      restartPolicy: OnFailure
      template:
%s        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime
            command: ["python", "/workspace/train.py"]
`, name, extraSpec, masterReplicas, annotations)
}

var _ = Describe("kubectl", func() {
	BeforeEach(requireKubectl)

	It("create --validate=strict rejects bad jobs with field paths", func(ctx SpecContext) {
		ns := newNamespace(ctx, "kubectl-validate")

		out, err := kubectl(ctx, pytorchYAML("typo", 1, "  runPolicy:\n    cleanPodPolicyy: All\n", nil), "create", "--validate=strict", "-n", ns, "-f", "-")
		Expect(err).To(HaveOccurred(), out)
		Expect(out).To(ContainSubstring(`unknown field "spec.runPolicy.cleanPodPolicyy"`))

		out, err = kubectl(ctx, pytorchYAML("two-masters", 2, "", nil), "create", "--validate=strict", "-n", ns, "-f", "-")
		Expect(err).To(HaveOccurred(), out)
		// kubectl prints the webhook's causes (the suite's setup checked that
		// this denial comes from the validating webhook).
		Expect(out).To(ContainSubstring(`The PyTorchJob "two-masters" is invalid: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1`))

		out, err = kubectl(ctx, "", "get", "pytorchjobs", "-n", ns, "-o", "name")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(strings.TrimSpace(out)).To(BeEmpty(), "nothing was created")
	})

	It("wait --for=condition=Succeeded returns once the job succeeds", func(ctx SpecContext) {
		ns := newNamespace(ctx, "kubectl-wait")
		out, err := kubectl(ctx, pytorchYAML("x", 1, "", exitAfter(0, "1s")), "create", "--validate=strict", "-n", ns, "-f", "-")
		Expect(err).NotTo(HaveOccurred(), out)
		out, err = kubectl(ctx, "", "wait", "--for=condition=Succeeded", "pytorchjob/x", "-n", ns, "--timeout=90s")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("pytorchjob.kubeflow.org/x condition met"))
	})

	It("scale resizes an elastic PyTorchJob through the scale subresource", func(ctx SpecContext) {
		ns := newNamespace(ctx, "kubectl-scale")
		job := testjobs.MakePyTorchJob("elastic", ns).Workers(2).Elastic(1, 4).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		runningWorkers := func() int {
			n := 0
			for _, p := range jobPods(ctx, ns, "elastic") {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					n++
				}
			}
			return n
		}
		Eventually(ctx, runningWorkers).Should(Equal(2))

		out, err := kubectl(ctx, "", "scale", "pytorchjob/elastic", "--replicas=3", "-n", ns)
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("pytorchjob.kubeflow.org/elastic scaled"))
		Eventually(ctx, runningWorkers).Should(Equal(3))
		Expect(podNames(jobPods(ctx, ns, "elastic"))).To(ConsistOf("elastic-worker-0", "elastic-worker-1", "elastic-worker-2"))

		Eventually(ctx, func(g Gomega) {
			out, err := kubectl(ctx, "", "get", "pytorchjob/elastic", "-n", ns, "--subresource=scale",
				"-o", "jsonpath={.spec.replicas} {.status.replicas} {.status.selector}")
			g.Expect(err).NotTo(HaveOccurred(), out)
			g.Expect(strings.Fields(out)).To(HaveLen(3), out)
			g.Expect(strings.Fields(out)[:2]).To(Equal([]string{"3", "3"}), "spec and status replicas: %s", out)
			g.Expect(out).To(ContainSubstring(kubeflowv1.ReplicaTypeLabel + "=worker"))
		}).Should(Succeed())
	})
})

var _ = Describe("Metrics", func() {
	It("counts created, successful, failed, restarted and deleted jobs", func(ctx SpecContext) {
		ns := newNamespace(ctx, "metrics")
		text, err := metricsText(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(counter(text, "training_operator_jobs_created_total", "pytorch", ns)).To(BeZero())

		ok := annotateAll(testjobs.MakePyTorchJob("ok", ns).Master(1).TTLSecondsAfterFinished(0), exitAfter(0, "1s")).Obj()
		bad := annotateAll(testjobs.MakePyTorchJob("bad", ns).Master(1).RestartPolicy(kubeflowv1.RestartPolicyNever), exitAfter(1, "1s")).Obj()
		retry := annotateAll(testjobs.MakePyTorchJob("retry", ns).Master(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).BackoffLimit(1), exitAfter(1, "1s")).Obj()
		for _, j := range []*kubeflowv1.PyTorchJob{ok, bad, retry} {
			Expect(k8s.Create(ctx, j)).To(Succeed())
		}
		waitFor(ctx, pytorch, ns, "bad", kubeflowv1.JobFailed)
		waitFor(ctx, pytorch, ns, "retry", kubeflowv1.JobFailed)

		Eventually(ctx, func(g Gomega) {
			text, err := metricsText(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			got := map[string]float64{}
			for _, m := range []string{"created", "successful", "failed", "restarted", "deleted"} {
				got[m] = counter(text, "training_operator_jobs_"+m+"_total", "pytorch", ns)
			}
			g.Expect(got).To(Equal(map[string]float64{"created": 3, "successful": 1, "failed": 2, "restarted": 1, "deleted": 1}))
		}).Should(Succeed())
	})
})
