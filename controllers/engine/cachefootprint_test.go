package engine_test

import (
	"encoding/json"
	"reflect"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/controllers/pytorch"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// BenchmarkCachedChildFootprint reports the live heap one cached child
// takes after the cache's transform: a succeeded worker pod of a 1+3
// PyTorchJob, as KWOK leaves it, and its Service. Each object is decoded
// afresh, as the informer does, so nothing is shared between objects but
// what the transform shares. The retained-at-scale memory of make bench is
// mostly these, times 20,000 each.
func BenchmarkCachedChildFootprint(b *testing.B) {
	fw, err := pytorch.New(pytorch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	trimPod, trimService := cacheTransform(engine.Adapt(fw), &corev1.Pod{}), cacheTransform(engine.Adapt(fw), engine.NewServiceMeta())
	job := testjobs.MakePyTorchJob("bench-job-123", "bench-ns").UID("0f3c5a1e-7d1b-4c2e-9a55-3e1d2b4c6f70").Master(1).Workers(3).Obj()
	job.ApplyDefaults()
	spec := job.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker]
	pod, _, err := engine.BuildPod(fw, job, kubeflowv1.PyTorchJobReplicaTypeWorker, 1, spec)
	if err != nil {
		b.Fatal(err)
	}
	succeed(pod)
	svc := engine.BuildService(fw, job, kubeflowv1.PyTorchJobReplicaTypeWorker, 1, spec)
	svc.UID, svc.ResourceVersion, svc.CreationTimestamp = "9b1d2c3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e", "123456", metav1.Now()
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	for _, tc := range []struct {
		name  string
		obj   client.Object
		new   func() client.Object
		trim  func(any) (any, error)
		count int
	}{
		{"pod", pod, func() client.Object { return &corev1.Pod{} }, trimPod, 2000},
		// As the engine caches it: metadata only (engine.NewServiceMeta).
		{"service", svc, func() client.Object { return &metav1.PartialObjectMetadata{} }, trimService, 2000},
		// As a typed informer would: what it was before.
		{"service-typed", svc, func() client.Object { return &corev1.Service{} }, trimService, 2000},
	} {
		data, err := json.Marshal(tc.obj)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				keep := make([]any, tc.count)
				before := liveHeap()
				for i := range keep {
					o := tc.new()
					if err := json.Unmarshal(data, o); err != nil {
						b.Fatal(err)
					}
					if keep[i], err = tc.trim(o); err != nil {
						b.Fatal(err)
					}
				}
				perObject = float64(liveHeap()-before) / float64(tc.count)
				runtime.KeepAlive(keep)
			}
			b.ReportMetric(perObject, "B/object")
		})
	}
}

// cacheTransform is the transform engine.CacheOptions gives objects of obj's type.
func cacheTransform(fw engine.Adapter, obj client.Object) toolscache.TransformFunc {
	for o, by := range engine.CacheOptions("", nil, []engine.Adapter{fw}).ByObject {
		if reflect.TypeOf(o) == reflect.TypeOf(obj) {
			return by.Transform
		}
	}
	panic("no cache options for " + reflect.TypeOf(obj).String())
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// succeed makes a built pod look like one KWOK finished: scheduled,
// conditions, a terminated container.
func succeed(pod *corev1.Pod) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	pod.UID, pod.ResourceVersion, pod.CreationTimestamp = "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d", "123456", now
	pod.Spec.NodeName = "kwok-node-17"
	pod.Status.Phase = corev1.PodSucceeded
	for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now})
	}
	pod.Status.HostIP, pod.Status.PodIP, pod.Status.StartTime = "10.0.0.17", "10.244.3.9", &now
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
}

// BenchmarkCachedJobFootprint reports the live heap a finished 1+3
// PyTorchJob takes in the cache after its transform, as make bench's
// retained-5000 keeps 5,000 of them: decoded from JSON, as the informer
// does for a custom resource.
func BenchmarkCachedJobFootprint(b *testing.B) {
	fw, err := pytorch.New(pytorch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	job := finishedJob()
	data, err := json.Marshal(job)
	if err != nil {
		b.Fatal(err)
	}
	trim := engine.CacheOptions("", []engine.Adapter{engine.Adapt(fw)}, nil).DefaultTransform
	const count = 2000
	var perObject float64
	for b.Loop() {
		keep := make([]any, count)
		before := liveHeap()
		for i := range keep {
			o := &kubeflowv1.PyTorchJob{}
			if err := json.Unmarshal(data, o); err != nil {
				b.Fatal(err)
			}
			if keep[i], err = trim(o); err != nil {
				b.Fatal(err)
			}
		}
		perObject = float64(liveHeap()-before) / float64(count)
		runtime.KeepAlive(keep)
	}
	b.ReportMetric(perObject, "B/object")
}

// finishedJob is a 1+3 PyTorchJob as the API server holds it once it
// succeeded: defaulted, KWOK's annotations on its templates, its status
// written by the engine.
func finishedJob() *kubeflowv1.PyTorchJob {
	w := testjobs.MakePyTorchJob("bench-job-123", "bench-ns").UID("0f3c5a1e-7d1b-4c2e-9a55-3e1d2b4c6f70").Master(1).Workers(3)
	for _, rt := range []kubeflowv1.ReplicaType{kubeflowv1.PyTorchJobReplicaTypeMaster, kubeflowv1.PyTorchJobReplicaTypeWorker} {
		w = w.Annotation(rt, "kwok.x-k8s.io/exit-code", "0").Annotation(rt, "kwok.x-k8s.io/exit-delay", "10s")
	}
	job := w.Obj()
	job.ApplyDefaults()
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	job.ResourceVersion, job.Generation, job.CreationTimestamp = "123456", 1, now
	job.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "training-operator", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &now}}
	cond := func(t kubeflowv1.JobConditionType, s corev1.ConditionStatus, reason, msg string) kubeflowv1.JobCondition {
		return kubeflowv1.JobCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now}
	}
	job.Status = kubeflowv1.JobStatus{
		Conditions: []kubeflowv1.JobCondition{
			cond(kubeflowv1.JobCreated, corev1.ConditionTrue, "PyTorchJobCreated", "PyTorchJob bench-job-123 is created."),
			cond(kubeflowv1.JobRunning, corev1.ConditionFalse, "PyTorchJobRunning", "PyTorchJob bench-job-123 is running."),
			cond(kubeflowv1.JobSucceeded, corev1.ConditionTrue, "PyTorchJobSucceeded", "PyTorchJob bench-job-123 is successfully completed."),
		},
		ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{},
		StartTime:       &now, CompletionTime: &now, LastReconcileTime: &now,
	}
	for rt, n := range map[kubeflowv1.ReplicaType]int32{kubeflowv1.PyTorchJobReplicaTypeMaster: 1, kubeflowv1.PyTorchJobReplicaTypeWorker: 3} {
		labels := engine.ReplicaLabels(kubeflowv1.PyTorchJobControllerName, job.Name, rt, 0)
		delete(labels, kubeflowv1.ReplicaIndexLabel)
		job.Status.ReplicaStatuses[rt] = &kubeflowv1.ReplicaStatus{Succeeded: n, Selector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: labels})}
	}
	return job
}
