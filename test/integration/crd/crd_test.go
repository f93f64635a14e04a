// Package crd_test installs the generated CRDs into a real kube-apiserver and
// checks the seed samples against them with strict server-side validation.
package crd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

var (
	dyn dynamic.Interface
	cs  kubernetes.Interface
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := cluster.Start(ctx, cluster.Options{Nodes: 1})
	cancel()
	if err != nil {
		println("starting local control plane:", err.Error())
		os.Exit(1)
	}
	code := func() int {
		defer func() { _ = c.Stop() }()
		cfg := c.RESTConfig()
		if err := util.InstallCRDs(context.Background(), cfg, filepath.Join(util.RepoRoot(), "config", "crd", "bases")); err != nil {
			println("installing CRDs:", err.Error())
			return 1
		}
		dyn = dynamic.NewForConfigOrDie(cfg)
		cs = kubernetes.NewForConfigOrDie(cfg)
		return m.Run()
	}()
	os.Exit(code)
}

var resources = map[string]string{
	"PyTorchJob": "pytorchjobs", "TFJob": "tfjobs", "MPIJob": "mpijobs",
	"XGBoostJob": "xgboostjobs", "PaddleJob": "paddlejobs", "JAXJob": "jaxjobs",
}

func gvr(kind string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: resources[kind]}
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func strictCreate(ns string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return dyn.Resource(gvr(obj.GetKind())).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{FieldValidation: "Strict"})
}

func TestSeedSamplesAreAcceptedWithStrictValidation(t *testing.T) {
	ns := namespace(t, "seed")
	samples, err := util.SeedManifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob"} {
		t.Run(kind, func(t *testing.T) {
			var obj unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(samples[kind]), &obj.Object); err != nil {
				t.Fatal(err)
			}
			if _, err := strictCreate(ns, &obj); err != nil {
				t.Fatalf("creating the seed %s: %v", kind, err)
			}
			// The one schema default of v1, runPolicy.suspend=false, applies
			// when runPolicy is present.
			obj.SetName(obj.GetName() + "-rp")
			_ = unstructured.SetNestedMap(obj.Object, map[string]any{}, "spec", "runPolicy")
			got, err := strictCreate(ns, &obj)
			if err != nil {
				t.Fatal(err)
			}
			if v, found, _ := unstructured.NestedBool(got.Object, "spec", "runPolicy", "suspend"); !found || v {
				t.Errorf("spec.runPolicy.suspend = %v (found %v), want false", v, found)
			}
		})
	}
}

func TestUnknownFieldIsRejectedNamingTheField(t *testing.T) {
	ns := namespace(t, "strict")
	samples, _ := util.SeedManifests()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(samples["PyTorchJob"]), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, int64(3), "spec", "pytorchReplicaSpecs", "Worker", "replicaz"); err != nil {
		t.Fatal(err)
	}
	_, err := strictCreate(ns, &obj)
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.pytorchReplicaSpecs.Worker.replicaz"`) {
		t.Fatalf("error = %v, want it to name spec.pytorchReplicaSpecs.Worker.replicaz", err)
	}
}

