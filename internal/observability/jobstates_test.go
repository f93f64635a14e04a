package observability

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func job(name string, conds ...kubeflowv1.JobConditionType) *kubeflowv1.PyTorchJob {
	j := &kubeflowv1.PyTorchJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: apitypes.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0)}}
	for i, c := range conds {
		j.Status.Conditions = append(j.Status.Conditions, kubeflowv1.JobCondition{
			Type: c, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(i+1) * time.Minute)),
		})
	}
	return j
}

func TestStateOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		job     *kubeflowv1.PyTorchJob
		pods    bool
		want    string
		since   time.Duration
		unfound bool
	}{
		{name: "no condition, no pod", job: job("a"), want: StateQueued},
		{name: "created, no pod", job: job("a", kubeflowv1.JobCreated), want: StateQueued, since: time.Minute},
		{name: "created with pods", job: job("a", kubeflowv1.JobCreated), pods: true, want: StateCreated, since: time.Minute},
		{name: "running", job: job("a", kubeflowv1.JobCreated, kubeflowv1.JobRunning), pods: true, want: StateRunning, since: 2 * time.Minute},
		{name: "restarting", job: job("a", kubeflowv1.JobCreated, kubeflowv1.JobRestarting), want: StateRestarting, since: 2 * time.Minute},
		{name: "suspended", job: job("a", kubeflowv1.JobCreated, kubeflowv1.JobSuspended), want: StateSuspended, since: 2 * time.Minute},
		{name: "succeeded", job: job("a", kubeflowv1.JobCreated, kubeflowv1.JobSucceeded), unfound: true},
		{name: "failed", job: job("a", kubeflowv1.JobCreated, kubeflowv1.JobFailed), unfound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, since, ok := StateOf(tc.job, tc.pods)
			if ok == tc.unfound || state != tc.want || (ok && !since.Equal(t0.Add(tc.since))) {
				t.Errorf("StateOf = %q, %v, %v; want %q, %v", state, since, ok, tc.want, t0.Add(tc.since))
			}
		})
	}
}

// TestCollect: one series per namespace, framework and state, the oldest
// age among them, and a pod counts for the job that controls it.
func TestCollect(t *testing.T) {
	withPod := job("with-pod", kubeflowv1.JobCreated)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "with-pod", UID: withPod.UID, Controller: ptr.To(true),
	}}}}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kubeflowv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		job("q1", kubeflowv1.JobCreated), job("q2"), withPod, pod,
		job("done", kubeflowv1.JobCreated, kubeflowv1.JobSucceeded),
	).Build()
	js := NewJobStates()
	js.now = func() time.Time { return t0.Add(time.Hour) }
	js.reader, js.scheme = c, scheme
	js.kinds = []Kind{{List: kubeflowv1.GroupVersion.WithKind("PyTorchJobList"), Framework: "pytorch"}}
	want := `
# HELP training_operator_jobs Unfinished jobs by state (Queued: no pod yet, Created, Running, Restarting, Suspended), read from the operator's cache
# TYPE training_operator_jobs gauge
training_operator_jobs{framework="pytorch",job_namespace="ns",state="Created"} 1
training_operator_jobs{framework="pytorch",job_namespace="ns",state="Queued"} 2
# HELP training_operator_jobs_oldest_in_state_seconds Seconds since the job longest in this state entered it
# TYPE training_operator_jobs_oldest_in_state_seconds gauge
training_operator_jobs_oldest_in_state_seconds{framework="pytorch",job_namespace="ns",state="Created"} 3540
training_operator_jobs_oldest_in_state_seconds{framework="pytorch",job_namespace="ns",state="Queued"} 3600
`
	if err := testutil.CollectAndCompare(js, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	// Without a reader (a standby), nothing is reported.
	if n := testutil.CollectAndCount(NewJobStates()); n != 0 {
		t.Errorf("a collector without a reader reported %d series", n)
	}
}
