package gang

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	schedpluginsv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/scheduling/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

type env struct {
	m      *Manager
	c      client.Client
	mapper *meta.DefaultRESTMapper
	clock  *clocktesting.FakeClock
	rec    *recorder
	fw     fakeFramework
}

// newEnv builds a Manager on a fake client whose RESTMapper serves only the given kinds.
func newEnv(t *testing.T, cfg configv1alpha1.GangScheduling, served ...schema.GroupVersionKind) *env {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kubeflowv1.AddToScheme, AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(kubeflowv1.GroupVersion.WithKind("PyTorchJob"), meta.RESTScopeNamespace)
	for _, gvk := range served {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).Build()
	if cfg.SchedulerPluginsSchedulerName == "" {
		cfg.SchedulerPluginsSchedulerName = configv1alpha1.DefaultSchedulerPluginsSchedulerName
	}
	e := &env{c: c, mapper: mapper, clock: clocktesting.NewFakeClock(time.Now()), rec: &recorder{}}
	e.m = New(Options{
		Config: cfg, Client: c, APIReader: c, RESTMapper: mapper, Scheme: s, Clock: e.clock,
		Recorder: func(string) engine.EventRecorder { return e.rec },
	})
	return e
}

func (e *env) gang(job *kubeflowv1.PyTorchJob) engine.GangScheduler {
	return e.m.Selector()(e.fw.gangJob(job))
}

// hold records a held job's message on Created, as the engine does.
func hold(job *kubeflowv1.PyTorchJob, msg string) {
	job.Status.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobCreated, Status: corev1.ConditionTrue, Message: msg}}
}

func volcanoJob() *kubeflowv1.PyTorchJob {
	j := pytorchJob(3)
	j.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.SchedulerName = "volcano"
	return j
}

func TestVolcanoSync(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, configv1alpha1.GangScheduling{})
	job := volcanoJob()
	g := e.gang(job)

	// The CRD is missing: the job is held with a clear message and one event.
	ready, msg, err := g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || ready {
		t.Fatalf("Sync without CRD = %v, %q, %v; want held", ready, msg, err)
	}
	if !strings.Contains(msg, "PodGroup scheduling.volcano.sh/v1beta1") || !strings.Contains(msg, "install Volcano") {
		t.Errorf("message %q does not name the missing API", msg)
	}
	if ev := e.rec.take(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning FailedCreatePodGroup ") {
		t.Errorf("events = %q, want one FailedCreatePodGroup", ev)
	}
	hold(job, msg)
	if _, msg2, _ := g.Sync(ctx, e.fw.gangJob(job)); msg2 != msg {
		t.Errorf("second message %q differs", msg2)
	}
	if ev := e.rec.take(); len(ev) != 0 {
		t.Errorf("repeated events %q", ev)
	}

	// The CRD appears; it is noticed after the re-check interval.
	e.mapper.Add(volcanoPodGroup.gvk, meta.RESTScopeNamespace)
	e.clock.Step(missingRecheck + time.Second)
	ready, msg, err = g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || ready || !strings.Contains(msg, "waiting for Volcano to admit PodGroup job (phase not yet set, minMember 4, queue \"default\")") {
		t.Fatalf("Sync after install = %v, %q, %v; want held for admission", ready, msg, err)
	}
	if ev := e.rec.take(); len(ev) != 1 || ev[0] != "Normal SuccessfulCreatePodGroup Created PodGroup: job" {
		t.Errorf("events = %q", ev)
	}
	var pg volcanov1beta1.PodGroup
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "job"}, &pg); err != nil {
		t.Fatal(err)
	}
	wantMeta := metav1.ObjectMeta{
		Name: "job", Namespace: "ns",
		Labels:      map[string]string{kubeflowv1.OperatorNameLabel: kubeflowv1.PyTorchJobControllerName, kubeflowv1.JobNameLabel: "job"},
		Annotations: map[string]string{"team": "a"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "job", UID: "uid-job",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
	if diff := cmp.Diff(wantMeta, pg.ObjectMeta, cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".ResourceVersion"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("PodGroup metadata (-want +got):\n%s", diff)
	}
	wantSpec := volcanov1beta1.PodGroupSpec{MinMember: 4, Queue: "default",
		MinResources: &corev1.ResourceList{"cpu": q("7"), "nvidia.com/gpu": q("3")}}
	if diff := cmp.Diff(wantSpec, pg.Spec, quantityCmp); diff != "" {
		t.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}

	// Nothing changed: no write.
	rv := pg.ResourceVersion
	if _, _, err := g.Sync(ctx, e.fw.gangJob(job)); err != nil {
		t.Fatal(err)
	}
	// Read into fresh objects: a failed Get must not leave the old values.
	pg = volcanov1beta1.PodGroup{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "job"}, &pg); err != nil {
		t.Fatal(err)
	}
	if pg.ResourceVersion != rv {
		t.Errorf("unchanged PodGroup was written (resourceVersion %s -> %s)", rv, pg.ResourceVersion)
	}

	// Volcano admits the group and someone sets a queue: pods may be created, the queue stays.
	pg.Status.Phase = volcanov1beta1.PodGroupInqueue
	pg.Spec.Queue = "team-a"
	if err := e.c.Update(ctx, &pg); err != nil {
		t.Fatal(err)
	}
	job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{MinAvailable: ptr.To[int32](2), PriorityClass: "p"}
	ready, msg, err = g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || !ready || msg != "" {
		t.Fatalf("Sync when Inqueue = %v, %q, %v; want ready", ready, msg, err)
	}
	pg = volcanov1beta1.PodGroup{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "job"}, &pg); err != nil {
		t.Fatal(err)
	}
	wantSpec = volcanov1beta1.PodGroupSpec{MinMember: 2, Queue: "team-a", PriorityClassName: "p",
		MinResources: &corev1.ResourceList{"cpu": q("3"), "nvidia.com/gpu": q("1")}}
	if diff := cmp.Diff(wantSpec, pg.Spec, quantityCmp); diff != "" {
		t.Errorf("patched spec (-want +got):\n%s", diff)
	}
	if pg.Status.Phase != volcanov1beta1.PodGroupInqueue {
		t.Errorf("status lost: %+v", pg.Status)
	}

	// Finish: deleted once, announced as v1 did (JobTerminated first), once.
	job.Status.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobSucceeded, Status: corev1.ConditionTrue}}
	if err := g.Delete(ctx, e.fw.gangJob(job)); err != nil {
		t.Fatal(err)
	}
	if err := g.Delete(ctx, e.fw.gangJob(job)); err != nil {
		t.Fatal(err)
	}
	wantEvents := []string{"Normal JobTerminated Job has been terminated. Deleting PodGroup", "Normal SuccessfulDeletePodGroup Deleted PodGroup: job"}
	if diff := cmp.Diff(wantEvents, e.rec.take()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(&pg), &pg); !apierrors.IsNotFound(err) {
		t.Errorf("Get after delete = %v, want NotFound", err)
	}
}

