package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// extraFramework is the fake framework with an elastic HPA and two extra
// children: a ConfigMap kept while inactive, and a ServiceAccount the user
// may name (used as it is when someone else's).
type extraFramework struct {
	autoscaledFramework
	serviceAccount string
}

func (extraFramework) ExtraTypes() []ExtraType {
	return []ExtraType{{Object: &corev1.ConfigMap{}, KeepWhenInactive: true}, {Object: &corev1.ServiceAccount{}, KeepWhenInactive: true}}
}

func (f extraFramework) DesiredChildren(job *kubeflowv1.PyTorchJob, _ []*corev1.Pod) []DesiredChild {
	meta := func(name string) metav1.ObjectMeta {
		labels := JobLabels(fakeControllerName, job.GetName())
		labels["app"] = job.GetName()
		return metav1.ObjectMeta{Name: name, Namespace: job.GetNamespace(), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{ownerReference(kubeflowv1.PyTorchJobKind, job)}}
	}
	out := []DesiredChild{{Object: &corev1.ConfigMap{ObjectMeta: meta(job.GetName() + "-config"), Data: map[string]string{"hostfile": "j-worker-0 slots=1\n"}}}}
	if f.serviceAccount != "" {
		out = append(out, DesiredChild{Object: &corev1.ServiceAccount{ObjectMeta: meta(f.serviceAccount)}, UseExisting: true})
	}
	return out
}

var _ ExtraChildren[*kubeflowv1.PyTorchJob] = extraFramework{}

type nopRecorder struct{}

func (nopRecorder) Event(runtime.Object, string, string, string) {}

// extraHarness is a reconciler over a fake API whose cache, like the
// operator's, only shows children with the operator-name label; the API
// reader sees everything.
type extraHarness struct {
	api client.WithWatch
	r   *Reconciler[*kubeflowv1.PyTorchJob]
	job *kubeflowv1.PyTorchJob
}

func newExtraHarness(t *testing.T, fw Framework[*kubeflowv1.PyTorchJob], job *kubeflowv1.PyTorchJob, funcs interceptor.Funcs, objs ...client.Object) *extraHarness {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kubeflowv1.AddToScheme(scheme)
	index := func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil {
			return []string{string(ref.UID)}
		}
		return nil
	}
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, job)...).
		WithStatusSubresource(job).
		WithIndex(&corev1.Pod{}, ControllerUIDIndex, index).
		WithIndex(&corev1.Service{}, ControllerUIDIndex, index).Build()
	get := funcs.Get
	funcs.Get = func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if get != nil {
			if err := get(ctx, c, key, obj, opts...); err != nil {
				return err
			}
		} else if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		if _, isJob := obj.(*kubeflowv1.PyTorchJob); !isJob && obj.GetLabels()[kubeflowv1.OperatorNameLabel] == "" {
			return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
		}
		return nil
	}
	list := funcs.List
	funcs.List = func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if list != nil {
			return list(ctx, c, l, opts...)
		}
		if err := c.List(ctx, l, opts...); err != nil {
			return err
		}
		if pl, ok := l.(*corev1.PodList); ok {
			kept := pl.Items[:0]
			for _, p := range pl.Items {
				if p.Labels[kubeflowv1.OperatorNameLabel] != "" {
					kept = append(kept, p)
				}
			}
			pl.Items = kept
		}
		return nil
	}
	cached := interceptor.NewClient(api, funcs)
	return &extraHarness{api: api, job: job, r: NewReconciler(fw, cached, api, nopRecorder{}, Options{StatusBatchWindow: -1})}
}

func (h *extraHarness) reconcile(t *testing.T) error {
	t.Helper()
	_, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(h.job)})
	return err
}

func (h *extraHarness) get(t *testing.T, name string, obj client.Object) error {
	t.Helper()
	return h.api.Get(context.Background(), client.ObjectKey{Namespace: h.job.Namespace, Name: name}, obj)
}

func v1Owner(job client.Object) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: job.GetName(), UID: job.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
}

