package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// harness runs the engine over a fake API server with a fake clock.
type harness struct {
	t     *testing.T
	c     client.Client
	r     *Reconciler[*kubeflowv1.PyTorchJob]
	clock *clocktesting.FakeClock
	rec   *eventLog
	key   client.ObjectKey
}

// eventLog keeps reason and message of every event.
type eventLog struct{ events []string }

func (l *eventLog) Event(_ runtime.Object, _, reason, msg string) {
	l.events = append(l.events, reason+": "+msg)
}

func newHarness(t *testing.T, fw Framework[*kubeflowv1.PyTorchJob], job *kubeflowv1.PyTorchJob, opts Options, funcs interceptor.Funcs) *harness {
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
	// The fake API leaves UIDs empty; the engine keys its memory of pods by UID.
	create, uids := funcs.Create, atomic.Int64{}
	funcs.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetUID() == "" {
			obj.SetUID(types.UID(fmt.Sprintf("uid-%d", uids.Add(1))))
		}
		if create != nil {
			return create(ctx, c, obj, opts...)
		}
		return c.Create(ctx, obj, opts...)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job).WithStatusSubresource(job).
		WithIndex(&corev1.Pod{}, ControllerUIDIndex, index).
		WithIndex(&corev1.Service{}, ControllerUIDIndex, index).
		WithInterceptorFuncs(funcs).Build()
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Clock = clock
	opts.StatusBatchWindow = -1
	rec := &eventLog{}
	return &harness{t: t, c: c, r: NewReconciler(fw, c, c, rec, opts), clock: clock, rec: rec, key: client.ObjectKeyFromObject(job)}
}

func (h *harness) reconcile() {
	h.t.Helper()
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key}); err != nil {
		h.t.Fatalf("Reconcile: %v", err)
	}
}

func (h *harness) job() *kubeflowv1.PyTorchJob {
	h.t.Helper()
	var j kubeflowv1.PyTorchJob
	if err := h.c.Get(context.Background(), h.key, &j); err != nil {
		h.t.Fatal(err)
	}
	return &j
}

func (h *harness) pods() []corev1.Pod {
	h.t.Helper()
	var pl corev1.PodList
	if err := h.c.List(context.Background(), &pl); err != nil {
		h.t.Fatal(err)
	}
	return pl.Items
}

// failPod makes a pod Failed with the exit code of its first container.
func (h *harness) failPod(name string, code int32) {
	h.t.Helper()
	var pod corev1.Pod
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.key.Namespace, Name: name}, &pod); err != nil {
		h.t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodFailed
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  pod.Spec.Containers[0].Name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}},
	}}
	if err := h.c.Status().Update(context.Background(), &pod); err != nil {
		h.t.Fatal(err)
	}
}

// conditionTypes lists type=status of each condition, in order.
func conditionTypes(st kubeflowv1.JobStatus) []string {
	var out []string
	for _, c := range st.Conditions {
		out = append(out, string(c.Type)+"="+string(c.Status))
	}
	return out
}

// fakeGang holds pods back until ready is set.
type fakeGang struct{ ready bool }

func (g *fakeGang) Sync(context.Context, GangJob) (bool, string, error) {
	return g.ready, "waiting for the gang", nil
}
func (g *fakeGang) DecoratePod(client.Object, kubeflowv1.ReplicaType, *corev1.Pod) string {
	return ""
}
func (g *fakeGang) Delete(context.Context, GangJob) error { return nil }

// activeDeadlineSeconds counts from startTime, which is set once pods may be
// created: a job its gang backend holds for longer than its deadline must
// neither fail nor show a startTime (v1 sets startTime after the gang lets
// pods be created).
func TestStartTimeWaitsForTheGang(t *testing.T) {
	gang := &fakeGang{}
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).ActiveDeadlineSeconds(60).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{Gang: func(GangJob) GangScheduler { return gang }}, interceptor.Funcs{})

	h.reconcile()
	h.clock.Step(2 * time.Hour)
	h.reconcile()
	if st := h.job().Status; st.StartTime != nil || hasCondition(&st, kubeflowv1.JobFailed) {
		t.Fatalf("held by its gang past the deadline: startTime %v, conditions %v; want no startTime and not Failed", st.StartTime, conditionTypes(st))
	}
	if n := len(h.pods()); n != 0 {
		t.Fatalf("pods = %d while the gang holds the job", n)
	}

	gang.ready = true
	h.reconcile()
	st := h.job().Status
	if st.StartTime == nil || !st.StartTime.Time.Equal(h.clock.Now()) {
		t.Fatalf("startTime = %v once admitted, want %v", st.StartTime, h.clock.Now())
	}
	if hasCondition(&st, kubeflowv1.JobFailed) || len(h.pods()) != 2 {
		t.Fatalf("admitted: conditions %v, %d pods; want running with 2 pods", conditionTypes(st), len(h.pods()))
	}

	h.clock.Step(61 * time.Second)
	h.reconcile()
	if st := h.job().Status; !hasCondition(&st, kubeflowv1.JobFailed) {
		t.Errorf("61s after admission: conditions %v, want Failed by the deadline", conditionTypes(st))
	}
}

