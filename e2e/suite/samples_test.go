package suite

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// seedJob is a sample of the seed document as a user would apply it, with
// KWOK exit annotations on the replicas that finish: MPI workers and TF
// parameter servers keep running, as they do for real.
func seedJob(kind, ns string) *unstructured.Unstructured {
	manifests, err := util.SeedManifests()
	Expect(err).NotTo(HaveOccurred())
	Expect(manifests).To(HaveKey(kind))
	u := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(manifests[kind]), &u.Object)).To(Succeed())
	u.SetNamespace(ns)
	spec := u.Object["spec"].(map[string]any)
	for field, v := range spec {
		if !strings.HasSuffix(field, "ReplicaSpecs") {
			continue
		}
		for rt, rs := range v.(map[string]any) {
			if (kind == kubeflowv1.MPIJobKind && rt == "Worker") || (kind == kubeflowv1.TFJobKind && rt == "PS") {
				continue
			}
			ann := map[string]any{}
			for k, v := range exitAfter(0, "1s") {
				ann[k] = v
			}
			Expect(unstructured.SetNestedMap(rs.(map[string]any), ann, "template", "metadata", "annotations")).To(Succeed())
		}
	}
	return u
}

var _ = Describe("Sample jobs", func() {
	DescribeTable("run to Succeeded",
		func(ctx SpecContext, kind, plural string, build func(ns string) client.Object, pods int) {
			ns := newNamespace(ctx, strings.ToLower(kind))
			job := build(ns)
			Expect(k8s.Create(ctx, job)).To(Succeed())
			st := waitFor(ctx, kind, ns, job.GetName(), kubeflowv1.JobSucceeded)
			Expect(st.CompletionTime).NotTo(BeNil())

			created := jobPods(ctx, ns, job.GetName())
			Expect(created).To(HaveLen(pods), "pods %v", podNames(created))
			for _, p := range created {
				Expect(p.Spec.NodeName).NotTo(BeEmpty(), "pod %s was scheduled", p.Name)
			}
			if kubectlPath() != "" {
				out, err := kubectl(ctx, "", "get", plural, "-n", ns)
				Expect(err).NotTo(HaveOccurred(), out)
				// v1's printer columns: State and Age (MPIJob lists Age first).
				Expect(out).To(MatchRegexp(`(?m)^NAME\s+(STATE\s+AGE|AGE\s+STATE)\s*$`))
				Expect(out).To(MatchRegexp(`(?m)^` + job.GetName() + `\s+(Succeeded\s+\S+|\S+\s+Succeeded)\s*$`))
			}
		},
		Entry("seed PyTorchJob", kubeflowv1.PyTorchJobKind, "pytorchjobs", func(ns string) client.Object { return seedJob(kubeflowv1.PyTorchJobKind, ns) }, 4),
		Entry("seed TFJob", kubeflowv1.TFJobKind, "tfjobs", func(ns string) client.Object { return seedJob(kubeflowv1.TFJobKind, ns) }, 4),
		Entry("seed MPIJob", kubeflowv1.MPIJobKind, "mpijobs", func(ns string) client.Object { return seedJob(kubeflowv1.MPIJobKind, ns) }, 3),
		Entry("seed XGBoostJob", kubeflowv1.XGBoostJobKind, "xgboostjobs", func(ns string) client.Object { return seedJob(kubeflowv1.XGBoostJobKind, ns) }, 4),
		Entry("PaddleJob", kubeflowv1.PaddleJobKind, "paddlejobs", func(ns string) client.Object {
			w := testjobs.MakePaddleJob("paddle", ns).Master(1).Workers(2)
			for k, v := range exitAfter(0, "1s") {
				w.Annotation(kubeflowv1.PaddleJobReplicaTypeMaster, k, v).Annotation(kubeflowv1.PaddleJobReplicaTypeWorker, k, v)
			}
			return w.Obj()
		}, 3),
		Entry("JAXJob", kubeflowv1.JAXJobKind, "jaxjobs", func(ns string) client.Object {
			w := testjobs.MakeJAXJob("jax", ns).Workers(2)
			for k, v := range exitAfter(0, "1s") {
				w.Annotation(k, v)
			}
			return w.Obj()
		}, 2),
	)
})