func TestSyncOwnership(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, configv1alpha1.GangScheduling{SchedulerName: "scheduler-plugins"}, pluginsPodGroup.gvk)
	job := pytorchJob(1)
	other := &schedpluginsv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "job", UID: "other", Controller: ptr.To(true)}}}}
	if err := e.c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	g := e.gang(job)
	ready, msg, err := g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || ready || msg != "PodGroup scheduling.x-k8s.io/v1alpha1 job is controlled by TFJob job, not by this job; delete it or rename the job" {
		t.Errorf("Sync = %v, %q, %v", ready, msg, err)
	}
	// Someone else's group is never deleted.
	if err := g.Delete(ctx, e.fw.gangJob(job)); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Errorf("foreign PodGroup deleted: %v", err)
	}

	// An unowned group (made ahead of the job) is adopted and updated.
	other.OwnerReferences = nil
	if err := e.c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	ready, msg, err = g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || !ready || msg != "" {
		t.Fatalf("Sync = %v, %q, %v; want ready", ready, msg, err)
	}
	key := client.ObjectKeyFromObject(other)
	other = &schedpluginsv1alpha1.PodGroup{}
	if err := e.c.Get(ctx, key, other); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(other); ref == nil || ref.UID != job.UID {
		t.Errorf("not adopted: %+v", other.OwnerReferences)
	}
	if other.Spec.MinMember != 2 {
		t.Errorf("minMember = %d", other.Spec.MinMember)
	}
}

func TestNativeSync(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, configv1alpha1.GangScheduling{PodGroupAPI: configv1alpha1.PodGroupAPIKubernetes})
	job := pytorchJob(2)
	g := e.gang(job)
	ready, msg, err := g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || ready || !strings.Contains(msg, "GenericWorkload") {
		t.Fatalf("Sync without the API = %v, %q, %v", ready, msg, err)
	}
	e.mapper.Add(nativeWorkload.gvk, meta.RESTScopeNamespace)
	e.mapper.Add(nativePodGroup.gvk, meta.RESTScopeNamespace)
	e.clock.Step(missingRecheck + time.Second)
	ready, msg, err = g.Sync(ctx, e.fw.gangJob(job))
	if err != nil || !ready || msg != "" {
		t.Fatalf("Sync = %v, %q, %v; want ready", ready, msg, err)
	}
	var w schedulingv1beta1.Workload
	var pg schedulingv1beta1.PodGroup
	key := client.ObjectKey{Namespace: "ns", Name: "job"}
	if err := e.c.Get(ctx, key, &w); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Get(ctx, key, &pg); err != nil {
		t.Fatal(err)
	}
	if got := pg.Spec.SchedulingPolicy.Gang; got == nil || got.MinCount != 3 {
		t.Errorf("PodGroup policy %+v", pg.Spec.SchedulingPolicy)
	}
	if got := w.Spec.PodGroupTemplates; len(got) != 1 || got[0].SchedulingPolicy.Gang.MinCount != 3 {
		t.Errorf("Workload templates %+v", got)
	}
	if ev := e.rec.take(); len(ev) != 3 || ev[1] != "Normal SuccessfulCreatePodGroup Created Workload: job" ||
		ev[2] != "Normal SuccessfulCreatePodGroup Created PodGroup: job" {
		t.Errorf("events = %q", ev)
	}
	// Not finished (suspended): no JobTerminated.
	if err := g.Delete(ctx, e.fw.gangJob(job)); err != nil {
		t.Fatal(err)
	}
	if ev := e.rec.take(); len(ev) != 2 || ev[0] != "Normal SuccessfulDeletePodGroup Deleted PodGroup: job" ||
		ev[1] != "Normal SuccessfulDeletePodGroup Deleted Workload: job" {
		t.Errorf("events = %q", ev)
	}
}