// Without a gang, startTime is set by the first pass, and a deadline of 0
// fails the job at once, as before.
func TestStartTimeWithoutGang(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).ActiveDeadlineSeconds(0).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	st := h.job().Status
	if st.StartTime == nil || !hasCondition(&st, kubeflowv1.JobFailed) {
		t.Errorf("activeDeadlineSeconds 0: startTime %v, conditions %v; want both set and Failed at once", st.StartTime, conditionTypes(st))
	}
}

// tolerantFramework ignores failed Workers, as TF with enableDynamicWorker.
type tolerantFramework struct{ fakeFramework }

func (tolerantFramework) ToleratesFailure(_ *kubeflowv1.PyTorchJob, rt kubeflowv1.ReplicaType) bool {
	return rt == "Worker"
}

var _ FailureTolerance[*kubeflowv1.PyTorchJob] = tolerantFramework{}

func TestToleratedFailuresDoNotFailTheJob(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).RestartPolicy(kubeflowv1.RestartPolicyNever).Obj()
	h := newHarness(t, tolerantFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	h.failPod("j-worker-1", 1)
	h.reconcile()
	st := h.job().Status
	if hasCondition(&st, kubeflowv1.JobFailed) || hasCondition(&st, kubeflowv1.JobRestarting) {
		t.Fatalf("a tolerated Worker failed: conditions %v, want neither Failed nor Restarting", conditionTypes(st))
	}
	if got := st.ReplicaStatuses["Worker"].Failed; got != 1 {
		t.Errorf("Worker failed = %d, want 1 (still counted)", got)
	}
	if n := len(h.pods()); n != 3 {
		t.Errorf("pods = %d, want 3: the failed Worker is left as it is", n)
	}

	h.failPod("j-master-0", 1)
	h.reconcile()
	if st := h.job().Status; !hasCondition(&st, kubeflowv1.JobFailed) {
		t.Errorf("a Master failed: conditions %v, want Failed", conditionTypes(st))
	}
}

