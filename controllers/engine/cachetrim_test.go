package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// The cached pod keeps what the engine reads (identity, labels, owner,
// deletion, phase, reasons, container states and restarts, and for pod
// events the termination and waiting reasons and messages and the
// conditions) and nothing else.
func TestTrimPod(t *testing.T) {
	full := testjobs.MakePod("j-worker-0", "ns").UID("u").
		Label(kubeflowv1.ReplicaTypeLabel, "worker").Label(kubeflowv1.ReplicaIndexLabel, "0").
		Phase(corev1.PodFailed).Reason("Evicted").DisruptionTarget("EvictionByEvictionAPI").
		Terminated("pytorch", 137, "OOMKilled").TerminationMessage("out of memory").Restarts("pytorch", 2).
		Waiting("sidecar", "ImagePullBackOff", `Back-off pulling image "x"`).InitWaiting("init", "ErrImagePull", "denied").
		Condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "0/4 nodes are available", time.Unix(1e9, 0)).
		Terminating().Obj()
	full.Annotations = map[string]string{"sidecar.istio.io/status": "{...}"}
	full.Labels[kubeflowv1.OperatorNameLabel] = "pytorchjob-controller"
	full.Labels["security.istio.io/tlsMode"] = "istio"
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	full.OwnerReferences = []metav1.OwnerReference{{Name: "j", UID: "job", Controller: new(true)}}
	full.Spec = corev1.PodSpec{
		Containers:    []corev1.Container{{Name: "pytorch", Image: "img", Env: []corev1.EnvVar{{Name: "RANK", Value: "0"}}}},
		RestartPolicy: corev1.RestartPolicyNever, SchedulerName: "volcano", NodeName: "n1",
		Volumes: []corev1.Volume{{Name: "data"}},
	}
	full.Status.ContainerStatuses[0].Image = "img"
	full.Status.ContainerStatuses[0].ImageID = "sha256:x"
	full.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}}

	want := full.DeepCopy()
	want.Annotations, want.ManagedFields = nil, nil
	want.Labels = map[string]string{kubeflowv1.ReplicaTypeLabel: "worker", kubeflowv1.ReplicaIndexLabel: "0"}
	want.Spec = corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, SchedulerName: "volcano", NodeName: "n1"}
	want.Status.ContainerStatuses[0].Image, want.Status.ContainerStatuses[0].ImageID = "", ""
	want.Status.PodIPs = nil

	got, err := trimPod(full)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimPod (-want +got):\n%s", diff)
	}
}

// Children repeat the same label values and owner apiVersion and kind:
// decoded afresh for each, they are shared once cached.
func TestTrimSharesRepeatedStrings(t *testing.T) {
	decoded := func() *corev1.Pod {
		// strings.Clone: a fresh copy of each, as a decoder makes.
		pod := testjobs.MakePod("j-worker-0", "ns").
			Label(strings.Clone(kubeflowv1.ReplicaTypeLabel), strings.Clone("worker")).
			Label(strings.Clone(kubeflowv1.ReplicaIndexLabel), strings.Clone("0")).Obj()
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: strings.Clone("kubeflow.org/v1"), Kind: strings.Clone("PyTorchJob")}}
		got, err := trimPod(pod)
		if err != nil {
			t.Fatal(err)
		}
		return got.(*corev1.Pod)
	}
	a, b := decoded(), decoded()
	same := func(what, x, y string) {
		if unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s %q is not shared between two cached pods", what, x)
		}
	}
	for k, v := range a.Labels {
		same("label value", v, b.Labels[k])
	}
	same("owner apiVersion", a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion)
	same("owner kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind)
	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Error("two cached pods of the same replica type and index do not share their labels map")
	}
}