var _ = Describe("GPU scheduling", func() {
	It("places GPU pods only on nodes with nvidia.com/gpu", func(ctx SpecContext) {
		ns := newNamespace(ctx, "gpu")
		job := testjobs.MakePyTorchJob("gpus", ns).Master(1).Workers(3).GPUs(2)
		for k, v := range exitAfter(0, "1s") {
			job.Annotation(kubeflowv1.PyTorchJobReplicaTypeMaster, k, v).Annotation(kubeflowv1.PyTorchJobReplicaTypeWorker, k, v)
		}
		Expect(k8s.Create(ctx, job.Obj())).To(Succeed())

		// The CPU-only node takes pods that need no GPU, so avoiding it
		// below is the scheduler's doing.
		if cfg.CPUNode != "" {
			cpu := testjobs.MakePyTorchJob("cpu", ns).Master(1).Obj()
			cpu.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster].Template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": cfg.CPUNode}
			cpu.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster].Template.Annotations = exitAfter(0, "1s")
			Expect(k8s.Create(ctx, cpu)).To(Succeed())
			waitFor(ctx, kubeflowv1.PyTorchJobKind, ns, "cpu", kubeflowv1.JobSucceeded)
		} else {
			GinkgoWriter.Println("no CPU-only node in this cluster: only checking the GPU nodes")
		}

		waitFor(ctx, kubeflowv1.PyTorchJobKind, ns, "gpus", kubeflowv1.JobSucceeded)
		pods := jobPods(ctx, ns, "gpus")
		Expect(pods).To(HaveLen(4))
		for _, p := range pods {
			var node corev1.Node
			Expect(k8s.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node)).To(Succeed(), "pod %s on %q", p.Name, p.Spec.NodeName)
			gpus := node.Status.Allocatable[cluster.GPUResource]
			Expect(gpus.Cmp(resource.MustParse("2"))).To(BeNumerically(">=", 0), "pod %s landed on %s with %s GPUs", p.Name, node.Name, gpus.String())
			Expect(node.Labels).To(HaveKeyWithValue("nvidia.com/gpu.present", "true"), "node %s", node.Name)
			Expect(node.Name).NotTo(Equal(cfg.CPUNode))
		}
	})

	It("keeps a job asking for more GPUs than any node has Pending, with the scheduler's reason", func(ctx SpecContext) {
		ns := newNamespace(ctx, "gpu-too-many")
		job := testjobs.MakePyTorchJob("huge", ns).Master(1).GPUs(9).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(ctx, func(g Gomega) {
			pods := jobPods(ctx, ns, "huge")
			g.Expect(pods).To(HaveLen(1))
			p := pods[0]
			g.Expect(p.Status.Phase).To(Equal(corev1.PodPending))
			g.Expect(p.Spec.NodeName).To(BeEmpty())
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodScheduled),
				HaveField("Status", corev1.ConditionFalse),
				HaveField("Reason", corev1.PodReasonUnschedulable),
				HaveField("Message", ContainSubstring("Insufficient nvidia.com/gpu")),
			)))
		}).Should(Succeed())
		// A young job's first status (Created alone) is batched for up to
		// engine.DefaultStatusBatchWindow, so it may trail the pod.
		Eventually(ctx, func(g Gomega) {
			st, err := jobStatus(ctx, kubeflowv1.PyTorchJobKind, ns, "huge")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(isTrue(st, kubeflowv1.JobCreated)).To(BeTrue(), "conditions: %s", conditionsString(st))
			g.Expect(isTrue(st, kubeflowv1.JobRunning)).To(BeFalse(), "conditions: %s", conditionsString(st))
		}).Should(Succeed())
	})
})

// finishPods makes KWOK finish the job's running pods now with code, by
// annotating the pods themselves.
func finishPods(ctx context.Context, ns, job string, code int) {
	for _, p := range jobPods(ctx, ns, job) {
		patch := client.MergeFrom(p.DeepCopy())
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		for k, v := range exitAfter(code, "0s") {
			p.Annotations[k] = v
		}
		Expect(k8s.Patch(ctx, &p, patch)).To(Succeed())
	}
}
