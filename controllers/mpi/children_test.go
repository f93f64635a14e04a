package mpi

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
)

func childLabels() map[string]string {
	return map[string]string{
		"app":                                 "pi",
		"training.kubeflow.org/operator-name": "mpijob-controller",
		"training.kubeflow.org/job-name":      "pi",
	}
}

func childMetaWant(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: childLabels(), OwnerReferences: ownerRefs()}
}

const kubexecDefault = "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME} -- /bin/sh -c \"$*\""

func TestDesiredConfigMap(t *testing.T) {
	cases := map[string]struct {
		job     *kubeflowv1.MPIJob
		running []string
		want    map[string]string
	}{
		"Open MPI, slots per worker": {
			job:     defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2).SlotsPerWorker(4)),
			running: []string{"pi-worker-1", "pi-worker-0"},
			want: map[string]string{
				"kubexec.sh":        kubexecDefault,
				"hostfile":          "pi-worker-0 slots=4\npi-worker-1 slots=4\n",
				"discover_hosts.sh": "#!/bin/sh\necho pi-worker-0:4\necho pi-worker-1:4",
			},
		},
		"default one slot, no worker running yet": {
			job: defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(3)),
			want: map[string]string{
				"kubexec.sh":        kubexecDefault,
				"hostfile":          "pi-worker-0 slots=1\npi-worker-1 slots=1\npi-worker-2 slots=1\n",
				"discover_hosts.sh": "#!/bin/sh",
			},
		},
		"Intel MPI reads the same hostfile; kubexec targets mainContainer": {
			job: defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).SlotsPerWorker(2).MainContainer("impi").
				Env("Launcher", "I_MPI_HYDRA_BOOTSTRAP", "rsh")),
			running: []string{"pi-worker-0"},
			want: map[string]string{
				"kubexec.sh":        "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME} --container impi -- /bin/sh -c \"$*\"",
				"hostfile":          "pi-worker-0 slots=2\n",
				"discover_hosts.sh": "#!/bin/sh\necho pi-worker-0:2",
			},
		},
		"GPU launcher is a host too": {
			job:     defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).SlotsPerWorker(8).GPUs("Launcher", 8)),
			running: []string{"pi-worker-0"},
			want: map[string]string{
				"kubexec.sh":        kubexecDefault,
				"hostfile":          "pi-launcher slots=8\npi-worker-0 slots=8\n",
				"discover_hosts.sh": "#!/bin/sh\necho pi-launcher:8\n\necho pi-worker-0:8",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := desiredConfigMap(tc.job, tc.running)
			want := &corev1.ConfigMap{ObjectMeta: childMetaWant("pi-config"), Data: tc.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ConfigMap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredRole(t *testing.T) {
	podsRule := rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	cases := map[string]struct {
		job  *kubeflowv1.MPIJob
		want []rbacv1.PolicyRule
	}{
		"exec limited to the workers": {
			job: defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(3)),
			want: []rbacv1.PolicyRule{podsRule, {
				Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods/exec"},
				ResourceNames: []string{"pi-worker-0", "pi-worker-1", "pi-worker-2"},
			}},
		},
		"no workers, no exec into anything": {
			job:  defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher()),
			want: []rbacv1.PolicyRule{podsRule},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := &rbacv1.Role{ObjectMeta: childMetaWant("pi-launcher"), Rules: tc.want}
			if diff := cmp.Diff(want, desiredRole(tc.job)); diff != "" {
				t.Errorf("Role (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredRoleBinding(t *testing.T) {
	want := &rbacv1.RoleBinding{
		ObjectMeta: childMetaWant("pi-launcher"),
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "pi-launcher", Namespace: "ns"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pi-launcher"},
	}
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1))
	if diff := cmp.Diff(want, desiredRoleBinding(j, launcherServiceAccountName(j))); diff != "" {
		t.Errorf("RoleBinding (-want +got):\n%s", diff)
	}
	own := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).ServiceAccount("Launcher", "mine"))
	if got := desiredRoleBinding(own, launcherServiceAccountName(own)).Subjects[0].Name; got != "mine" {
		t.Errorf("RoleBinding subject = %q, want the launcher template's ServiceAccount", got)
	}
}

func newFakeClient(objs ...client.Object) client.Client {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := kubeflowv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func workerPod(name string, phase corev1.PodPhase, owner string) *corev1.Pod {
	p := testjobs.MakePod(name, "ns").
		Label(kubeflowv1.OperatorNameLabel, "mpijob-controller").
		Label(kubeflowv1.JobNameLabel, "pi").
		Label(kubeflowv1.ReplicaTypeLabel, "worker").
		Phase(phase).Obj()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "MPIJob", Name: "pi", UID: types.UID(owner), Controller: ptr.To(true)}}
	return p
}

