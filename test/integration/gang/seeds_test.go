package gang_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// seedKinds are the jobs of the seed document, with the field holding their replica specs.
var seedKinds = map[string]string{
	"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs",
	"MPIJob": "mpiReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs",
}

// TestSeedsUnderEachBackend runs the four seed jobs to Succeeded with each gang
// backend as the operator default, logging the PodGroups it created.
func TestSeedsUnderEachBackend(t *testing.T) {
	backends := []struct {
		name   string
		opts   cluster.Options
		cfg    func(*configv1alpha1.Configuration)
		crd    string
		groups schema.GroupVersionKind
	}{
		{
			name:   "volcano",
			opts:   cluster.Options{Nodes: 2, SchedulerNames: []string{gang.VolcanoSchedulerName}},
			cfg:    func(c *configv1alpha1.Configuration) { c.GangScheduling.SchedulerName = gang.VolcanoSchedulerName },
			crd:    "scheduling.volcano.sh_podgroups.yaml",
			groups: schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroupList"},
		},
		{
			name:   "scheduler-plugins",
			opts:   cluster.Options{Nodes: 2, SchedulerNames: []string{schedulerPluginsName}},
			cfg:    func(c *configv1alpha1.Configuration) { c.GangScheduling.SchedulerName = schedulerPluginsName },
			crd:    "scheduling.x-k8s.io_podgroups.yaml",
			groups: schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroupList"},
		},
		{
			name: "kubernetes",
			opts: cluster.Options{Nodes: 2, FeatureGates: "GenericWorkload=true", RuntimeConfig: "scheduling.k8s.io/v1beta1=true"},
			cfg: func(c *configv1alpha1.Configuration) {
				c.GangScheduling.PodGroupAPI = configv1alpha1.PodGroupAPIKubernetes
			},
			groups: schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1beta1", Kind: "PodGroupList"},
		},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			cfg := util.DefaultConfiguration()
			b.cfg(cfg)
			s := start(t, b.opts, cfg)
			ctx := context.Background()
			if b.crd != "" {
				s.installExternalCRD(ctx, b.crd)
			}
			g := NewWithT(t)
			ns := s.namespace(ctx)
			samples, err := util.SeedManifests()
			g.Expect(err).NotTo(HaveOccurred())
			for kind, field := range seedKinds {
				var obj unstructured.Unstructured
				g.Expect(yaml.Unmarshal([]byte(samples[kind]), &obj.Object)).To(Succeed())
				obj.SetNamespace(ns)
				specs, _, _ := unstructured.NestedMap(obj.Object, "spec", field)
				for rt := range specs {
					ann := map[string]any{cluster.ExitCodeAnnotation: "0", cluster.ExitDelayAnnotation: "2s"}
					g.Expect(unstructured.SetNestedMap(obj.Object, ann, "spec", field, rt, "template", "metadata", "annotations")).To(Succeed())
				}
				g.Expect(s.k8s.Create(ctx, &obj)).To(Succeed(), kind)
			}

			logged := map[string]bool{}
			g.Eventually(func(g Gomega) {
				// Play Volcano's admission, and record each PodGroup once.
				var groups unstructured.UnstructuredList
				groups.SetGroupVersionKind(b.groups)
				g.Expect(s.k8s.List(ctx, &groups, client.InNamespace(ns))).To(Succeed())
				for _, pg := range groups.Items {
					if !logged[pg.GetName()] {
						spec, _, _ := unstructured.NestedMap(pg.Object, "spec")
						t.Logf("%s PodGroup %s: spec %v", b.name, pg.GetName(), spec)
						logged[pg.GetName()] = true
					}
					if b.name == "volcano" {
						if phase, _, _ := unstructured.NestedString(pg.Object, "status", "phase"); phase == "" {
							_ = unstructured.SetNestedField(pg.Object, string(volcanov1beta1.PodGroupInqueue), "status", "phase")
							_ = s.k8s.Update(ctx, &pg)
						}
					}
				}
				for kind := range seedKinds {
					var job unstructured.Unstructured
					job.SetAPIVersion("kubeflow.org/v1")
					job.SetKind(kind)
					g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: seedName(samples[kind])}, &job)).To(Succeed())
					conds, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
					g.Expect(conds).NotTo(BeEmpty(), kind)
					last := conds[len(conds)-1].(map[string]any)
					g.Expect(last["type"]).To(Equal("Succeeded"), fmt.Sprintf("%s conditions %v", kind, conds))
				}
			}, 3*time.Minute, time.Second).Should(Succeed())
			g.Expect(logged).To(HaveLen(len(seedKinds)), "one PodGroup per job")
		})
	}
}

func seedName(manifest string) string {
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = yaml.Unmarshal([]byte(manifest), &m)
	return m.Metadata.Name
}