// The shared labels maps keep exactly the replica type and index a child
// has: a missing label stays missing, an empty one empty.
func TestSharedLabels(t *testing.T) {
	for _, in := range []map[string]string{
		nil,
		{"user": "x"},
		{kubeflowv1.ReplicaTypeLabel: "worker"},
		{kubeflowv1.ReplicaIndexLabel: "3", "user": "x"},
		{kubeflowv1.ReplicaTypeLabel: "worker", kubeflowv1.ReplicaIndexLabel: ""},
		{kubeflowv1.ReplicaTypeLabel: "", kubeflowv1.ReplicaIndexLabel: "0"},
		{kubeflowv1.ReplicaTypeLabel: "worker", kubeflowv1.ReplicaIndexLabel: "0"},
	} {
		var want map[string]string
		for _, k := range []string{kubeflowv1.ReplicaTypeLabel, kubeflowv1.ReplicaIndexLabel} {
			if v, ok := in[k]; ok {
				if want == nil {
					want = map[string]string{}
				}
				want[k] = v
			}
		}
		if diff := cmp.Diff(want, labelsOf(in)); diff != "" {
			t.Errorf("labels of %v (-want +got):\n%s", in, diff)
		}
	}
}

// A succeeded pod keeps its exit (the ExitedWithCode event reads it) but
// not its conditions; a failed one keeps them (DisruptionTarget makes its
// failure retryable), as does the active pod above.
func TestTrimSucceededPodDropsConditions(t *testing.T) {
	for _, tc := range []struct {
		phase          corev1.PodPhase
		keepConditions bool
	}{{corev1.PodSucceeded, false}, {corev1.PodFailed, true}, {corev1.PodRunning, true}} {
		pod := testjobs.MakePod("j-worker-0", "ns").Phase(tc.phase).Terminated("pytorch", 0, "Completed").
			Condition(corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", time.Unix(1e9, 0)).
			DisruptionTarget("EvictionByEvictionAPI").Obj()
		want := pod.DeepCopy()
		if !tc.keepConditions {
			want.Status.Conditions = nil
		}
		got, err := trimPod(pod)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Status, got.(*corev1.Pod).Status); diff != "" {
			t.Errorf("%s pod status (-want +got):\n%s", tc.phase, diff)
		}
	}
}

// A succeeded pod keeps of its containers the names, restart counts and
// exits, and equal ones share one slice; other phases keep timestamps and
// messages.
func TestTrimSucceededPodStatuses(t *testing.T) {
	finished := func(phase corev1.PodPhase, code int32, reason string, restarts int32) *corev1.Pod {
		pod := testjobs.MakePod("j-worker-0", "ns").Phase(phase).Terminated("pytorch", code, reason).TerminationMessage("bye").Obj()
		s := &pod.Status.ContainerStatuses[0]
		s.RestartCount, s.ContainerID, s.Started = restarts, "containerd://0123", ptr.To(false)
		s.State.Terminated.StartedAt, s.State.Terminated.FinishedAt = metav1.Unix(1e9, 0), metav1.Unix(1e9+10, 0)
		s.State.Terminated.ContainerID, s.State.Terminated.Signal = "containerd://0123", 0
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
		return pod
	}
	trim := func(pod *corev1.Pod) []corev1.ContainerStatus {
		got, err := trimPod(pod)
		if err != nil {
			t.Fatal(err)
		}
		return got.(*corev1.Pod).Status.ContainerStatuses
	}

	a := trim(finished(corev1.PodSucceeded, 0, "Completed", 2))
	want := []corev1.ContainerStatus{{Name: "pytorch", RestartCount: 2,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("succeeded pod's container statuses (-want +got):\n%s", diff)
	}
	if b := trim(finished(corev1.PodSucceeded, 0, "Completed", 2)); &b[0] != &a[0] {
		t.Error("two succeeded pods with the same exits do not share their container statuses")
	}
	if c := trim(finished(corev1.PodSucceeded, 0, "Completed", 3)); &c[0] == &a[0] || c[0].RestartCount != 3 {
		t.Errorf("a different restart count shares the slice or is lost: %+v", c)
	}

	failed := finished(corev1.PodFailed, 1, "Error", 0)
	want = failed.DeepCopy().Status.ContainerStatuses
	want[0].ContainerID = ""
	if diff := cmp.Diff(want, trim(failed)); diff != "" {
		t.Errorf("failed pod's container statuses (-want +got):\n%s", diff)
	}
}

func TestTrimService(t *testing.T) {
	full := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "j-worker-0", Namespace: "ns", Labels: map[string]string{"a": "b", kubeflowv1.ReplicaIndexLabel: "0"},
			Annotations: map[string]string{"x": "y"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
			OwnerReferences: []metav1.OwnerReference{{Name: "j", UID: "job"}}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 23456}}},
	}
	want := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "j-worker-0", Namespace: "ns", Labels: map[string]string{kubeflowv1.ReplicaIndexLabel: "0"},
		OwnerReferences: []metav1.OwnerReference{{Name: "j", UID: "job"}}}}
	got, err := trimService(full)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimService (-want +got):\n%s", diff)
	}
	// The engine's cache holds Services as metadata only.
	meta := &metav1.PartialObjectMetadata{ObjectMeta: *full.ObjectMeta.DeepCopy()}
	got, err = trimService(meta)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&metav1.PartialObjectMetadata{ObjectMeta: want.ObjectMeta}, got); diff != "" {
		t.Errorf("trimService on metadata (-want +got):\n%s", diff)
	}
}

