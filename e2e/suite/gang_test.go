package suite

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

var (
	volcanoPodGroup = schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}
	pluginsPodGroup = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}
)

// nested is a field of an unstructured object, nil when absent.
func nested(u *unstructured.Unstructured, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	return v
}

func getPodGroup(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
}

// gangJob is a PyTorchJob of 1 master and 2 workers with a GPU each whose
// pods name the given scheduler; they run until finishPods.
func gangJob(name, ns, scheduler string) *kubeflowv1.PyTorchJob {
	job := testjobs.MakePyTorchJob(name, ns).Master(1).Workers(2).GPUs(1).Obj()
	for _, rs := range job.Spec.PyTorchReplicaSpecs {
		rs.Template.Spec.SchedulerName = scheduler
	}
	return job
}

var _ = Describe("Gang scheduling", func() {
	BeforeEach(func() {
		if !cfg.Gang {
			Skip("gang-scheduling specs need the local cluster (PodGroup CRDs and the volcano / scheduler-plugins-scheduler profiles)")
		}
	})

	It("creates a scheduler-plugins PodGroup before the pods, joins them, and deletes it on success", func(ctx SpecContext) {
		ns := newNamespace(ctx, "gang-plugins")
		Expect(k8s.Create(ctx, gangJob("gang", ns, pluginsScheduler))).To(Succeed())

		Eventually(ctx, func(g Gomega) {
			pg, err := getPodGroup(ctx, pluginsPodGroup, ns, "gang")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nested(pg, "spec", "minMember")).To(BeEquivalentTo(3))
			gpus := nested(pg, "spec", "minResources", string(cluster.GPUResource))
			g.Expect(gpus).To(Equal("3"), "minResources counts the GPUs of the gang")
			g.Expect(pg.GetOwnerReferences()).To(ContainElement(HaveField("Kind", kubeflowv1.PyTorchJobKind)))
		}).Should(Succeed())
		Eventually(ctx, func(g Gomega) {
			pods := jobPods(ctx, ns, "gang")
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(p.Labels).To(HaveKeyWithValue("scheduling.x-k8s.io/pod-group", "gang"))
				g.Expect(p.Spec.SchedulerName).To(Equal(pluginsScheduler))
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			}
		}).Should(Succeed())

		finishPods(ctx, ns, "gang", 0)
		waitFor(ctx, pytorch, ns, "gang", kubeflowv1.JobSucceeded)
		Eventually(ctx, func() bool {
			_, err := getPodGroup(ctx, pluginsPodGroup, ns, "gang")
			return gone(err)
		}).Should(BeTrue(), "PodGroup deleted once the job finished")
	})

	It("holds pods until Volcano admits the PodGroup, then runs the job and deletes the group", func(ctx SpecContext) {
		ns := newNamespace(ctx, "gang-volcano")
		Expect(k8s.Create(ctx, gangJob("gang", ns, volcanoScheduler))).To(Succeed())

		var pg *unstructured.Unstructured
		Eventually(ctx, func(g Gomega) {
			var err error
			pg, err = getPodGroup(ctx, volcanoPodGroup, ns, "gang")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nested(pg, "spec", "minMember")).To(BeEquivalentTo(3))
			st, err := jobStatus(ctx, pytorch, ns, "gang")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(findCondition(st, kubeflowv1.JobCreated)).To(HaveField("Message", ContainSubstring("waiting for Volcano to admit PodGroup gang")))
		}).Should(Succeed())
		Consistently(ctx, func() []string { return podNames(jobPods(ctx, ns, "gang")) }).
			WithTimeout(2*time.Second).Should(BeEmpty(), "no pods before the gang is admitted")

		// Play Volcano: admit the gang. (Volcano's PodGroup CRD has no status
		// subresource, so status is written with the object.)
		patch := client.MergeFrom(pg.DeepCopy())
		Expect(unstructured.SetNestedField(pg.Object, "Inqueue", "status", "phase")).To(Succeed())
		Expect(k8s.Patch(ctx, pg, patch)).To(Succeed())

		Eventually(ctx, func(g Gomega) {
			pods := jobPods(ctx, ns, "gang")
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(p.Annotations).To(HaveKeyWithValue("scheduling.k8s.io/group-name", "gang"))
				g.Expect(p.Spec.SchedulerName).To(Equal(volcanoScheduler))
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			}
		}).Should(Succeed())
		finishPods(ctx, ns, "gang", 0)
		waitFor(ctx, pytorch, ns, "gang", kubeflowv1.JobSucceeded)
		Eventually(ctx, func() bool {
			_, err := getPodGroup(ctx, volcanoPodGroup, ns, "gang")
			return gone(err)
		}).Should(BeTrue(), "PodGroup deleted once the job finished")
	})
})

var _ = Describe("Fake nodes", func() {
	It("e2e/kind/nodes.yaml matches the local cluster's GPU nodes", func(ctx SpecContext) {
		if !cfg.Local {
			Skip("compares with the nodes of the local control plane")
		}
		gpuNodes := 0
		for _, want := range readNodes() {
			if _, ok := want.Status.Capacity[cluster.GPUResource]; !ok {
				continue
			}
			gpuNodes++
			var got corev1.Node
			Expect(k8s.Get(ctx, client.ObjectKey{Name: want.Name}, &got)).To(Succeed())
			labels := map[string]string{}
			for k, v := range got.Labels {
				if !strings.HasPrefix(k, "beta.kubernetes.io/") { // deprecated copies the API server adds
					labels[k] = v
				}
			}
			Expect(labels).To(Equal(want.Labels), "labels of %s (cluster vs %s)", want.Name, nodesFile())
			for k, v := range want.Annotations {
				Expect(got.Annotations).To(HaveKeyWithValue(k, v), "annotations of %s", want.Name)
			}
			for _, l := range []struct {
				name      string
				got, want corev1.ResourceList
			}{{"capacity", got.Status.Capacity, want.Status.Capacity}, {"allocatable", got.Status.Allocatable, want.Status.Allocatable}} {
				Expect(l.got).To(HaveLen(len(l.want)), "%s of %s: %v", l.name, want.Name, l.got)
				for r, q := range l.want {
					g := l.got[r]
					Expect(g.Equal(q)).To(BeTrue(), "%s %s of %s: %s, want %s", l.name, r, want.Name, g.String(), q.String())
				}
			}
		}
		Expect(gpuNodes).To(Equal(4))
	})
})
