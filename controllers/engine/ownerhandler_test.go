package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed-d8a409e9/training-operator/internal/testjobs"
)

func TestControllerOf(t *testing.T) {
	pytorch := schema.GroupKind{Group: "kubeflow.org", Kind: "PyTorchJob"}
	ref := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "j", UID: "u", Controller: ptr.To(controller)}
	}
	job := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}
	for _, tc := range []struct {
		name   string
		refs   []metav1.OwnerReference
		want   reconcile.Request
		wantOK bool
	}{
		{"controlled by a job of the kind", []metav1.OwnerReference{ref("kubeflow.org/v1", "PyTorchJob", true)}, job, true},
		{"another version of the group", []metav1.OwnerReference{ref("kubeflow.org/v2", "PyTorchJob", true)}, job, true},
		{"owned but not controlled", []metav1.OwnerReference{ref("kubeflow.org/v1", "PyTorchJob", false)}, reconcile.Request{}, false},
		{"controlled by another kind", []metav1.OwnerReference{ref("kubeflow.org/v1", "TFJob", true)}, reconcile.Request{}, false},
		{"same kind in another group", []metav1.OwnerReference{ref("example.com/v1", "PyTorchJob", true)}, reconcile.Request{}, false},
		{"core group owner", []metav1.OwnerReference{ref("v1", "PyTorchJob", true)}, reconcile.Request{}, false},
		{"no owner", nil, reconcile.Request{}, false},
		{"controller after a plain owner", []metav1.OwnerReference{ref("v1", "ConfigMap", false), ref("kubeflow.org/v1", "PyTorchJob", true)}, job, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testjobs.MakePod("j-worker-0", "ns").Obj()
			pod.OwnerReferences = tc.refs
			got, ok := controllerOf(pytorch, pod)
			if ok != tc.wantOK {
				t.Errorf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}