func TestReconcileChildren(t *testing.T) {
	ctx := context.Background()
	fw := New(Options{})
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2).SlotsPerWorker(2))
	c := newFakeClient(
		workerPod("pi-worker-0", corev1.PodRunning, "uid-1"),
		workerPod("pi-worker-1", corev1.PodPending, "uid-1"),
		workerPod("pi-worker-9", corev1.PodRunning, "someone-else"),
	)
	if err := fw.ReconcileChildren(ctx, c, j, true); err != nil {
		t.Fatal(err)
	}
	key := func(n string) client.ObjectKey { return client.ObjectKey{Namespace: "ns", Name: n} }
	var sa corev1.ServiceAccount
	var role rbacv1.Role
	var rb rbacv1.RoleBinding
	var cm corev1.ConfigMap
	for _, o := range []struct {
		name string
		obj  client.Object
	}{{"pi-launcher", &sa}, {"pi-launcher", &role}, {"pi-launcher", &rb}, {"pi-config", &cm}} {
		if err := c.Get(ctx, key(o.name), o.obj); err != nil {
			t.Fatalf("%T %s: %v", o.obj, o.name, err)
		}
		if !metav1.IsControlledBy(o.obj, j) {
			t.Errorf("%T %s is not controlled by the job: %v", o.obj, o.name, o.obj.GetOwnerReferences())
		}
		if diff := cmp.Diff(childLabels(), o.obj.GetLabels()); diff != "" {
			t.Errorf("%T labels (-want +got):\n%s", o.obj, diff)
		}
	}
	if got, want := cm.Data["discover_hosts.sh"], "#!/bin/sh\necho pi-worker-0:2"; got != want {
		t.Errorf("discover_hosts.sh = %q, want %q (running workers of this job only)", got, want)
	}

	// Scale up and let worker 1 run: the ConfigMap and Role follow in place.
	j.Spec.MPIReplicaSpecs["Worker"].Replicas = ptr.To[int32](3)
	var w1 corev1.Pod
	if err := c.Get(ctx, key("pi-worker-1"), &w1); err != nil {
		t.Fatal(err)
	}
	w1.Status.Phase = corev1.PodRunning
	if err := c.Status().Update(ctx, &w1); err != nil {
		t.Fatal(err)
	}
	if err := fw.ReconcileChildren(ctx, c, j, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key("pi-config"), &cm); err != nil {
		t.Fatal(err)
	}
	wantData := map[string]string{
		"kubexec.sh":        kubexecDefault,
		"hostfile":          "pi-worker-0 slots=2\npi-worker-1 slots=2\npi-worker-2 slots=2\n",
		"discover_hosts.sh": "#!/bin/sh\necho pi-worker-0:2\necho pi-worker-1:2",
	}
	if diff := cmp.Diff(wantData, cm.Data); diff != "" {
		t.Errorf("ConfigMap data after scaling (-want +got):\n%s", diff)
	}
	if err := c.Get(ctx, key("pi-launcher"), &role); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pi-worker-0", "pi-worker-1", "pi-worker-2"}, role.Rules[1].ResourceNames); diff != "" {
		t.Errorf("Role resourceNames after scaling (-want +got):\n%s", diff)
	}

	// Inactive (suspended or finished): children are kept, as in v1.
	if err := fw.ReconcileChildren(ctx, c, j, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key("pi-config"), &cm); err != nil {
		t.Errorf("ConfigMap must survive an inactive pass: %v", err)
	}
}

func TestReconcileChildrenRefusesForeignObjects(t *testing.T) {
	ctx := context.Background()
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1))
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pi-config", Namespace: "ns", Labels: childLabels(),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "MPIJob", Name: "pi", UID: "old-uid", Controller: ptr.To(true)}}},
		Data: map[string]string{"hostfile": "theirs"}}
	c := newFakeClient(foreign)
	err := New(Options{}).ReconcileChildren(ctx, c, j, true)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || conflict.Kind != "ConfigMap" || conflict.Name != "pi-config" {
		t.Fatalf("err = %v, want a ConfigMap ConflictError", err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "pi-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["hostfile"] != "theirs" || cm.OwnerReferences[0].UID != "old-uid" {
		t.Errorf("a foreign ConfigMap must be neither updated nor adopted: %+v", cm)
	}
}

func TestReconcileChildrenUsesUserServiceAccount(t *testing.T) {
	ctx := context.Background()
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).ServiceAccount("Launcher", "mine"))
	users := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}}
	c := newFakeClient(users)
	if err := New(Options{}).ReconcileChildren(ctx, c, j, true); err != nil {
		t.Fatalf("a user's ServiceAccount is used, not a conflict: %v", err)
	}
	var sa corev1.ServiceAccount
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "mine"}, &sa); err != nil {
		t.Fatal(err)
	}
	if len(sa.OwnerReferences) != 0 {
		t.Errorf("the user's ServiceAccount must not be adopted: %v", sa.OwnerReferences)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "pi-launcher"}, &corev1.ServiceAccount{}); err == nil {
		t.Error("no <job>-launcher ServiceAccount is needed when the template names one")
	}
}