// Objects v1 made carry other labels (MPI's: only app; the HPA: none) and
// so are invisible to the operator's cache: they are adopted by their
// controller reference, brought to the desired content, and cleaned up.
func TestExtraChildrenAdoptsV1Objects(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Elastic(1, 4, testjobs.CPUMetric(80)).Obj()
	v1ConfigMap := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "j-config", Namespace: "ns", UID: "cm-uid", Labels: map[string]string{"app": "j"}, OwnerReferences: v1Owner(job)},
		Data:       map[string]string{"hostfile": "stale"},
	}
	v1HPA := &autoscalingv2.HorizontalPodAutoscaler{
		// The fake API sets no UIDs; the engine tells deletions apart by them.
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "hpa-uid", OwnerReferences: v1Owner(job)},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "PyTorchJob", Name: "j", APIVersion: "kubeflow.org/v1"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 2, Metrics: []autoscalingv2.MetricSpec{testjobs.CPUMetric(80)},
		},
	}
	// v1's running master: its labels lack nothing the cache selects on,
	// but this one was stripped of them to exercise pod adoption.
	v1Pod := testjobs.MakePod("j-master-0", "ns").UID("pod-uid").Phase(corev1.PodRunning).Obj()
	v1Pod.OwnerReferences = v1Owner(job)
	h := newExtraHarness(t, extraFramework{}, job, interceptor.Funcs{}, v1ConfigMap, v1HPA, v1Pod)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}

	var cm corev1.ConfigMap
	if err := h.get(t, "j-config", &cm); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"app": "j", kubeflowv1.OperatorNameLabel: fakeControllerName, kubeflowv1.JobNameLabel: "j"}
	if diff := cmp.Diff(wantLabels, cm.Labels); diff != "" {
		t.Errorf("adopted ConfigMap labels (-want +got):\n%s", diff)
	}
	if cm.Data["hostfile"] != "j-worker-0 slots=1\n" || cm.UID != v1ConfigMap.UID {
		t.Errorf("adopted ConfigMap = %v (uid %s), want v1's object with the desired data", cm.Data, cm.UID)
	}
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := h.get(t, "j", &hpa); err != nil {
		t.Fatal(err)
	}
	if hpa.Labels[kubeflowv1.OperatorNameLabel] != fakeControllerName || hpa.Spec.MaxReplicas != 4 {
		t.Errorf("adopted HPA labels %v, maxReplicas %d; want our labels and 4", hpa.Labels, hpa.Spec.MaxReplicas)
	}
	var pod corev1.Pod
	if err := h.get(t, "j-master-0", &pod); err != nil {
		t.Fatal(err)
	}
	if pod.UID != "pod-uid" || pod.Labels[kubeflowv1.ReplicaIndexLabel] != "0" || pod.Labels[kubeflowv1.OperatorNameLabel] != fakeControllerName {
		t.Errorf("v1's running pod must be adopted in place: uid %s, labels %v", pod.UID, pod.Labels)
	}

	// Suspend: the HPA goes, the kept kind stays.
	var cur kubeflowv1.PyTorchJob
	if err := h.get(t, "j", &cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.RunPolicy.Suspend = ptr.To(true)
	if err := h.api.Update(context.Background(), &cur); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	if err := h.get(t, "j", &hpa); !apierrors.IsNotFound(err) {
		t.Errorf("adopted HPA after suspend: err = %v, want NotFound", err)
	}
	if err := h.get(t, "j-config", &cm); err != nil {
		t.Errorf("a kind kept while inactive was deleted: %v", err)
	}
}

// A name held by an object the job does not control is a ChildConflict:
// the object is left alone and the job's pods wait. A ServiceAccount the
// user named is used as it is.
func TestExtraChildrenConflict(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	foreign := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "j-config", Namespace: "ns", Labels: map[string]string{"app": "j"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "j", UID: "old-uid", Controller: ptr.To(true)}}},
		Data: map[string]string{"hostfile": "theirs"},
	}
	users := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}}
	h := newExtraHarness(t, extraFramework{serviceAccount: "mine"}, job, interceptor.Funcs{}, foreign, users)
	if err := h.reconcile(t); err != nil {
		t.Fatal(err)
	}
	var cur kubeflowv1.PyTorchJob
	if err := h.get(t, "j", &cur); err != nil {
		t.Fatal(err)
	}
	c := getCondition(&cur.Status, ConditionChildConflict)
	if c == nil || c.Status != corev1.ConditionTrue || !strings.Contains(c.Message, "configmap j-config") || strings.Contains(c.Message, "mine") {
		t.Errorf("ChildConflict = %+v, want True naming configmap j-config only", c)
	}
	var pods corev1.PodList
	if err := h.api.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods created while a child's name is held by someone else", len(pods.Items))
	}
	var cm corev1.ConfigMap
	if err := h.get(t, "j-config", &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["hostfile"] != "theirs" || cm.Labels[kubeflowv1.OperatorNameLabel] != "" {
		t.Errorf("a foreign ConfigMap must be neither updated nor adopted: %+v", cm.ObjectMeta)
	}
	var sa corev1.ServiceAccount
	if err := h.get(t, "mine", &sa); err != nil {
		t.Fatal(err)
	}
	if len(sa.OwnerReferences) != 0 || len(sa.Labels) != 0 {
		t.Errorf("the user's ServiceAccount must be used as it is: %+v", sa.ObjectMeta)
	}
}

// A conflict on a framework child must not hold back the job's pods (the
// chaos suite saw a deleted MPI worker wait behind ConfigMap conflict
// retries until its launcher finished); any other child error still does,
// since pods may depend on that child existing.
func TestExtraChildrenConflictDoesNotBlockPods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		wantPods int
	}{
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "j-config", errors.New("stale")), 2},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "j-config", errors.New("no")), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
			// Ours, with stale data: the engine patches it and gets tc.err.
			ours := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "j-config", Namespace: "ns", OwnerReferences: v1Owner(job),
					Labels: map[string]string{"app": "j", kubeflowv1.OperatorNameLabel: fakeControllerName, kubeflowv1.JobNameLabel: "j"}},
				Data: map[string]string{"hostfile": "stale"},
			}
			h := newExtraHarness(t, extraFramework{}, job, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					if _, ok := obj.(*corev1.ConfigMap); ok {
						return tc.err
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			}, ours)
			if err := h.reconcile(t); !errors.Is(err, tc.err) {
				t.Errorf("Reconcile error = %v, want the child's error returned so the pass is retried", err)
			}
			var pods corev1.PodList
			if err := h.api.List(context.Background(), &pods); err != nil {
				t.Fatal(err)
			}
			if len(pods.Items) != tc.wantPods {
				t.Errorf("pods created = %d, want %d", len(pods.Items), tc.wantPods)
			}
		})
	}
}