// A finished job's cached copy drops its pod templates' specs but keeps
// what cleanup, TTL and gang teardown read; a running job is kept whole.
func TestTrimFinishedJob(t *testing.T) {
	trim := trimFinishedJob
	base := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).CleanPodPolicy(kubeflowv1.CleanPodPolicyRunning).
		TTLSecondsAfterFinished(60).Annotation(kubeflowv1.PyTorchJobReplicaTypeWorker, "kwok.x-k8s.io/exit-code", "0").Obj()
	base.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	for _, spec := range base.Spec.PyTorchReplicaSpecs {
		spec.Template.Spec.SchedulerName = "volcano"
	}
	finished := func(c kubeflowv1.JobConditionType) *kubeflowv1.PyTorchJob {
		j := base.DeepCopy()
		j.Status.Conditions = []kubeflowv1.JobCondition{{Type: c, Status: corev1.ConditionTrue}}
		return j
	}

	running := finished(kubeflowv1.JobRunning)
	got, _ := trim(running.DeepCopy())
	want := running.DeepCopy()
	want.ManagedFields = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("running job: only managedFields may go (-want +got):\n%s", diff)
	}

	for _, c := range []kubeflowv1.JobConditionType{kubeflowv1.JobSucceeded, kubeflowv1.JobFailed} {
		job := finished(c)
		got, _ := trim(job.DeepCopy())
		want := job.DeepCopy()
		want.ManagedFields = nil
		for _, spec := range want.Spec.PyTorchReplicaSpecs {
			spec.Template = corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: "volcano", RestartPolicy: spec.Template.Spec.RestartPolicy}}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s job (-want +got):\n%s", c, diff)
		}
	}

	// Finished jobs with the same replica counts and policies share what is
	// left of their specs; a different count gets its own.
	a, _ := trim(finished(kubeflowv1.JobSucceeded))
	b, _ := trim(finished(kubeflowv1.JobFailed))
	other := finished(kubeflowv1.JobSucceeded)
	other.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker].Replicas = ptr.To[int32](7)
	c, _ := trim(other)
	worker := func(o any) *kubeflowv1.ReplicaSpec {
		return o.(*kubeflowv1.PyTorchJob).Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker]
	}
	if worker(a) != worker(b) {
		t.Error("two finished jobs with the same worker spec do not share it")
	}
	if worker(c) == worker(a) || *worker(c).Replicas != 7 || *worker(a).Replicas != 3 {
		t.Errorf("workers 3 and 7 mixed up: %d, %d", *worker(a).Replicas, *worker(c).Replicas)
	}
}
