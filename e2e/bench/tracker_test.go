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

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

func newTestTracker() *tracker {
	return &tracker{jobs: map[types.NamespacedName]*jobTimes{}, ns: map[string]*nsTimes{}, pods: map[types.UID]uint8{},
		svcs: map[types.UID]bool{}, events: map[types.UID]int32{}}
}

// A status write is a MODIFIED event that changed .status; metadata or spec
// changes and a relist's replay of the same object are not.
func TestTrackerCountsStatusWrites(t *testing.T) {
	tr := newTestTracker()
	job := func(rv string, conds ...kubeflowv1.JobConditionType) *kubeflowv1.PyTorchJob {
		j := &kubeflowv1.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u", ResourceVersion: rv}}
		for _, c := range conds {
			j.Status.Conditions = append(j.Status.Conditions, kubeflowv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return j
	}
	other := &kubeflowv1.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "v", ResourceVersion: "1"}}
	tr.onJob(nil, job("1"))
	tr.onJob(nil, other)
	tr.onJob(job("1"), job("2", kubeflowv1.JobCreated))
	labelled := job("3", kubeflowv1.JobCreated)
	labelled.Labels = map[string]string{"x": "y"}
	tr.onJob(job("2", kubeflowv1.JobCreated), labelled)                                               // metadata only
	tr.onJob(labelled, labelled)                                                                      // relist replay
	tr.onJob(labelled, job("4", kubeflowv1.JobCreated, kubeflowv1.JobRunning))                        // Running
	tr.onJob(job("4", kubeflowv1.JobCreated, kubeflowv1.JobRunning), job("5", kubeflowv1.JobCreated)) // any change

	keys := []types.NamespacedName{{Namespace: "ns", Name: "a"}, {Namespace: "ns", Name: "b"}}
	got := tr.activity(keys, time.Time{}, time.Time{})
	if got.Jobs != 2 || got.StatusWrites != 3 || got.MaxStatusWrites != 3 {
		t.Errorf("activity = %+v, want 3 status writes on one of 2 jobs", got)
	}
	if got := tr.activity(keys, time.Now().Add(time.Hour), time.Time{}); got.StatusWrites != 0 {
		t.Errorf("activity after the writes = %+v", got)
	}
}

// Events about a job: each new object counts its count, a repeat counts the
// increment, and a replay or lower count nothing.
func TestTrackerCountsEvents(t *testing.T) {
	tr := newTestTracker()
	ev := func(uid string, count int32) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid)},
			InvolvedObject: corev1.ObjectReference{Kind: kubeflowv1.PyTorchJobKind, Namespace: "ns", Name: "a"}, Count: count}
	}
	tr.onEvent(ev("e1", 1))
	tr.onEvent(ev("e1", 3)) // aggregated twice more
	tr.onEvent(ev("e1", 3)) // replay
	tr.onEvent(ev("e2", 0)) // events.k8s.io without a series
	pod := ev("e3", 1)
	pod.InvolvedObject.Kind = "Pod"
	tr.onEvent(pod)
	got := tr.activity([]types.NamespacedName{{Namespace: "ns", Name: "a"}}, time.Time{}, time.Time{})
	if got.EventObjects != 2 || got.EventCount != 4 {
		t.Errorf("activity = %+v, want 2 Event objects, count 4", got)
	}
}

