/*
Copyright 2026 The training-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package kueue

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/jobs/kubeflow/jobs/jaxjob"
	"sigs.k8s.io/kueue/pkg/controller/jobs/kubeflow/jobs/paddlejob"
	"sigs.k8s.io/kueue/pkg/controller/jobs/kubeflow/jobs/pytorchjob"
	"sigs.k8s.io/kueue/pkg/controller/jobs/kubeflow/jobs/tfjob"
	"sigs.k8s.io/kueue/pkg/controller/jobs/kubeflow/jobs/xgboostjob"
	"sigs.k8s.io/kueue/pkg/controller/jobs/kubeflow/kubeflowjob"
	"sigs.k8s.io/kueue/pkg/podset"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const (
	tasRequired  = "kueue.x-k8s.io/podset-required-topology"
	tasGroupName = "kueue.x-k8s.io/podset-group-name"
	blockLabel   = "cloud.provider.com/topology-block"
)

func asJob(obj client.Object) kubeflowv1.Job { return obj.(kubeflowv1.Job) }

// annotate sets a template annotation on every replica type of obj.
func annotate[T client.Object](obj T, k, v string) T {
	for _, rs := range testjobs.ReplicaSpecs(obj) {
		if rs.Template.Annotations == nil {
			rs.Template.Annotations = map[string]string{}
		}
		rs.Template.Annotations[k] = v
	}
	return obj
}

func podSet(name string, count int32, tmpl corev1.PodTemplateSpec, topo *kueuev1beta2.PodSetTopologyRequest) kueuev1beta2.PodSet {
	return kueuev1beta2.PodSet{Name: kueuev1beta2.PodSetReference(name), Count: count, Template: tmpl, TopologyRequest: topo}
}

func template(obj client.Object, rt kubeflowv1.ReplicaType) corev1.PodTemplateSpec {
	return *testjobs.ReplicaSpecs(obj)[rt].Template.DeepCopy()
}

// TestPodSets: one pod set per replica type, the leading type first, named
// as Kueue's integrations name them, ranked by v1's replica-index label.
func TestPodSets(t *testing.T) {
	index := ptr.To(kubeflowv1.ReplicaIndexLabel)
	pt := testjobs.MakePyTorchJob("j", "ns").Workers(3).Master(1).Obj()
	tf := testjobs.MakeTFJob("j", "ns").Workers(2).PS(1).Chief(1).Obj()
	mpi := testjobs.MakeMPIJob("j", "ns").Workers(4).Launcher().SlotsPerWorker(8).Obj()
	jax := testjobs.MakeJAXJob("j", "ns").Workers(2).Obj()
	topo := annotate(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj(), tasRequired, blockLabel)
	grouped := annotate(annotate(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj(), tasRequired, blockLabel), tasGroupName, "all")
	cases := map[string]struct {
		job  client.Object
		want []kueuev1beta2.PodSet
	}{
		"PyTorchJob master first": {pt, []kueuev1beta2.PodSet{
			podSet("master", 1, template(pt, "Master"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
			podSet("worker", 3, template(pt, "Worker"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
		}},
		"TFJob chief, PS, workers": {tf, []kueuev1beta2.PodSet{
			podSet("chief", 1, template(tf, "Chief"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
			podSet("ps", 1, template(tf, "PS"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
			podSet("worker", 2, template(tf, "Worker"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
		}},
		"MPIJob launcher and workers (one pod per worker whatever its slots)": {mpi, []kueuev1beta2.PodSet{
			podSet("launcher", 1, template(mpi, "Launcher"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
			podSet("worker", 4, template(mpi, "Worker"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
		}},
		"JAXJob workers": {jax, []kueuev1beta2.PodSet{
			podSet("worker", 2, template(jax, "Worker"), &kueuev1beta2.PodSetTopologyRequest{PodIndexLabel: index}),
		}},
		"required topology": {topo, []kueuev1beta2.PodSet{
			podSet("master", 1, template(topo, "Master"), &kueuev1beta2.PodSetTopologyRequest{Required: ptr.To(blockLabel), PodIndexLabel: index}),
			podSet("worker", 3, template(topo, "Worker"), &kueuev1beta2.PodSetTopologyRequest{Required: ptr.To(blockLabel), PodIndexLabel: index}),
		}},
		"master and workers in one group": {grouped, []kueuev1beta2.PodSet{
			podSet("master", 1, template(grouped, "Master"), &kueuev1beta2.PodSetTopologyRequest{Required: ptr.To(blockLabel), PodIndexLabel: index, PodSetGroupName: ptr.To("all")}),
			podSet("worker", 3, template(grouped, "Worker"), &kueuev1beta2.PodSetTopologyRequest{Required: ptr.To(blockLabel), PodIndexLabel: index, PodSetGroupName: ptr.To("all")}),
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := NewJob(asJob(tc.job)).PodSets(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pod sets (-want +got):\n%s", diff)
			}
		})
	}
}

// builtinOf is Kueue's own kubeflow.org integration of a job of ours,
// through v1's Go types as Kueue reads them.
func builtinOf(t *testing.T, job client.Object) jobframework.GenericJob {
	t.Helper()
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(into any) {
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatal(err)
		}
	}
	switch job.(type) {
	case *kubeflowv1.PyTorchJob:
		var j kftraining.PyTorchJob
		decode(&j)
		return &kubeflowjob.KubeflowJob{KFJobControl: (*pytorchjob.JobControl)(&j)}
	case *kubeflowv1.TFJob:
		var j kftraining.TFJob
		decode(&j)
		return &kubeflowjob.KubeflowJob{KFJobControl: (*tfjob.JobControl)(&j)}
	case *kubeflowv1.XGBoostJob:
		var j kftraining.XGBoostJob
		decode(&j)
		return &kubeflowjob.KubeflowJob{KFJobControl: (*xgboostjob.JobControl)(&j)}
	case *kubeflowv1.PaddleJob:
		var j kftraining.PaddleJob
		decode(&j)
		return &kubeflowjob.KubeflowJob{KFJobControl: (*paddlejob.JobControl)(&j)}
	case *kubeflowv1.JAXJob:
		var j kftraining.JAXJob
		decode(&j)
		return &kubeflowjob.KubeflowJob{KFJobControl: (*jaxjob.JobControl)(&j)}
	}
	t.Fatalf("Kueue has no built-in integration of %T", job)
	return nil
}

// TestPodSetsAsKueueBuiltin: for the five kinds Kueue integrated itself,
// the operator describes a job with exactly the pod sets and priority
// Kueue's built-in integration did, so a Workload Kueue made before a
// cluster moves to --kueue-integration=operator still matches its job
// (jobframework deletes and re-queues a Workload that does not).
func TestPodSetsAsKueueBuiltin(t *testing.T) {
	withTopology := annotate(testjobs.MakePyTorchJob("topo", "ns").Master(1).Workers(3).GPUs(1).Obj(), tasRequired, blockLabel)
	priority := testjobs.MakeXGBoostJob("prio", "ns").Master(1).Workers(2).Obj()
	testjobs.ReplicaSpecs(priority)[kubeflowv1.XGBoostJobReplicaTypeWorker].Template.Spec.PriorityClassName = "high"
	withPolicy := testjobs.MakePaddleJob("sp", "ns").Master(1).Workers(2).Obj()
	testjobs.RunPolicy(withPolicy).SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: "urgent"}
	jobs := []client.Object{
		testjobs.MakePyTorchJob("pt", "ns").Master(1).Workers(3).GPUs(2).Obj(),
		withTopology,
		testjobs.MakeTFJob("tf", "ns").Chief(1).PS(2).Workers(4).Obj(),
		testjobs.MakeTFJob("tf-workers", "ns").Workers(2).Obj(),
		priority,
		withPolicy,
		testjobs.MakeJAXJob("jax", "ns").Workers(8).Obj(),
	}
	for _, job := range jobs {
		testjobs.Default(job)
		t.Run(job.GetName(), func(t *testing.T) {
			ours, theirs := NewJob(asJob(job)), builtinOf(t, job)
			got, err := ours.PodSets(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want, err := theirs.PodSets(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pod sets differ from Kueue's built-in integration (-builtin +ours):\n%s", diff)
			}
			if got, want := ours.PriorityClass(), theirs.(jobframework.JobWithPriorityClass).PriorityClass(); got != want {
				t.Errorf("priority class %q, Kueue's built-in integration %q", got, want)
			}
			if got, want := ours.PodLabelSelector(), theirs.(jobframework.JobWithPodLabelSelector).PodLabelSelector(); got != want {
				t.Errorf("pod label selector %q, Kueue's built-in integration %q", got, want)
			}
		})
	}
}

// TestRunAndRestore: an admission's pod-set information goes into the
// templates of the replica types in pod-set order and comes back out on
// eviction; the job runs only with one entry per replica type.
func TestRunAndRestore(t *testing.T) {
	job := testjobs.MakeMPIJob("j", "ns").Launcher().Workers(2).Suspend(true).Obj()
	before := job.DeepCopy()
	infos := []podset.PodSetInfo{
		{Name: "launcher", NodeSelector: map[string]string{"pool": "cpu"}},
		{Name: "worker", NodeSelector: map[string]string{"pool": "gpu"},
			Tolerations:     []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Labels:          map[string]string{"kueue.x-k8s.io/tas": "true"},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/topology"}}},
	}
	j := NewJob(job)
	if err := j.RunWithPodSetsInfo(context.Background(), infos[:1]); err == nil {
		t.Fatal("ran with one pod-set entry for two replica types")
	}
	if j.IsSuspended() != true {
		t.Fatal("a refused run unsuspended the job")
	}
	if err := j.RunWithPodSetsInfo(context.Background(), infos); err != nil {
		t.Fatal(err)
	}
	if j.IsSuspended() {
		t.Error("still suspended after run")
	}
	w := job.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeWorker].Template
	if diff := cmp.Diff(map[string]string{"pool": "gpu"}, w.Spec.NodeSelector); diff != "" {
		t.Errorf("worker nodeSelector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(infos[1].SchedulingGates, w.Spec.SchedulingGates); diff != "" {
		t.Errorf("worker scheduling gates (-want +got):\n%s", diff)
	}
	if got := job.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeLauncher].Template.Spec.NodeSelector["pool"]; got != "cpu" {
		t.Errorf("launcher nodeSelector pool=%q, want cpu", got)
	}
	j.Suspend()
	if !j.RestorePodSetsInfo([]podset.PodSetInfo{{Name: "launcher"}, {Name: "worker"}}) {
		t.Error("restore reported no change")
	}
	if diff := cmp.Diff(before.Spec.MPIReplicaSpecs, job.Spec.MPIReplicaSpecs); diff != "" {
		t.Errorf("templates after restore (-before +after):\n%s", diff)
	}
}

func condition(t kubeflowv1.JobConditionType, msg string) kubeflowv1.JobCondition {
	return kubeflowv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Message: msg}
}

func TestStatusReading(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj()
	j := NewJob(job)
	if _, _, finished := j.Finished(context.Background()); finished || j.PodsReady(context.Background()) || j.IsActive() {
		t.Fatal("a new job reads as finished, ready or active")
	}
	job.Status.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Worker": {Active: 1}}
	job.Status.Conditions = []kubeflowv1.JobCondition{condition(kubeflowv1.JobRunning, "")}
	if !j.IsActive() || !j.PodsReady(context.Background()) {
		t.Error("a Running job with an active pod reads as not active or not ready")
	}
	job.Status.Conditions = append(job.Status.Conditions, condition(kubeflowv1.JobFailed, "worker 2 exited 1"))
	if msg, success, finished := j.Finished(context.Background()); !finished || success || msg != "worker 2 exited 1" {
		t.Errorf("Finished() = %q, %v, %v; want the Failed condition's message, false, true", msg, success, finished)
	}
}

// TestReclaimablePods: succeeded replicas give their quota back, unless a
// failure policy can bring them back with a whole-job restart.
func TestReclaimablePods(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj()
	job.Status.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{
		"Master": {Active: 1}, "Worker": {Succeeded: 2, Active: 1},
	}
	got, err := NewJob(job).ReclaimablePods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kueuev1beta2.ReclaimablePod{{Name: "worker", Count: 2}}, got); diff != "" {
		t.Errorf("reclaimable pods (-want +got):\n%s", diff)
	}
	job.Spec.RunPolicy.FailurePolicy = testjobs.MakeFailurePolicy(3).Obj()
	if got, _ := NewJob(job).ReclaimablePods(context.Background()); len(got) != 0 {
		t.Errorf("reclaimable pods %v for a job a whole-job restart can rerun", got)
	}
}

func TestPriorityClassAndManagedBy(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(1).Obj()
	job.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.PriorityClassName = "worker-pc"
	j := NewJob(job)
	if got := j.PriorityClass(); got != "worker-pc" {
		t.Errorf("PriorityClass() = %q, want the first template's, worker-pc", got)
	}
	job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: "run-policy-pc"}
	if got := j.PriorityClass(); got != "run-policy-pc" {
		t.Errorf("PriorityClass() = %q, want runPolicy's, run-policy-pc", got)
	}
	j.SetManagedBy(ptr.To(kueuev1beta2.MultiKueueControllerName))
	if got := ptr.Deref(job.Spec.RunPolicy.ManagedBy, ""); got != kueuev1beta2.MultiKueueControllerName {
		t.Errorf("runPolicy.managedBy = %q", got)
	}
	if j.CanDefaultManagedBy() {
		t.Error("a job another controller manages can be handed to MultiKueue")
	}
}

// TestValidateTopology: Kueue's topology annotations are judged with the
// paths of the replica templates.
func TestValidateTopology(t *testing.T) {
	bad := annotate(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(2).Obj(), tasRequired, "")
	errs, err := NewJob(asJob(bad)).ValidateOnCreate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Field)
	}
	paths = slices.Compact(paths)
	want := []string{
		"spec.pytorchReplicaSpecs[Master].template.metadata.annotations[kueue.x-k8s.io/podset-required-topology]",
		"spec.pytorchReplicaSpecs[Worker].template.metadata.annotations[kueue.x-k8s.io/podset-required-topology]",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("error paths (-want +got):\n%s\nerrors: %v", diff, errs)
	}
	// A group of one pod set is refused at its annotation.
	lone := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(2).Obj()
	lone.Spec.PyTorchReplicaSpecs["Worker"].Template.Annotations = map[string]string{tasRequired: blockLabel, tasGroupName: "g"}
	errs, _ = NewJob(lone).ValidateOnCreate(context.Background())
	if len(errs) != 1 || errs[0].Field != "spec.pytorchReplicaSpecs[Worker].template.metadata.annotations[kueue.x-k8s.io/podset-group-name]" {
		t.Errorf("a group of one pod set: errors %v", errs)
	}
	good := annotate(testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(2).Obj(), tasRequired, blockLabel)
	if errs, err := NewJob(asJob(good)).ValidateOnCreate(context.Background()); len(errs) != 0 || err != nil {
		t.Errorf("a valid topology request refused: %v %v", errs, err)
	}
}
