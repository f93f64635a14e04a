package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

type recordedEvents []string

func (r *recordedEvents) Event(_ runtime.Object, eventType, reason, message string) {
	*r = append(*r, eventType+" "+reason+" "+message)
}

func TestCreatedChildrenEvents(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").Obj()
	pod := func(n string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}} }
	svc := func(n string) *corev1.Service { return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n}} }

	var one createdChildren
	one.add(pod("j-master-0"))
	var rec recordedEvents
	one.emit(&rec, job)
	if diff := cmp.Diff(recordedEvents{"Normal SuccessfulCreatePod Created pod: j-master-0"}, rec); diff != "" {
		t.Errorf("one pod: v1's message expected (-want +got):\n%s", diff)
	}

	var many createdChildren
	for _, n := range []string{"j-worker-1", "j-master-0", "j-worker-0"} {
		many.add(pod(n))
		many.add(svc(n))
	}
	rec = nil
	many.emit(&rec, job)
	want := recordedEvents{
		"Normal SuccessfulCreatePod Created 3 pods: j-master-0, j-worker-0, j-worker-1",
		"Normal SuccessfulCreateService Created 3 services: j-master-0, j-worker-0, j-worker-1",
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
}

func TestJoinNamesElidesLongLists(t *testing.T) {
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("w-%04d", i))
	}
	got := joinNames(names)
	if want := "w-0000, w-0001, w-0002, w-0003, w-0004, w-0005, w-0006, w-0007, w-0008, w-0009, ... (980 more), " +
		"w-0990, w-0991, w-0992, w-0993, w-0994, w-0995, w-0996, w-0997, w-0998, w-0999"; got != want {
		t.Errorf("joinNames =\n%s\nwant\n%s", got, want)
	}
}
