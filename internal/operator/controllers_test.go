package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// The default transform trims finished jobs of enabled kinds and strips
// managedFields from everything else.
func TestDefaultTransform(t *testing.T) {
	cfg := &configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults_Configuration(cfg)
	ad, err := buildAdapters(cfg, kinds.All())
	if err != nil {
		t.Fatal(err)
	}
	opts := cacheOptions(cfg, ad)
	transform := opts.DefaultTransform
	job := testjobs.MakePyTorchJob("j", "ns").Master(1).Obj()
	job.Status.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobSucceeded, Status: corev1.ConditionTrue}}
	got, _ := transform(job)
	if c := got.(*kubeflowv1.PyTorchJob).Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster].Template.Spec.Containers; c != nil {
		t.Errorf("finished PyTorchJob kept its containers: %v", c)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	got, _ = transform(cm)
	if mf := got.(*corev1.ConfigMap).ManagedFields; mf != nil {
		t.Errorf("ConfigMap kept managedFields: %v", mf)
	}
}

// A scheme the table does not know is an error, as in the webhooks.
func TestBuildAdaptersUnknownKind(t *testing.T) {
	cfg := &configv1alpha1.Configuration{EnabledSchemes: []string{"PyTorchJob", "FooJob"}}
	configv1alpha1.SetDefaults_Configuration(cfg)
	if _, err := buildAdapters(cfg, kinds.All()); err == nil || err.Error() != "scheme foojob is not supported yet" {
		t.Errorf("buildAdapters with an unknown scheme: %v", err)
	}
}
