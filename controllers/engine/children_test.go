package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func TestBuildPod(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("uid-1").Master(1).Workers(2).
		RestartPolicy(kubeflowv1.RestartPolicyExitCode).Annotation("Worker", "a", "b").Obj()
	job.Spec.PyTorchReplicaSpecs["Worker"].Template.Labels = map[string]string{"user": "label"}
	job.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.RestartPolicy = corev1.RestartPolicyAlways

	got, overridden, err := BuildPod(fakeFramework{}, job, "Worker", 1, job.Spec.PyTorchReplicaSpecs["Worker"])
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "j-worker-1",
			Namespace: "ns",
			Labels: map[string]string{
				"user":                                "label",
				"training.kubeflow.org/operator-name": fakeControllerName,
				"training.kubeflow.org/job-name":      "j",
				"training.kubeflow.org/replica-type":  "worker",
				"training.kubeflow.org/replica-index": "1",
			},
			Annotations: map[string]string{"a": "b"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "j", UID: "uid-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "pytorch", Image: testjobs.DefaultImage, Command: []string{"python", "/workspace/train.py"},
				Env: []corev1.EnvVar{{Name: "INDEX", Value: "1"}},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildPod (-want +got):\n%s", diff)
	}
	if !overridden {
		t.Error("template restartPolicy override not reported")
	}
	master, _, _ := BuildPod(fakeFramework{}, job, "Master", 0, job.Spec.PyTorchReplicaSpecs["Master"])
	if master.Labels[kubeflowv1.JobRoleLabel] != "master" {
		t.Errorf("master pod labels = %v, want job-role=master", master.Labels)
	}
}

func TestBuildService(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("uid-1").Master(1).Obj()
	spec := job.Spec.PyTorchReplicaSpecs["Master"]
	spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{
		{Name: "pytorchjob-port", ContainerPort: 23456}, {ContainerPort: 9999}, {Name: "metrics", ContainerPort: 8080},
	}
	got := BuildService(fakeFramework{}, job, "Master", 0, spec)
	labels := map[string]string{
		"training.kubeflow.org/operator-name": fakeControllerName,
		"training.kubeflow.org/job-name":      "j",
		"training.kubeflow.org/replica-type":  "master",
		"training.kubeflow.org/replica-index": "0",
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "j-master-0", Namespace: "ns", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "j", UID: "uid-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  labels,
			Ports:     []corev1.ServicePort{{Name: "pytorchjob-port", Port: 23456}, {Name: "metrics", Port: 8080}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildService (-want +got):\n%s", diff)
	}
}

func TestBucketChildren(t *testing.T) {
	specs := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(2).Obj().Spec.PyTorchReplicaSpecs
	pod := func(name, rt, idx string) *corev1.Pod {
		return testjobs.MakePod(name, "ns").Label(kubeflowv1.ReplicaTypeLabel, rt).Label(kubeflowv1.ReplicaIndexLabel, idx).Obj()
	}
	pods := []*corev1.Pod{
		pod("j-master-0", "master", "0"), pod("j-worker-0", "worker", "0"), pod("j-worker-1", "worker", "1"),
		pod("j-worker-2", "worker", "2"), pod("j-evaluator-0", "evaluator", "0"), pod("bad", "worker", "x"),
	}
	ch := bucketChildren(specs, pods, nil, nil)
	var gotStray []string
	for _, p := range ch.strayPods {
		gotStray = append(gotStray, p.Name)
	}
	if diff := cmp.Diff([]string{"j-worker-2", "j-evaluator-0", "bad"}, gotStray); diff != "" {
		t.Errorf("strays (-want +got):\n%s", diff)
	}
	if len(ch.pods["Worker"]) != 2 || ch.pods["Master"][0].Name != "j-master-0" {
		t.Errorf("buckets = %v", ch.pods)
	}
}

// v1's MPI launcher pod carries no replica-index label: it is index 0 by
// its name, and marked for adoption, not deleted as a stray.
func TestBucketChildrenUnindexedByName(t *testing.T) {
	specs := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).Obj().Spec.PyTorchReplicaSpecs
	nameOf := func(rt kubeflowv1.ReplicaType, i int) string {
		if rt == "Master" {
			return "j-launcher"
		}
		return kubeflowv1.ReplicaName("j", rt, i)
	}
	launcher := testjobs.MakePod("j-launcher", "ns").Label(kubeflowv1.ReplicaTypeLabel, "master").Obj()
	other := testjobs.MakePod("j-other", "ns").Label(kubeflowv1.ReplicaTypeLabel, "master").Obj()
	ch := bucketChildren(specs, []*corev1.Pod{launcher, other}, nil, nameOf)
	if got := ch.pods["Master"][0]; got == nil || got.Name != "j-launcher" {
		t.Errorf("master bucket = %v, want j-launcher at index 0", ch.pods["Master"])
	}
	if len(ch.unindexed) != 1 || ch.unindexed[0].GetName() != "j-launcher" {
		t.Errorf("unindexed = %v, want j-launcher", ch.unindexed)
	}
	if len(ch.strayPods) != 1 || ch.strayPods[0].Name != "j-other" {
		t.Errorf("strays = %v, want only j-other (no index, not a replica's name)", ch.strayPods)
	}
}

