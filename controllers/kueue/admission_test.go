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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const queueLabel = "kueue.x-k8s.io/queue-name"

func admissionWith(t *testing.T, objs ...client.Object) *Admission {
	t.Helper()
	s := runtime.NewScheme()
	if err := kueuev1beta2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := kubeflowv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	settings, err := LoadSettings("")
	if err != nil {
		t.Fatal(err)
	}
	return NewAdmission(fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build(), settings)
}

// TestAdmissionDefault: the defaulting Kueue's webhooks did for the kinds
// they integrated, now in the operator's.
func TestAdmissionDefault(t *testing.T) {
	ctx := context.Background()
	mk := &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueuev1beta2.MultiKueueControllerName}}
	cq := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueuev1beta2.ClusterQueueSpec{
		AdmissionChecksStrategy: &kueuev1beta2.AdmissionChecksStrategy{AdmissionChecks: []kueuev1beta2.AdmissionCheckStrategyRule{{Name: "mk"}}}}}
	lq := &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "remote", Namespace: "ns"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "cq"}}
	def := &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "team"}, Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: "local"}}
	a := admissionWith(t, mk, cq, lq, def)

	queued := testjobs.MakePyTorchJob("j", "ns").Master(1).Suspend(false).Obj()
	queued.Labels = map[string]string{queueLabel: "local-queue"}
	if err := a.Default(ctx, queued); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(queued.Spec.RunPolicy.Suspend, false) {
		t.Error("a job naming a queue is not suspended on create")
	}
	if queued.Spec.RunPolicy.ManagedBy != nil {
		t.Errorf("managedBy %q for a queue without MultiKueue", *queued.Spec.RunPolicy.ManagedBy)
	}

	plain := testjobs.MakeMPIJob("j", "ns").Launcher().Workers(1).Suspend(false).Obj()
	if err := a.Default(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(plain.Spec.RunPolicy.Suspend, false) || plain.Labels[queueLabel] != "" {
		t.Error("a job naming no queue, in a namespace without a default LocalQueue, was queued")
	}

	inTeam := testjobs.MakeMPIJob("j", "team").Launcher().Workers(1).Obj()
	if err := a.Default(ctx, inTeam); err != nil {
		t.Fatal(err)
	}
	if inTeam.Labels[queueLabel] != "default" || !ptr.Deref(inTeam.Spec.RunPolicy.Suspend, false) {
		t.Errorf("in a namespace with a default LocalQueue: labels %v, suspend %v", inTeam.Labels, inTeam.Spec.RunPolicy.Suspend)
	}

	remote := testjobs.MakePyTorchJob("j", "ns").Master(1).Obj()
	remote.Labels = map[string]string{queueLabel: "remote"}
	if err := a.Default(ctx, remote); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(remote.Spec.RunPolicy.ManagedBy, ""); got != kueuev1beta2.MultiKueueControllerName {
		t.Errorf("managedBy %q for a queue with a MultiKueue admission check", got)
	}
}

// TestAdmissionValidate: the queue name cannot change while the job runs;
// a bad one is refused with its field path.
func TestAdmissionValidate(t *testing.T) {
	ctx := context.Background()
	a := admissionWith(t)
	bad := testjobs.MakePyTorchJob("j", "ns").Master(1).Obj()
	bad.Labels = map[string]string{queueLabel: "Not_A_Name"}
	errs, err := a.Validate(ctx, nil, bad)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) == 0 || errs[0].Field != "metadata.labels[kueue.x-k8s.io/queue-name]" {
		t.Errorf("a bad queue name: errors %v", errs)
	}

	old := testjobs.MakePyTorchJob("j", "ns").Master(1).Suspend(false).Obj()
	old.Labels = map[string]string{queueLabel: "a"}
	moved := old.DeepCopy()
	moved.Labels[queueLabel] = "b"
	if errs, _ := a.Validate(ctx, old, moved); len(errs) != 1 || errs[0].Field != "metadata.labels[kueue.x-k8s.io/queue-name]" {
		t.Errorf("queue changed while running: errors %v", errs)
	}
	moved.Spec.RunPolicy.Suspend = ptr.To(true)
	if errs, _ := a.Validate(ctx, old, moved); len(errs) != 0 {
		t.Errorf("queue changed while suspended: errors %v", errs)
	}
}
