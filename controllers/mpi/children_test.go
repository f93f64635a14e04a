package mpi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

func childLabels() map[string]string {
	return map[string]string{
		"app":                                 "pi",
		"training.kubeflow.org/operator-name": "mpijob-controller",
		"training.kubeflow.org/job-name":      "pi",
	}
}

func ownerRefs() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: "kubeflow.org/v1", Kind: "MPIJob", Name: "pi", UID: "uid-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
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

func workerPod(name string, phase corev1.PodPhase, owner string) *corev1.Pod {
	p := testjobs.MakePod(name, "ns").
		Label(kubeflowv1.OperatorNameLabel, "mpijob-controller").
		Label(kubeflowv1.JobNameLabel, "pi").
		Label(kubeflowv1.ReplicaTypeLabel, "worker").
		Phase(phase).Obj()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "MPIJob", Name: "pi", UID: types.UID(owner), Controller: ptr.To(true)}}
	return p
}

// The engine makes, adopts and repairs these (engine/extrachildren.go);
// the adapter only says what they are.
func TestDesiredChildren(t *testing.T) {
	j := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(2).SlotsPerWorker(2))
	pods := []*corev1.Pod{
		workerPod("pi-worker-0", corev1.PodRunning, string(j.UID)),
		workerPod("pi-worker-1", corev1.PodPending, string(j.UID)),
		workerPod("pi-worker-9", corev1.PodRunning, "someone-else"),
	}
	got := New(Options{}).DesiredChildren(j, pods)
	want := []engine.DesiredChild{
		{Object: desiredServiceAccount(j, "pi-launcher")},
		{Object: desiredRole(j)},
		{Object: desiredRoleBinding(j, "pi-launcher")},
		{Object: desiredConfigMap(j, []string{"pi-worker-0"})},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DesiredChildren (-want +got):\n%s", diff)
	}
	if hosts := got[3].Object.(*corev1.ConfigMap).Data["discover_hosts.sh"]; hosts != "#!/bin/sh\necho pi-worker-0:2" {
		t.Errorf("discover_hosts.sh = %q, want the running workers of this job only", hosts)
	}

	// A ServiceAccount named in the launcher template is used as it is.
	own := defaulted(testjobs.MakeMPIJob("pi", "ns").Launcher().Workers(1).ServiceAccount("Launcher", "mine"))
	got = New(Options{}).DesiredChildren(own, nil)
	if sa := got[0]; sa.Object.GetName() != "mine" || !sa.UseExisting {
		t.Errorf("ServiceAccount child = %s (UseExisting %v), want mine, used as it is", sa.Object.GetName(), sa.UseExisting)
	}
	if subj := got[2].Object.(*rbacv1.RoleBinding).Subjects[0].Name; subj != "mine" {
		t.Errorf("RoleBinding subject = %q, want mine", subj)
	}
}

func TestExtraTypesKeptWhenInactive(t *testing.T) {
	for _, et := range New(Options{}).ExtraTypes() {
		if !et.KeepWhenInactive {
			t.Errorf("%T is deleted on suspend; v1 keeps MPI's children until the job goes", et.Object)
		}
	}
}
