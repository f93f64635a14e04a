package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// The patch must take the stored job's status to exactly the planned one
// (including removals), touch nothing else, and carry the resourceVersion
// for the apiserver's optimistic lock.
func TestStatusPatch(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	created := kubeflowv1.JobCondition{Type: kubeflowv1.JobCreated, Status: corev1.ConditionTrue, Reason: "PyTorchJobCreated", LastUpdateTime: t0, LastTransitionTime: t0}
	running := kubeflowv1.JobCondition{Type: kubeflowv1.JobRunning, Status: corev1.ConditionTrue, Reason: "PyTorchJobRunning", LastUpdateTime: t0, LastTransitionTime: t0}
	for _, tc := range []struct {
		name      string
		cur, next kubeflowv1.JobStatus
	}{
		{"first write", kubeflowv1.JobStatus{}, kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{created}, StartTime: &t0,
			ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Active: 1}}}},
		{"a condition and a count", kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{created},
			ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Active: 1}, "Worker": {Active: 1}}},
			kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{created, running},
				ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Active: 1}, "Worker": {Active: 3}}}},
		{"removals", kubeflowv1.JobStatus{CountedPods: []string{"a", "b"}, CompletionTime: &t0,
			ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Active: 1}, "Worker": {Active: 1}}},
			kubeflowv1.JobStatus{ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Succeeded: 1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(3).Obj()
			stored.ResourceVersion = "41"
			stored.Status = tc.cur
			patch, _, err := statusPatch("41", &tc.cur, &tc.next)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(stored)
			after, err := jsonpatch.MergePatch(before, patch)
			if err != nil {
				t.Fatal(err)
			}
			var got kubeflowv1.PyTorchJob
			if err := json.Unmarshal(after, &got); err != nil {
				t.Fatal(err)
			}
			want := stored.DeepCopy()
			want.Status = tc.next
			if diff := cmp.Diff(want, &got); diff != "" {
				t.Errorf("patched job (-want +got):\n%s", diff)
			}
			var meta struct {
				Metadata map[string]any `json:"metadata"`
			}
			if err := json.Unmarshal(patch, &meta); err != nil || meta.Metadata["resourceVersion"] != "41" || len(meta.Metadata) != 1 {
				t.Errorf("patch metadata = %v (%v), want only resourceVersion 41", meta.Metadata, err)
			}
		})
	}
}

// What a status write remembers (for passes that run before the cache shows
// it) is the job as stored: the response carries only metadata, so the
// written status is rebuilt, and must not keep anything of the old one.
func TestStatusWriteRemembersTheStoredJob(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	job.Status = kubeflowv1.JobStatus{CountedPods: []string{"a"}, CompletionTime: &t0, RestartCount: 2,
		ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Active: 1}, "Worker": {Active: 1}}}
	h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{})
	cached := h.job()
	later := metav1.NewTime(t0.Add(1500 * time.Millisecond))
	next := kubeflowv1.JobStatus{RestartCount: 2, StartTime: &later,
		ReplicaStatuses: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Master": {Succeeded: 1}}}
	if _, err := h.r.writeStatus(context.Background(), cached, &next); err != nil {
		t.Fatal(err)
	}
	stored := h.job()
	remembered := h.r.written.freshest(cached)
	if diff := cmp.Diff(stored, remembered); diff != "" {
		t.Errorf("remembered job (-stored +remembered):\n%s", diff)
	}
	if !h.r.written.isEcho(stored) {
		t.Errorf("the stored version (resourceVersion %s) is not known as our write's echo", stored.ResourceVersion)
	}
}