func TestSchemaRules(t *testing.T) {
	ns := namespace(t, "rules")
	job := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("kubeflow.org/v1")
		u.SetKind("PyTorchJob")
		u.SetName(name)
		_ = unstructured.SetNestedField(u.Object, map[string]any{
			"Worker": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "pytorch", "image": "x"}}}}},
		}, "spec", "pytorchReplicaSpecs")
		return u
	}
	t.Run("queue is immutable", func(t *testing.T) {
		u := job("q")
		_ = unstructured.SetNestedField(u.Object, "team-a", "spec", "runPolicy", "schedulingPolicy", "queue")
		created, err := strictCreate(ns, u)
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(created.Object, "team-b", "spec", "runPolicy", "schedulingPolicy", "queue")
		_, err = dyn.Resource(gvr("PyTorchJob")).Namespace(ns).Update(context.Background(), created, metav1.UpdateOptions{})
		if err == nil || !strings.Contains(err.Error(), "spec.runPolicy.schedulingPolicy.queue is immutable") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("failurePolicy is immutable", func(t *testing.T) {
		fp := map[string]any{"maxRestarts": int64(1), "rules": []any{map[string]any{"name": "r", "action": "RestartJob"}}}
		u := job("fp")
		_ = unstructured.SetNestedField(u.Object, fp, "spec", "runPolicy", "failurePolicy")
		created, err := strictCreate(ns, u)
		if err != nil {
			t.Fatal(err)
		}
		update := func(mutate func(*unstructured.Unstructured)) error {
			c := created.DeepCopy()
			mutate(c)
			_, err := dyn.Resource(gvr("PyTorchJob")).Namespace(ns).Update(context.Background(), c, metav1.UpdateOptions{})
			return err
		}
		changed := update(func(c *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(c.Object, int64(2), "spec", "runPolicy", "failurePolicy", "maxRestarts")
		})
		removed := update(func(c *unstructured.Unstructured) {
			unstructured.RemoveNestedField(c.Object, "spec", "runPolicy", "failurePolicy")
		})
		for what, err := range map[string]error{"changed": changed, "removed": removed} {
			if err == nil || !strings.Contains(err.Error(), "spec.runPolicy.failurePolicy is immutable") {
				t.Errorf("%s: error = %v", what, err)
			}
		}
		plain := job("fp-added")
		_ = unstructured.SetNestedField(plain.Object, int64(1), "spec", "runPolicy", "backoffLimit")
		if created, err = strictCreate(ns, plain); err != nil {
			t.Fatal(err)
		}
		if err := update(func(c *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(c.Object, fp, "spec", "runPolicy", "failurePolicy")
		}); err == nil || !strings.Contains(err.Error(), "spec.runPolicy.failurePolicy is immutable") {
			t.Errorf("added: error = %v", err)
		}
	})
	t.Run("failurePolicy enums and bounds", func(t *testing.T) {
		u := job("fp-bad")
		_ = unstructured.SetNestedField(u.Object, map[string]any{"maxRestarts": int64(-1), "restartStrategy": "Sometimes",
			"rules": []any{map[string]any{"name": "r", "action": "Retry"}}}, "spec", "runPolicy", "failurePolicy")
		_, err := strictCreate(ns, u)
		for _, want := range []string{"spec.runPolicy.failurePolicy.maxRestarts", "spec.runPolicy.failurePolicy.restartStrategy",
			"spec.runPolicy.failurePolicy.rules[0].action"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error = %v, want it to name %s", err, want)
			}
		}
	})
	t.Run("replicaSpecs are required", func(t *testing.T) {
		u := job("norep")
		unstructured.RemoveNestedField(u.Object, "spec", "pytorchReplicaSpecs")
		_ = unstructured.SetNestedField(u.Object, map[string]any{}, "spec", "runPolicy")
		if _, err := strictCreate(ns, u); err == nil || !strings.Contains(err.Error(), "spec.pytorchReplicaSpecs: Required value") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("scale subresource drives Worker replicas", func(t *testing.T) {
		if _, err := strictCreate(ns, job("scale")); err != nil {
			t.Fatal(err)
		}
		s, err := dyn.Resource(gvr("PyTorchJob")).Namespace(ns).Get(context.Background(), "scale", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(s.Object, int64(4), "spec", "replicas")
		if _, err := dyn.Resource(gvr("PyTorchJob")).Namespace(ns).Update(context.Background(), s, metav1.UpdateOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		got, _ := dyn.Resource(gvr("PyTorchJob")).Namespace(ns).Get(context.Background(), "scale", metav1.GetOptions{})
		if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "pytorchReplicaSpecs", "Worker", "replicas"); r != 4 {
			t.Fatalf("Worker replicas = %d after scaling to 4", r)
		}
	})
}