// With a retrying policy a tolerated type still restarts.
func TestToleratedFailuresStillRestart(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
	h := newHarness(t, tolerantFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	h.failPod("j-worker-0", 1)
	h.reconcile()
	if st := h.job().Status; !hasCondition(&st, kubeflowv1.JobRestarting) || st.RestartCount != 1 {
		t.Errorf("conditions %v, restartCount %d; want Restarting and 1", conditionTypes(st), st.RestartCount)
	}
}

// runningDoneFramework reads its replicas as running and done at once, as
// XGBoost does when its Master finished between two passes.
type runningDoneFramework struct{ fakeFramework }

func (runningDoneFramework) Evaluate(*kubeflowv1.PyTorchJob, ReplicaView) Verdict {
	return Verdict{Running: true, RunningMessage: "running", Succeeded: true, SucceededMessage: "done"}
}

func TestRunningRecordedBeforeSucceeded(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	h := newHarness(t, runningDoneFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	want := []string{"Created=True", "Running=False", "Succeeded=True"}
	if diff := cmp.Diff(want, conditionTypes(h.job().Status)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

// A resolved ChildConflict must not stay the last condition, which the
// State printer column shows: it is dropped.
func TestRecordConflictsDropsTheResolvedCondition(t *testing.T) {
	T, F := corev1.ConditionTrue, corev1.ConditionFalse
	conflict := func(s corev1.ConditionStatus) kubeflowv1.JobCondition {
		return cond(ConditionChildConflict, s, "ChildNameConflict")
	}
	created := cond(kubeflowv1.JobCreated, T, "PyTorchJobCreated")
	running := cond(kubeflowv1.JobRunning, T, "PyTorchJobRunning")
	cases := map[string]struct {
		in        []kubeflowv1.JobCondition
		conflicts []string
		want      []string
	}{
		"resolved while last":          {in: []kubeflowv1.JobCondition{created, conflict(T)}, want: []string{"Created=True"}},
		"resolved in the middle":       {in: []kubeflowv1.JobCondition{created, conflict(T), running}, want: []string{"Created=True", "Running=True"}},
		"left False by an old version": {in: []kubeflowv1.JobCondition{created, running, conflict(F)}, want: []string{"Created=True", "Running=True"}},
		"still conflicting":            {in: []kubeflowv1.JobCondition{created}, conflicts: []string{"pod j-master-0"}, want: []string{"Created=True", "ChildConflict=True"}},
		"no conflict ever":             {in: []kubeflowv1.JobCondition{created, running}, want: []string{"Created=True", "Running=True"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewReconciler(fakeFramework{}, nil, nil, nopRecorder{}, Options{})
			p := &plan{status: kubeflowv1.JobStatus{Conditions: tc.in}}
			r.recordConflicts(testjobs.MakePyTorchJob("j", "ns").Obj(), p, tc.conflicts, metav1.Now())
			if diff := cmp.Diff(tc.want, conditionTypes(p.status)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func createdCount(t *testing.T, ns string) float64 {
	t.Helper()
	var m dto.Metric
	if err := jobsCreated.WithLabelValues(ns, fakeMetricsLabel).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// v1 counts every job it sees created, whoever manages it: once per job
// (UID) and process, not on every pass.
func TestJobsCreatedCountsExternallyManagedJobsOnce(t *testing.T) {
	const ns = "managed-elsewhere"
	job := testjobs.MakePyTorchJob("j", ns).UID("uid-1").Master(1).Workers(1).ManagedBy(kubeflowv1.MultiKueueController).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	h.reconcile()
	if got := createdCount(t, ns); got != 1 {
		t.Fatalf("jobs_created_total = %v after two passes, want 1", got)
	}
	if st := h.job().Status; len(st.Conditions) != 0 {
		t.Fatalf("an externally managed job got conditions %v", conditionTypes(st))
	}

	// The same name again is another job.
	if err := h.c.Delete(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	again := testjobs.MakePyTorchJob("j", ns).UID("uid-2").Master(1).Workers(1).ManagedBy(kubeflowv1.MultiKueueController).Obj()
	if err := h.c.Create(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	h.reconcile()
	if got := createdCount(t, ns); got != 2 {
		t.Errorf("jobs_created_total = %v after a second job of the same name, want 2", got)
	}
}

// podReasonsFramework reports its TTL deletions with the pod reasons, as
// v1's PyTorch, Paddle and JAX controllers did.
type podReasonsFramework struct{ fakeFramework }

func (podReasonsFramework) JobDeleteReasons() (string, string) {
	return "SuccessfulDeletePod", "FailedDeletePod"
}

var _ JobDeleteEvents = podReasonsFramework{}

func TestTTLDeleteEventReasons(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "kubeflow.org", Resource: "pytorchjobs"}, "j", errors.New("no"))
	for _, tc := range []struct {
		name      string
		fw        Framework[*kubeflowv1.PyTorchJob]
		deleteErr error
		want      []string
	}{
		{"default deleted", fakeFramework{}, nil, []string{"SuccessfulDeleteJob: Deleted job: j"}},
		{"default failed", fakeFramework{}, forbidden, []string{"FailedDeleteJob: " + forbidden.Error()}},
		{"pod reasons deleted", podReasonsFramework{}, nil, []string{"SuccessfulDeletePod: Deleted job: j"}},
		{"pod reasons failed", podReasonsFramework{}, forbidden, []string{"FailedDeletePod: " + forbidden.Error()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := testjobs.MakePyTorchJob("j", "ttl-reasons").UID("job-uid").Master(1).Workers(1).TTLSecondsAfterFinished(0).Obj()
			done := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
			job.Status.CompletionTime = &done
			job.Status.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobSucceeded, Status: corev1.ConditionTrue}}
			h := newHarness(t, tc.fw, job, Options{}, interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					if tc.deleteErr != nil {
						return tc.deleteErr
					}
					return c.Delete(ctx, obj, opts...)
				},
			})
			_, _ = h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key})
			if diff := cmp.Diff(tc.want, h.rec.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// A job the webhooks did not see (installed later, or bypassed) that
// cannot run fails with v1's FailedValidation reason, on its condition
// and on its Warning event alike.
func TestUnrunnableJobFailsWithV1ValidationReason(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	job.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.Containers = nil
	h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	st := h.job().Status
	if c := getCondition(&st, kubeflowv1.JobFailed); c == nil || c.Reason != "PyTorchJobFailedValidation" {
		t.Fatalf("Failed condition %+v, want reason PyTorchJobFailedValidation", c)
	}
	if diff := cmp.Diff([]string{"PyTorchJobFailedValidation: replica spec Worker has no containers"}, h.rec.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A pod template's restartPolicy is replaced by the replica spec's (v1's
// Event), or by Never under a failure policy, and the Event says which.
func TestTemplateRestartPolicyEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  *kubeflowv1.PyTorchJob
		want string
	}{
		{"v1", testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj(),
			"SetPodTemplateRestartPolicy: Restart policy in pod template will be overwritten by restart policy in replica spec"},
		{"failure policy", testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).FailurePolicy(testjobs.MakeFailurePolicy(1).Obj()).Obj(),
			"SetPodTemplateRestartPolicy: Restart policy in pod template will be overwritten by Never: with runPolicy.failurePolicy the operator decides every restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.Spec.PyTorchReplicaSpecs["Master"].Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			h := newHarness(t, fakeFramework{}, tc.job, Options{}, interceptor.Funcs{})
			h.reconcile()
			if !slices.Contains(h.rec.events, tc.want) {
				t.Errorf("events %q lack %q", h.rec.events, tc.want)
			}
		})
	}
}