// A job above the status-write goal is reported by what each write changed.
func TestTrackerNamesTheWritesOfJobsAboveTheGoal(t *testing.T) {
	tr := newTestTracker()
	rv := 0
	job := func(counts int32, conds ...kubeflowv1.JobConditionType) *kubeflowv1.PyTorchJob {
		rv++
		j := &kubeflowv1.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u", ResourceVersion: fmt.Sprint(rv)}}
		for _, c := range conds {
			j.Status.Conditions = append(j.Status.Conditions, kubeflowv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
		}
		j.Status.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{"Worker": {Active: counts}}
		return j
	}
	seq := []*kubeflowv1.PyTorchJob{
		job(0),
		job(0, kubeflowv1.JobCreated),
		job(1, kubeflowv1.JobCreated, kubeflowv1.JobRunning),
		job(3, kubeflowv1.JobCreated, kubeflowv1.JobRunning),
		job(0, kubeflowv1.JobCreated, kubeflowv1.JobRunning, kubeflowv1.JobSucceeded),
	}
	seq[4].Status.CompletionTime = &metav1.Time{}
	for i := 1; i < len(seq); i++ {
		tr.onJob(seq[i-1], seq[i])
	}
	got := tr.activity([]types.NamespacedName{{Namespace: "ns", Name: "a"}}, time.Time{}, time.Time{})
	want := map[string]int{"Created > Running+counts (+0s) > counts (+0s) > Succeeded+counts+other (+0s)": 1}
	if diff := cmp.Diff(want, got.OverGoalWrites); diff != "" {
		t.Errorf("over-goal writes (-want +got):\n%s", diff)
	}
}

// A job with a failure policy: its pods are counted by restart attempt as
// they are created, run and go; its first failed pod, its Restarting and
// its Running again are timed; restartFigures reads them.
func TestTrackerFollowsRestartAttempts(t *testing.T) {
	tr := newTestTracker()
	owner := []metav1.OwnerReference{{Kind: kubeflowv1.PyTorchJobKind, Name: "a", Controller: ptr.To(true)}}
	pod := func(uid, attempt string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid), OwnerReferences: owner,
			Labels: map[string]string{kubeflowv1.RestartAttemptLabel: attempt}}, Status: corev1.PodStatus{Phase: phase}}
	}
	rv := 0
	job := func(conds ...kubeflowv1.JobConditionType) *kubeflowv1.PyTorchJob {
		rv++
		j := &kubeflowv1.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u", ResourceVersion: fmt.Sprint(rv)}}
		for _, c := range conds {
			j.Status.Conditions = append(j.Status.Conditions, kubeflowv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
		}
		return j
	}
	key := types.NamespacedName{Namespace: "ns", Name: "a"}

	for _, uid := range []string{"p0", "p1"} {
		tr.onPod(pod(uid, "0", corev1.PodPending))
		tr.onPod(pod(uid, "0", corev1.PodRunning))
		tr.onPod(pod(uid, "0", corev1.PodRunning)) // a resync counts nothing
	}
	running := job(kubeflowv1.JobRunning)
	tr.onJob(nil, running)
	tr.onPod(pod("p1", "0", corev1.PodFailed))
	restarting := job(kubeflowv1.JobRestarting)
	tr.onJob(running, restarting)
	for _, p := range []*corev1.Pod{pod("p0", "0", corev1.PodRunning), pod("p1", "0", corev1.PodFailed)} {
		p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		p.Finalizers = []string{kubeflowv1.PodTrackingFinalizer}
		tr.onPod(p) // deleted, held by the finalizer
		tr.onPod(p)
	}
	released := pod("p0", "0", corev1.PodRunning)
	released.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tr.onPod(released) // released: held by the kubelet's confirmation alone
	tr.onPodDeleted(released)
	tr.onPodDeleted(toolscache.DeletedFinalStateUnknown{Key: "ns/p1", Obj: pod("p1", "0", corev1.PodFailed)})
	for _, uid := range []string{"q0", "q1"} {
		tr.onPod(pod(uid, "1", corev1.PodRunning))
	}
	tr.onJob(restarting, job(kubeflowv1.JobRunning))

	j := tr.jobsIn([]types.NamespacedName{key})[0]
	old, cur := j.attempts["0"], j.attempts["1"]
	// p1 went with its release (a tombstone): released once, when it went.
	if old.pods != 2 || old.running != 2 || old.terminating != 2 || old.released != 2 || old.gone != 2 ||
		cur.pods != 2 || cur.running != 2 || cur.terminating+cur.released+cur.gone != 0 {
		t.Errorf("attempts = %+v", j.attempts)
	}
	if j.firstFailed.IsZero() || j.restarting.Before(j.firstFailed) || j.resumed.Before(cur.lastRunning) {
		t.Errorf("failed %v, restarting %v, resumed %v, attempt 1 running %v", j.firstFailed, j.restarting, j.resumed, cur.lastRunning)
	}
	// The copy is the caller's: the tracker goes on with its own.
	tr.onPod(pod("q2", "1", corev1.PodPending))
	if j.attempts["1"].pods != 2 {
		t.Error("jobsIn shares its attempts with the tracker")
	}

	figures := map[string]float64{}
	for _, m := range restartFigures(j, "0", "1", 2) {
		figures[m.Name] = m.Value
	}
	for _, name := range []string{restartPolicyPods, "restart: failure → all old pods terminating", "restart: failure → all old pods released (terminating, finalizer gone)",
		"restart: failure → all old pods gone", "restart: failure → job Running again",
		"restart: all old pods gone → all new pods created"} {
		if v, ok := figures[name]; !ok || v < 0 {
			t.Errorf("%s = %v (reported %v)", name, v, ok)
		}
	}
	// Three replicas wanted, two seen: the last of them is not "all".
	for _, m := range restartFigures(j, "0", "1", 3) {
		if m.Name == restartPolicyPods && m.Value != 0 {
			t.Errorf("%s with a pod missing = %v, want 0", m.Name, m.Value)
		}
	}
}