// autoscaledFramework adds the elastic capability to the fake framework.
type autoscaledFramework struct{ fakeFramework }

func (autoscaledFramework) Autoscaling(o *kubeflowv1.PyTorchJob) (*int32, int32, []autoscalingv2.MetricSpec, bool) {
	ep := o.Spec.ElasticPolicy
	if ep == nil || len(ep.Metrics) == 0 {
		return nil, 0, nil, false
	}
	return ep.MinReplicas, *ep.MaxReplicas, ep.Metrics, true
}

func TestDesiredHPA(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("u").Workers(2).Elastic(1, 4, testjobs.CPUMetric(80)).Obj()
	if DesiredHPA(fakeFramework{}, job) != nil {
		t.Error("a framework without the capability gets no HPA")
	}
	if DesiredHPA(autoscaledFramework{}, testjobs.MakePyTorchJob("j", "ns").Workers(2).Elastic(1, 4).Obj()) != nil {
		t.Error("no metrics, no HPA")
	}
	want := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{
			Name: "j", Namespace: "ns",
			Labels: map[string]string{"training.kubeflow.org/operator-name": fakeControllerName, "training.kubeflow.org/job-name": "j"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "j", UID: "u",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "PyTorchJob", Name: "j", APIVersion: "kubeflow.org/v1"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    4,
			Metrics:        []autoscalingv2.MetricSpec{testjobs.CPUMetric(80)},
		},
	}
	if diff := cmp.Diff(want, DesiredHPA(autoscaledFramework{}, job)); diff != "" {
		t.Errorf("DesiredHPA (-want +got):\n%s", diff)
	}
}

// ReplicaSelector must keep writing what v1 wrote: FormatLabelSelector of the
// replica's match labels.
func TestReplicaSelectorIsFormatLabelSelector(t *testing.T) {
	for _, tc := range []struct{ controller, job, rtype string }{
		{"pytorchjob-controller", "mnist", "Master"},
		{"tfjob-controller", "a.b-c", "PS"},
		{"mpijob-controller", "x", "Launcher"},
	} {
		l := ReplicaLabels(tc.controller, tc.job, kubeflowv1.ReplicaType(tc.rtype), 0)
		delete(l, kubeflowv1.ReplicaIndexLabel)
		want := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: l})
		if diff := cmp.Diff(want, ReplicaSelector(tc.controller, tc.job, kubeflowv1.ReplicaType(tc.rtype))); diff != "" {
			t.Errorf("%+v: (-want +got)\n%s", tc, diff)
		}
	}
}
