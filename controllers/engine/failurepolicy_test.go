package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

var fpT0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// failedWorker is worker i of attempt 0, Failed with code at fpT0+sec.
func failedWorker(i int, code int32, sec int) *corev1.Pod {
	p := testjobs.MakePod("j-worker-"+string(rune('0'+i)), "ns").UID("w"+string(rune('0'+i))).
		Label(kubeflowv1.ReplicaTypeLabel, "worker").Label(kubeflowv1.ReplicaIndexLabel, string(rune('0'+i))).
		Phase(corev1.PodFailed).Terminated("pytorch", code, "Error").Obj()
	p.Status.ContainerStatuses[0].State.Terminated.FinishedAt = metav1.NewTime(fpT0.Add(time.Duration(sec) * time.Second))
	return p
}

func jf(p *corev1.Pod) jobFailure {
	f := jobFailure{podFailure: describeFailure(p, "Worker", "pytorch"), pod: p, at: failedAt(p)}
	f.mainExitName, f.mainExit = mainExit(p, "pytorch", nil)
	return f
}

func TestJudge(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	evicted := testjobs.MakePod("j-worker-1", "ns").UID("w1").Phase(corev1.PodFailed).
		Condition(corev1.DisruptionTarget, corev1.ConditionTrue, "EvictionByEvictionAPI", "", fpT0.Add(time.Second)).Obj()
	sidecar := testjobs.MakePod("j-worker-2", "ns").UID("w2").Phase(corev1.PodRunning).Terminated("pytorch", 9, "Error").Running("sidecar").Obj()
	cases := []struct {
		name       string
		policy     *kubeflowv1.FailurePolicy
		failures   []jobFailure
		wantAction kubeflowv1.FailurePolicyAction
		wantRule   string
		wantPod    string
		wantPerPod []string
	}{
		{name: "no failure", policy: fp(1).Obj()},
		{name: "no rule matches: RestartJob", policy: fp(1).Obj(), failures: []jobFailure{jf(failedWorker(0, 3, 0))},
			wantAction: kubeflowv1.RestartJobAction, wantPod: "j-worker-0"},
		{
			name: "the earliest failure is judged, not a later FailJob match",
			policy: fp(1).Rule("user", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 2).
				Rule("any", kubeflowv1.RestartJobAction).Obj(),
			failures:   []jobFailure{jf(failedWorker(1, 2, 5)), jf(failedWorker(0, 137, 1))},
			wantAction: kubeflowv1.RestartJobAction, wantRule: "any", wantPod: "j-worker-0",
		},
		{
			name: "rules in order, first match wins",
			policy: fp(1).Rule("first", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpNotIn, 137).
				Rule("second", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj(),
			failures:   []jobFailure{jf(failedWorker(0, 3, 0))},
			wantAction: kubeflowv1.FailJobAction, wantRule: "first", wantPod: "j-worker-0",
		},
		{
			name: "NotIn does not match a listed code",
			policy: fp(1).Rule("first", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpNotIn, 3).
				Rule("second", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj(),
			failures:   []jobFailure{jf(failedWorker(0, 3, 0))},
			wantAction: kubeflowv1.RestartJobAndIgnoreMaxRestartsAction, wantRule: "second", wantPod: "j-worker-0",
		},
		{
			name:       "a pod condition",
			policy:     fp(1).Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).OnPodCondition(corev1.DisruptionTarget).Obj(),
			failures:   []jobFailure{jf(evicted)},
			wantAction: kubeflowv1.RestartJobAndIgnoreMaxRestartsAction, wantRule: "infra", wantPod: "j-worker-1",
		},
		{
			name:       "the default container failed under a running sidecar",
			policy:     fp(1).Rule("user", kubeflowv1.FailJobAction).OnExitCodes("pytorch", kubeflowv1.FailurePolicyOnExitCodesOpIn, 9).Obj(),
			failures:   []jobFailure{jf(sidecar)},
			wantAction: kubeflowv1.FailJobAction, wantRule: "user", wantPod: "j-worker-2",
		},
		{
			name: "target replica types narrow a rule",
			policy: fp(1).Rule("masters", kubeflowv1.FailJobAction, "Master").
				Rule("workers", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction, "Worker").Obj(),
			failures:   []jobFailure{jf(failedWorker(0, 1, 0))},
			wantAction: kubeflowv1.RestartJobAndIgnoreMaxRestartsAction, wantRule: "workers", wantPod: "j-worker-0",
		},
		{
			name: "UseReplicaRestartPolicy leaves a failure to the per-pod rule and judges the next",
			policy: fp(1).Rule("oom", kubeflowv1.UseReplicaRestartPolicyAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 137).
				Rule("rest", kubeflowv1.FailJobAction).Obj(),
			failures:   []jobFailure{jf(failedWorker(0, 137, 0)), jf(failedWorker(1, 1, 3))},
			wantAction: kubeflowv1.FailJobAction, wantRule: "rest", wantPod: "j-worker-1", wantPerPod: []string{"j-worker-0"},
		},
		{
			name:       "only per-pod failures: no verdict",
			policy:     fp(1).Rule("all", kubeflowv1.UseReplicaRestartPolicyAction).Obj(),
			failures:   []jobFailure{jf(failedWorker(0, 1, 0))},
			wantPerPod: []string{"j-worker-0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, perPod := judge(tc.policy, tc.failures)
			var gotAction kubeflowv1.FailurePolicyAction
			var gotRule, gotPod string
			if v != nil {
				gotAction, gotRule, gotPod = v.action, v.rule, v.failure.Pod
			}
			var gotPerPod []string
			for _, f := range perPod {
				gotPerPod = append(gotPerPod, f.Pod)
			}
			got := []any{gotAction, gotRule, gotPod, gotPerPod}
			want := []any{tc.wantAction, tc.wantRule, tc.wantPod, tc.wantPerPod}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

// The pass applying the policy: budget, counted vs ignored, the message.
func TestApplyFailurePolicy(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	run := func(policy *kubeflowv1.FailurePolicy, st kubeflowv1.JobStatus, pods ...*corev1.Pod) (policyOutcome, *plan) {
		job := testjobs.MakePyTorchJob("j", "ns").UID("job").Master(1).Workers(2).FailurePolicy(policy).Obj()
		job.Status = st
		r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
		p := &plan{status: *st.DeepCopy()}
		ch := bucketChildren(job.Spec.PyTorchReplicaSpecs, pods, nil, nil)
		return r.applyFailurePolicy(job, ch, job.Spec.PyTorchReplicaSpecs, p, metav1.NewTime(fpT0)), p
	}

	out, p := run(fp(2).Obj(), kubeflowv1.JobStatus{}, failedWorker(0, 3, 0))
	if out != policyRestarted || p.status.Attempt() != 1 || p.status.RestartsCountTowardsMax != 1 || !p.restarted {
		t.Fatalf("RestartJob: outcome %v, status %+v", out, p.status)
	}
	c := getCondition(&p.status, kubeflowv1.JobRestarting)
	want := "PyTorchJob j is restarting the whole job, attempt 1: no rule matched (RestartJob) pod j-worker-0: container pytorch exited with code 3 (Error); restarts counted 1/2."
	if c == nil || c.Message != want || c.Reason != kubeflowv1.FailurePolicyNoRuleMatchedReason {
		t.Errorf("Restarting = %+v, want message %q", c, want)
	}

	out, p = run(fp(0).Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj(), kubeflowv1.JobStatus{Restarts: ptr.To(int32(4))}, failedWorker(0, 3, 0))
	if out != policyRestarted || p.status.Attempt() != 5 || p.status.RestartsCountTowardsMax != 0 {
		t.Errorf("ignored restart: outcome %v, status %+v", out, p.status)
	}

	out, p = run(fp(2).Obj(), kubeflowv1.JobStatus{Restarts: ptr.To(int32(3)), RestartsCountTowardsMax: 2}, failedWorker(0, 3, 0))
	if out != policyFailed || p.status.Attempt() != 3 || !hasCondition(&p.status, kubeflowv1.JobFailed) || p.policyAction != "MaxRestartsReached" {
		t.Errorf("budget spent: outcome %v, status %+v", out, p.status)
	}

	// A failure handed to the per-pod rule before the one that decides comes
	// first (found by the model test: it was dropped). Under OnFailure it is
	// counted, then the later failure restarts the job.
	oom := fp(2).Rule("oom", kubeflowv1.UseReplicaRestartPolicyAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 137).Obj()
	runWith := func(rp kubeflowv1.RestartPolicy, policy *kubeflowv1.FailurePolicy, pods ...*corev1.Pod) (policyOutcome, *plan) {
		job := testjobs.MakePyTorchJob("j", "ns").UID("job").Master(1).Workers(2).RestartPolicy(rp).FailurePolicy(policy).Obj()
		r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
		p := &plan{}
		ch := bucketChildren(job.Spec.PyTorchReplicaSpecs, pods, nil, nil)
		return r.applyFailurePolicy(job, ch, job.Spec.PyTorchReplicaSpecs, p, metav1.NewTime(fpT0)), p
	}
	out, p = runWith(kubeflowv1.RestartPolicyOnFailure, oom, failedWorker(0, 137, 0), failedWorker(1, 1, 1))
	if out != policyRestarted || p.status.RestartCount != 1 || p.status.Attempt() != 1 || len(p.status.CountedPods) != 1 {
		t.Errorf("per-pod failure first (OnFailure): outcome %v, status %+v", out, p.status)
	}
	// Under Never the per-pod rule fails the job on it, as v1 does.
	out, p = runWith(kubeflowv1.RestartPolicyNever, oom, failedWorker(0, 137, 0), failedWorker(1, 1, 1))
	if c := getCondition(&p.status, kubeflowv1.JobFailed); out != policyFailed || c == nil || !strings.Contains(c.Message, "j-worker-0") || p.status.Attempt() != 0 {
		t.Errorf("per-pod failure first (Never): outcome %v, status %+v", out, p.status)
	}

	// A failure already counted per pod (countedPods) is not judged again.
	counted := failedWorker(0, 3, 0)
	out, _ = run(fp(2).Obj(), kubeflowv1.JobStatus{CountedPods: []string{string(counted.UID)}}, counted)
	if out != policyNone {
		t.Errorf("counted failure judged again: %v", out)
	}
}

// Each decision of the failure policy has a stable reason of its own on its
// condition and event; a failure the policy hands to the replica's
// restartPolicy keeps v1's.
func TestFailurePolicyReasons(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	oom := func() *testjobs.FailurePolicyWrapper {
		return fp(1).Rule("oom", kubeflowv1.UseReplicaRestartPolicyAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 137)
	}
	cases := []struct {
		name   string
		policy *kubeflowv1.FailurePolicy
		status kubeflowv1.JobStatus
		pods   []*corev1.Pod
		want   kubeflowv1.JobConditionType
		reason string
	}{
		{name: "no rule matched", policy: fp(1).Obj(), pods: []*corev1.Pod{failedWorker(0, 3, 0)},
			want: kubeflowv1.JobRestarting, reason: kubeflowv1.FailurePolicyNoRuleMatchedReason},
		{name: "RestartJob rule", policy: fp(1).Rule("any", kubeflowv1.RestartJobAction).Obj(), pods: []*corev1.Pod{failedWorker(0, 3, 0)},
			want: kubeflowv1.JobRestarting, reason: kubeflowv1.FailurePolicyRestartJobReason},
		{name: "RestartJobAndIgnoreMaxRestarts rule", policy: fp(0).Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj(),
			pods: []*corev1.Pod{failedWorker(0, 3, 0)}, want: kubeflowv1.JobRestarting, reason: kubeflowv1.FailurePolicyRestartJobAndIgnoreMaxRestartsReason},
		{name: "FailJob rule", policy: fp(1).Rule("user", kubeflowv1.FailJobAction).Obj(), pods: []*corev1.Pod{failedWorker(0, 3, 0)},
			want: kubeflowv1.JobFailed, reason: kubeflowv1.FailurePolicyFailJobReason},
		{name: "maxRestarts spent by a rule", policy: fp(1).Rule("any", kubeflowv1.RestartJobAction).Obj(),
			status: kubeflowv1.JobStatus{Restarts: ptr.To(int32(1)), RestartsCountTowardsMax: 1}, pods: []*corev1.Pod{attempt(failedWorker(0, 3, 0), 1)},
			want: kubeflowv1.JobFailed, reason: kubeflowv1.ReachedMaxRestartsReason},
		{name: "maxRestarts spent, no rule", policy: fp(0).Obj(), pods: []*corev1.Pod{failedWorker(0, 3, 0)},
			want: kubeflowv1.JobFailed, reason: kubeflowv1.ReachedMaxRestartsReason},
		{name: "maxTotalRestarts spent by an ignoring rule", policy: fp(0).MaxTotal(2).Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj(),
			status: kubeflowv1.JobStatus{Restarts: ptr.To(int32(2))}, pods: []*corev1.Pod{attempt(failedWorker(0, 3, 0), 2)},
			want: kubeflowv1.JobFailed, reason: kubeflowv1.ReachedMaxTotalRestartsReason},
		{name: "maxTotalRestarts not spent yet", policy: fp(0).MaxTotal(2).Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj(),
			status: kubeflowv1.JobStatus{Restarts: ptr.To(int32(1))}, pods: []*corev1.Pod{attempt(failedWorker(0, 3, 0), 1)},
			want: kubeflowv1.JobRestarting, reason: kubeflowv1.FailurePolicyRestartJobAndIgnoreMaxRestartsReason},
		{name: "maxRestarts spent first", policy: fp(1).MaxTotal(5).Rule("any", kubeflowv1.RestartJobAction).Obj(),
			status: kubeflowv1.JobStatus{Restarts: ptr.To(int32(1)), RestartsCountTowardsMax: 1}, pods: []*corev1.Pod{attempt(failedWorker(0, 3, 0), 1)},
			want: kubeflowv1.JobFailed, reason: kubeflowv1.ReachedMaxRestartsReason},
		{name: "the replica's restartPolicy fails the job: v1's reason", policy: oom().Obj(), pods: []*corev1.Pod{failedWorker(0, 137, 0), failedWorker(1, 1, 1)},
			want: kubeflowv1.JobFailed, reason: "PyTorchJobFailed"},
	}
	for _, tc := range cases {
		job := testjobs.MakePyTorchJob("j", "ns").UID("job").Master(1).Workers(2).RestartPolicy(kubeflowv1.RestartPolicyNever).FailurePolicy(tc.policy).Obj()
		job.Status = tc.status
		r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
		p := &plan{status: *tc.status.DeepCopy()}
		r.applyFailurePolicy(job, bucketChildren(job.Spec.PyTorchReplicaSpecs, tc.pods, nil, nil), job.Spec.PyTorchReplicaSpecs, p, metav1.NewTime(fpT0))
		var got []string
		if c := getCondition(&p.status, tc.want); c != nil && c.Status == corev1.ConditionTrue {
			got = append(got, "condition "+c.Reason)
		}
		for _, e := range p.events {
			got = append(got, "event "+e.reason)
		}
		want := []string{"condition " + tc.reason, "event " + tc.reason}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: reasons (-want +got):\n%s", tc.name, diff)
		}
	}
}

// attempt labels pod as made for restart attempt n.
func attempt(pod *corev1.Pod, n int) *corev1.Pod {
	pod.Labels[kubeflowv1.RestartAttemptLabel] = strconv.Itoa(n)
	return pod
}

// Only a whole-job restart holds Running back until its new attempt runs;
// it is told by the condition's reason, not its message.
func TestRestartDoneReadsTheReason(t *testing.T) {
	cases := []struct {
		reason, msg string
		wantDone    bool
	}{
		{reason: kubeflowv1.FailurePolicyNoRuleMatchedReason, msg: "", wantDone: false},
		{reason: kubeflowv1.FailurePolicyRestartJobReason, wantDone: false},
		{reason: kubeflowv1.FailurePolicyRestartJobAndIgnoreMaxRestartsReason, wantDone: false},
		{reason: "PyTorchJobRestarting", msg: "PyTorchJob j is restarting the whole job, attempt 1", wantDone: true},
	}
	for _, tc := range cases {
		job := testjobs.MakePyTorchJob("j", "ns").UID("job").Master(1).Workers(1).FailurePolicy(testjobs.MakeFailurePolicy(1).Obj()).Obj()
		r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
		p := &plan{}
		setCondition(&p.status, newCondition(kubeflowv1.JobRestarting, corev1.ConditionTrue, tc.reason, tc.msg, metav1.NewTime(fpT0)))
		// No pod of the new attempt runs yet.
		if got := r.restartDone(p, job, job.Spec.PyTorchReplicaSpecs, children{}, metav1.NewTime(fpT0)); got != tc.wantDone {
			t.Errorf("reason %s: restartDone = %v, want %v", tc.reason, got, tc.wantDone)
		}
	}
}

// A rule without containerName reads the job's main container as its kind
// resolves it (MPIJob: spec.mainContainer, else the first container), not
// a container that happens to carry the kind's default name.
func TestFailurePolicyMainContainer(t *testing.T) {
	userError := testjobs.MakeFailurePolicy(3).Rule("user", kubeflowv1.FailJobAction).
		OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 1).Obj()
	// Cached pods have no spec: the main container comes from the template.
	launcher := func() *testjobs.PodWrapper {
		return testjobs.MakePod("m-launcher", "ns").UID("l").
			Label(kubeflowv1.ReplicaTypeLabel, "launcher").Label(kubeflowv1.ReplicaIndexLabel, "0")
	}
	named := testjobs.MakeMPIJob("m", "ns").UID("job").Launcher().Workers(1).
		ContainerName(kubeflowv1.MPIJobReplicaTypeLauncher, "launcher").ContainerName(kubeflowv1.MPIJobReplicaTypeWorker, "worker")
	type result struct {
		Outcome   policyOutcome
		Action    string
		Condition string
	}
	failed := func(msg string) result {
		return result{policyFailed, "FailJob", "MPIJob m has failed because the failure policy's " + msg + "."}
	}
	cases := []struct {
		name string
		job  *kubeflowv1.MPIJob
		pod  *corev1.Pod
		want result
	}{
		{
			name: "containers launcher and worker: the launcher exits 1",
			job:  named.Obj(),
			pod:  launcher().Phase(corev1.PodFailed).Terminated("launcher", 1, "Error").Obj(),
			want: failed(`rule "user" (FailJob) matched pod m-launcher: container launcher exited with code 1 (Error)`),
		},
		{
			name: "spec.mainContainer after a sidecar exits 1 while the sidecar runs",
			job: testjobs.MakeMPIJob("m", "ns").UID("job").Launcher().Workers(1).MainContainer("trainer").
				ContainerName(kubeflowv1.MPIJobReplicaTypeLauncher, "sidecar").
				Container(kubeflowv1.MPIJobReplicaTypeLauncher, corev1.Container{Name: "trainer", Image: testjobs.MPIImage}).Obj(),
			pod: launcher().Phase(corev1.PodRunning).
				Running("sidecar").Terminated("trainer", 1, "Error").Obj(),
			want: failed(`rule "user" (FailJob) matched pod m-launcher: container trainer exited with code 1 (Error)`),
		},
		{
			name: "a second container's code is not the main container's",
			job:  named.Obj(),
			pod: launcher().Phase(corev1.PodFailed).
				Terminated("launcher", 3, "Error").Terminated("sidecar", 1, "Error").Obj(),
			want: result{policyRestarted, "RestartJob",
				"MPIJob m is restarting the whole job, attempt 1: no rule matched (RestartJob) pod m-launcher: container launcher exited with code 3 (Error); restarts counted 1/3."},
		},
		{
			name: "the launcher's kubectl delivery init container exits 1",
			job:  named.Obj(),
			pod: launcher().Phase(corev1.PodFailed).InitTerminated("kubectl-delivery", 1, "Error", "").
				Waiting("launcher", "PodInitializing", "").Obj(),
			want: failed(`rule "user" (FailJob) matched pod m-launcher: container kubectl-delivery exited with code 1 (Error)`),
		},
		{
			name: "a container named mpi, as v1's examples",
			job:  testjobs.MakeMPIJob("m", "ns").UID("job").Launcher().Workers(1).Obj(),
			pod:  launcher().Phase(corev1.PodFailed).Terminated("mpi", 1, "Error").Obj(),
			want: failed(`rule "user" (FailJob) matched pod m-launcher: container mpi exited with code 1 (Error)`),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testjobs.WithFailurePolicy(tc.job, userError)
			job.ApplyDefaults()
			r := &Reconciler[*kubeflowv1.MPIJob]{fw: resolve(fakeMPIFramework{}), memory: NewJobMemory(nil)}
			p := &plan{}
			ch := bucketChildren(job.Spec.MPIReplicaSpecs, []*corev1.Pod{tc.pod}, nil, nil)
			got := result{Outcome: r.applyFailurePolicy(job, ch, job.Spec.MPIReplicaSpecs, p, metav1.NewTime(fpT0)), Action: p.policyAction}
			for _, c := range p.status.Conditions {
				if c.Status == corev1.ConditionTrue {
					got.Condition = c.Message
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Init containers are read too: a rule without containerName reads the
// init container that failed the pod before its main container ran (never
// a native sidecar, which restarts), and containerName may name one.
func TestFailurePolicyInitContainers(t *testing.T) {
	fp := testjobs.MakeFailurePolicy
	in := kubeflowv1.FailurePolicyOnExitCodesOpIn
	job := testjobs.MakePyTorchJob("j", "ns").UID("job").Master(1).Workers(1).
		InitContainer(kubeflowv1.PyTorchJobReplicaTypeWorker, corev1.Container{Name: "fetch", Image: "fetch"}).
		InitContainer(kubeflowv1.PyTorchJobReplicaTypeWorker, corev1.Container{Name: "proxy", Image: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)})
	worker := func() *testjobs.PodWrapper {
		return testjobs.MakePod("j-worker-0", "ns").UID("w0").Phase(corev1.PodFailed).
			Label(kubeflowv1.ReplicaTypeLabel, "worker").Label(kubeflowv1.ReplicaIndexLabel, "0")
	}
	fetchFailed := worker().InitTerminated("fetch", 2, "Error", "").Waiting("pytorch", "PodInitializing", "").Obj()
	type result struct {
		Outcome   policyOutcome
		Condition string
	}
	cases := []struct {
		name   string
		policy *kubeflowv1.FailurePolicy
		pod    *corev1.Pod
		want   result
	}{
		{
			name:   "a data-fetch init container exits 2: a rule without containerName",
			policy: fp(3).Rule("data", kubeflowv1.FailJobAction).OnExitCodes("", in, 2).Obj(),
			pod:    fetchFailed,
			want: result{policyFailed, `PyTorchJob j has failed because the failure policy's rule "data" (FailJob) matched pod j-worker-0: ` +
				`container fetch exited with code 2 (Error).`},
		},
		{
			name:   "a rule naming the init container",
			policy: fp(3).Rule("data", kubeflowv1.FailJobAction).OnExitCodes("fetch", in, 2).Obj(),
			pod:    fetchFailed,
			want: result{policyFailed, `PyTorchJob j has failed because the failure policy's rule "data" (FailJob) matched pod j-worker-0: ` +
				`container fetch exited with code 2 (Error).`},
		},
		{
			name:   "a rule naming the main container does not read the init container",
			policy: fp(3).Rule("user", kubeflowv1.FailJobAction).OnExitCodes("pytorch", in, 2).Obj(),
			pod:    fetchFailed,
			want: result{policyRestarted, "PyTorchJob j is restarting the whole job, attempt 1: no rule matched (RestartJob) pod j-worker-0: " +
				"container fetch exited with code 2 (Error); restarts counted 1/3."},
		},
		{
			name:   "the main container's code, not an init container's",
			policy: fp(3).Rule("data", kubeflowv1.FailJobAction).OnExitCodes("", in, 2).Obj(),
			pod:    worker().InitTerminated("proxy", 2, "Error", "").Terminated("pytorch", 3, "Error").Obj(),
			want: result{policyRestarted, "PyTorchJob j is restarting the whole job, attempt 1: no rule matched (RestartJob) pod j-worker-0: " +
				"container pytorch exited with code 3 (Error); restarts counted 1/3."},
		},
		{
			name:   "a native sidecar's exit is not read by a rule without containerName",
			policy: fp(3).Rule("data", kubeflowv1.FailJobAction).OnExitCodes("", in, 2).Obj(),
			pod:    worker().InitTerminated("proxy", 2, "Error", "").Waiting("pytorch", "PodInitializing", "").Obj(),
			want:   result{policyRestarted, "PyTorchJob j is restarting the whole job, attempt 1: no rule matched (RestartJob) pod j-worker-0; restarts counted 1/3."},
		},
		{
			name:   "a rule naming the native sidecar reads it",
			policy: fp(3).Rule("proxy", kubeflowv1.FailJobAction).OnExitCodes("proxy", in, 2).Obj(),
			pod:    worker().InitTerminated("proxy", 2, "Error", "").Waiting("pytorch", "PodInitializing", "").Obj(),
			want: result{policyFailed, `PyTorchJob j has failed because the failure policy's rule "proxy" (FailJob) matched pod j-worker-0: ` +
				`container proxy exited with code 2.`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := job.FailurePolicy(tc.policy).Obj()
			r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{}), memory: NewJobMemory(nil)}
			p := &plan{}
			ch := bucketChildren(job.Spec.PyTorchReplicaSpecs, []*corev1.Pod{tc.pod}, nil, nil)
			got := result{Outcome: r.applyFailurePolicy(job, ch, job.Spec.PyTorchReplicaSpecs, p, metav1.NewTime(fpT0))}
			for _, c := range p.status.Conditions {
				if c.Status == corev1.ConditionTrue {
					got.Condition = c.Message
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOfAttempt(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").Master(1).Workers(2).Obj()
	pod := func(name, rt, idx, attempt string) *corev1.Pod {
		return testjobs.MakePod(name, "ns").UID(name).Label(kubeflowv1.ReplicaTypeLabel, rt).Label(kubeflowv1.ReplicaIndexLabel, idx).
			Label(kubeflowv1.RestartAttemptLabel, attempt).Obj()
	}
	m, w0, w1 := pod("j-master-0", "master", "0", "2"), pod("j-worker-0", "worker", "0", "1"), pod("j-worker-1", "worker", "1", "2")
	ch := bucketChildren(job.Spec.PyTorchReplicaSpecs, []*corev1.Pod{m, w0, w1}, nil, nil)
	cur, old := ch.ofAttempt(2)
	if diff := cmp.Diff([]string{"j-worker-0"}, podNamesOf(old)); diff != "" {
		t.Errorf("old (-want +got):\n%s", diff)
	}
	if cur.pods["Worker"][0] != nil || cur.pods["Worker"][1] != w1 || cur.pods["Master"][0] != m || len(cur.allPods) != 2 {
		t.Errorf("current attempt: %+v", cur.pods)
	}
	if ch.pods["Worker"][0] != w0 {
		t.Error("ofAttempt changed the children it split")
	}
}

func TestReleasable(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, attempt string, finalizer bool) *corev1.Pod {
		p := testjobs.MakePod(name, "ns").UID(name).Label(kubeflowv1.ReplicaTypeLabel, "worker").Label(kubeflowv1.ReplicaIndexLabel, "0").
			Label(kubeflowv1.RestartAttemptLabel, attempt).Phase(phase).Obj()
		if finalizer {
			p.Finalizers = []string{kubeflowv1.PodTrackingFinalizer}
		}
		return p
	}
	running, succeeded := pod("running", corev1.PodRunning, "1", true), pod("succeeded", corev1.PodSucceeded, "1", true)
	counted, failed := pod("counted", corev1.PodFailed, "1", true), pod("failed", corev1.PodFailed, "1", true)
	older, legacy := pod("older", corev1.PodRunning, "0", true), pod("legacy", corev1.PodRunning, "1", false)
	// Replaced pods whose deletion the kubelet confirmed (grace period 0).
	confirmed := func(p *corev1.Pod) *corev1.Pod {
		now := metav1.Now()
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, new(int64)
		return p
	}
	countedGone, olderGone := confirmed(pod("counted-gone", corev1.PodFailed, "1", true)), confirmed(pod("older-gone", corev1.PodRunning, "0", true))
	all := []*corev1.Pod{running, succeeded, counted, failed, older, legacy, countedGone, olderGone}
	ch := children{allPods: all}
	r := &Reconciler[*kubeflowv1.PyTorchJob]{fw: resolve(fakeFramework{})}
	job := testjobs.MakePyTorchJob("j", "ns").Workers(1).FailurePolicy(testjobs.MakeFailurePolicy(1).Obj()).Obj()
	st := kubeflowv1.JobStatus{Restarts: ptr.To(int32(1)), CountedPods: []string{"counted", "counted-gone"}}
	rel := r.releasable(job, &st, ch)
	release, track, lastOld := rel.release, rel.track, rel.releasedOld
	// A succeeded pod of the current attempt is held while the job runs.
	if diff := cmp.Diff([]string{"counted-gone", "older-gone"}, podNamesOf(release)); diff != "" {
		t.Errorf("release while running (-want +got):\n%s", diff)
	}
	if lastOld {
		t.Error("lastOld with an old pod (older) still held")
	}
	ch2 := children{allPods: []*corev1.Pod{running, olderGone}}
	if !r.releasable(job, &st, ch2).releasedOld {
		t.Error("the last old pod released: lastOld = false")
	}
	if diff := cmp.Diff([]string{"legacy"}, podNamesOf(track)); diff != "" {
		t.Errorf("track (-want +got):\n%s", diff)
	}
	st.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobFailed, Status: corev1.ConditionTrue}}
	rel = r.releasable(job, &st, ch)
	release, track = rel.release, rel.track
	if diff := cmp.Diff([]string{"running", "succeeded", "counted", "failed", "older", "counted-gone", "older-gone"}, podNamesOf(release)); diff != "" || track != nil {
		t.Errorf("release when finished (-want +got):\n%s (track %v)", diff, podNamesOf(track))
	}
	// A job that is not tracked (no backoffLimit, no failurePolicy) keeps none.
	plain := testjobs.MakePyTorchJob("j", "ns").Workers(1).Obj()
	release = r.releasable(plain, &kubeflowv1.JobStatus{}, ch).release
	if len(release) != 7 {
		t.Errorf("untracked job keeps finalizers: released %v", podNamesOf(release))
	}
	// With pod tracking off, a running tracked job's pods lose it too.
	r.fw.noTracking = true
	st.Conditions = nil
	rel = r.releasable(job, &st, ch)
	release, track = rel.release, rel.track
	if len(release) != 7 || track != nil {
		t.Errorf("pod tracking off: released %v, tracked %v", podNamesOf(release), podNamesOf(track))
	}
}

func TestBuildPodTracking(t *testing.T) {
	spec := func(job *kubeflowv1.PyTorchJob) *kubeflowv1.ReplicaSpec {
		return job.Spec.PyTorchReplicaSpecs["Worker"]
	}
	plain := testjobs.MakePyTorchJob("j", "ns").Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
	pod, _, err := BuildPod(fakeFramework{}, plain, "Worker", 0, spec(plain))
	if err != nil || len(pod.Finalizers) != 0 || pod.Labels[kubeflowv1.RestartAttemptLabel] != "" || pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("v1 job's pod changed: %v %+v", err, pod.ObjectMeta)
	}
	backoff := testjobs.MakePyTorchJob("j", "ns").Workers(1).BackoffLimit(3).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
	pod, _, _ = BuildPod(fakeFramework{}, backoff, "Worker", 0, spec(backoff))
	if diff := cmp.Diff([]string{kubeflowv1.PodTrackingFinalizer}, pod.Finalizers); diff != "" || pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("backoffLimit job: finalizers (-want +got):\n%s", diff)
	}
	withFP := testjobs.MakePyTorchJob("j", "ns").Workers(1).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).
		FailurePolicy(testjobs.MakeFailurePolicy(1).Obj()).Obj()
	withFP.Status.Restarts = ptr.To(int32(2))
	pod, _, _ = BuildPod(fakeFramework{}, withFP, "Worker", 0, spec(withFP))
	if pod.Labels[kubeflowv1.RestartAttemptLabel] != "2" || pod.Annotations[kubeflowv1.RestartAttemptLabel] != "2" ||
		pod.Spec.RestartPolicy != corev1.RestartPolicyNever || len(pod.Finalizers) != 1 {
		t.Errorf("failure-policy pod: %+v restartPolicy %s", pod.ObjectMeta, pod.Spec.RestartPolicy)
	}
	// Pod tracking off: the same jobs' pods carry no finalizer.
	untracked := resolve[*kubeflowv1.PyTorchJob](fakeFramework{})
	untracked.noTracking = true
	for _, job := range []*kubeflowv1.PyTorchJob{backoff, withFP} {
		pod, _, _ = untracked.buildPod(job, "Worker", 0, spec(job))
		if len(pod.Finalizers) != 0 {
			t.Errorf("pod tracking off: finalizers %v", pod.Finalizers)
		}
	}
}

// masterDoneFramework succeeds once the Master succeeded, as PyTorch does.
type masterDoneFramework struct{ fakeFramework }

func (masterDoneFramework) Evaluate(_ *kubeflowv1.PyTorchJob, v ReplicaView) Verdict {
	if p := v.Pods["Master"][0]; p != nil && p.Status.Phase == corev1.PodSucceeded {
		return Verdict{Succeeded: true, SucceededMessage: "done"}
	}
	return Verdict{Running: true, RunningMessage: "running"}
}

// A pass that finishes a job creates nothing: chaos saw a new leader mark a
// job Succeeded and, in the same second, recreate the worker the harness
// had deleted.
func TestPassThatFinishesCreatesNothing(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).Obj()
	h := newHarness(t, masterDoneFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	h.reconcile() // the pass that sees the created pods
	var master corev1.Pod
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "j-master-0"}, &master); err != nil {
		t.Fatal(err)
	}
	master.Status.Phase = corev1.PodSucceeded
	if err := h.c.Status().Update(context.Background(), &master); err != nil {
		t.Fatal(err)
	}
	worker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-worker-1"}}
	if err := h.c.Delete(context.Background(), worker); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	if st := h.job().Status; !hasCondition(&st, kubeflowv1.JobSucceeded) {
		t.Fatalf("conditions %v, want Succeeded", conditionTypes(st))
	}
	if n := len(h.pods()); n != 2 {
		t.Errorf("pods = %d after the finishing pass, want 2: the deleted worker must not be recreated", n)
	}
}

// A whole-job restart over the fake API: the status write comes first,
// then the deletions; with BlockingRecreate nothing of attempt 1 is made
// while a pod of attempt 0 exists, with Recreate each pod comes back as
// soon as its predecessor is gone.
func TestWholeJobRestartPasses(t *testing.T) {
	for _, strategy := range []kubeflowv1.RestartStrategy{kubeflowv1.RestartStrategyBlockingRecreate, kubeflowv1.RestartStrategyRecreate} {
		t.Run(string(strategy), func(t *testing.T) { testWholeJobRestart(t, strategy) })
	}
}

func testWholeJobRestart(t *testing.T, strategy kubeflowv1.RestartStrategy) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).
		FailurePolicy(testjobs.MakeFailurePolicy(2).Strategy(strategy).Obj()).Obj()
	var mu sync.Mutex // deletes run in parallel
	var order []string
	record := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, what)
	}
	funcs := interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			record("status")
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			record("delete " + obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
	}
	h := newHarness(t, fakeFramework{}, job, Options{}, funcs)
	h.reconcile()
	h.reconcile() // the pass that sees the created pods (the informer's, in a cluster)
	for _, p := range h.pods() {
		if p.Labels[kubeflowv1.RestartAttemptLabel] != "0" || !slices.Contains(p.Finalizers, kubeflowv1.PodTrackingFinalizer) {
			t.Fatalf("pod %s: labels %v finalizers %v", p.Name, p.Labels, p.Finalizers)
		}
	}
	h.failPod("j-worker-1", 3)
	order = nil
	h.reconcile()
	st := h.job().Status
	if st.Attempt() != 1 || st.RestartsCountTowardsMax != 1 || !hasCondition(&st, kubeflowv1.JobRestarting) {
		t.Fatalf("after the failure: restarts %d/%d, conditions %v", st.Attempt(), st.RestartsCountTowardsMax, conditionTypes(st))
	}
	if len(order) == 0 || order[0] != "status" {
		t.Fatalf("requests %v: the restart's status write must come before any deletion", order)
	}
	// The fake API keeps the deleted pods (their finalizer) until the
	// kubelet confirms a deletion (grace period 0); confirm worker-1's only.
	confirm := func(name string) {
		var p corev1.Pod
		if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, &p); err != nil {
			t.Fatal(err)
		}
		if p.DeletionTimestamp == nil {
			t.Fatalf("pod %s of attempt 0 not deleted", name)
		}
		p.DeletionGracePeriodSeconds = new(int64)
		if err := h.c.Update(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
	}
	attempts := func() map[string]string {
		out := map[string]string{}
		for _, p := range h.pods() {
			out[p.Name] = p.Labels[kubeflowv1.RestartAttemptLabel]
		}
		return out
	}
	confirm("j-worker-1")
	h.reconcile() // releases worker-1, which goes
	h.reconcile()
	want := map[string]string{"j-master-0": "0", "j-worker-0": "0"}
	if strategy == kubeflowv1.RestartStrategyRecreate {
		want["j-worker-1"] = "1"
	}
	if diff := cmp.Diff(want, attempts()); diff != "" {
		t.Fatalf("one pod of attempt 0 gone (-want +got):\n%s", diff)
	}
	confirm("j-master-0")
	confirm("j-worker-0")
	h.reconcile()
	h.reconcile()
	if diff := cmp.Diff(map[string]string{"j-master-0": "1", "j-worker-0": "1", "j-worker-1": "1"}, attempts()); diff != "" {
		t.Fatalf("attempt 0 gone (-want +got):\n%s", diff)
	}
	if st := h.job().Status; st.RestartCount != 0 {
		t.Errorf("restartCount = %d: a whole-job restart is no per-pod retry", st.RestartCount)
	}
}

// A pod created and deleted before the cache ever showed it (its events
// lost while a watch was broken) brings its job back by no event: chaos had
// a JAXJob wait ten minutes with a worker missing. A pass that finds such a
// record older than moments asks to look again once it expires.
func TestUnseenCreateLooksAgain(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(2).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{})
	h.reconcile()
	worker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j-worker-1"}}
	if err := h.c.Delete(context.Background(), worker); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(30 * time.Second)
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key})
	if err != nil {
		t.Fatal(err)
	}
	if want := inflightTTL - 30*time.Second + time.Second; res.RequeueAfter != want {
		t.Errorf("requeueAfter = %v, want %v (when the in-flight record expires)", res.RequeueAfter, want)
	}
	h.clock.Step(res.RequeueAfter)
	h.reconcile()
	if n := len(h.pods()); n != 3 {
		t.Errorf("pods = %d once the record expired, want 3", n)
	}
}

// v1's MPI launcher has no replica-index label and is adopted by name, also
// by the pass that finishes the job because the launcher completed while no
// operator ran (the e2e upgrade spec: a finishing pass creates nothing, but
// it adopts).
func TestFinishingPassAdoptsUnindexedChild(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).Obj()
	h := newHarness(t, masterDoneFramework{}, job, Options{}, interceptor.Funcs{})
	pod := testjobs.MakePod("j-master-0", "ns").Label(kubeflowv1.OperatorNameLabel, fakeControllerName).
		Label(kubeflowv1.JobNameLabel, "j").Label(kubeflowv1.ReplicaTypeLabel, "master").
		ControlledBy("PyTorchJob", "j", "job-uid").Phase(corev1.PodSucceeded).Obj()
	pod.Spec.Containers = []corev1.Container{{Name: "pytorch", Image: "x"}}
	if err := h.c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	if st := h.job().Status; !hasCondition(&st, kubeflowv1.JobSucceeded) {
		t.Fatalf("conditions %v, want Succeeded", conditionTypes(st))
	}
	pods := h.pods()
	if len(pods) != 1 || pods[0].Labels[kubeflowv1.ReplicaIndexLabel] != "0" {
		t.Errorf("pods %v: want v1's pod adopted with replica-index 0", pods)
	}
}

// A released pod is released once, however long the cache shows it with
// its finalizer (make bench counted repeated PATCHes, some answered 404).
func TestReleaseOnce(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).BackoffLimit(1).Obj()
	patches := 0
	funcs := interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		patches++
		return c.Patch(ctx, obj, patch, opts...)
	}}
	h := newHarness(t, fakeFramework{}, job, Options{}, funcs)
	pod := testjobs.MakePod("j-worker-0", "ns").UID("w0").Obj()
	pod.Finalizers = []string{kubeflowv1.PodTrackingFinalizer}
	for i := 0; i < 3; i++ {
		if err := h.r.releasePods(context.Background(), job, []*corev1.Pod{pod}); err != nil {
			t.Fatal(err)
		}
	}
	if patches != 1 {
		t.Errorf("PATCH requests = %d for one pod released three times, want 1", patches)
	}
}

// A copy of the job older than its pods (status.restarts below a pod's
// attempt: make chaos saw one after an apiserver restart) is never acted
// on: the pass took the new attempt for an old one and replaced it.
func TestStaleStatusIsNotActedOn(t *testing.T) {
	job := testjobs.MakePyTorchJob("j", "ns").UID("job-uid").Master(1).Workers(1).
		FailurePolicy(testjobs.MakeFailurePolicy(2).Obj()).Obj()
	h := newHarness(t, fakeFramework{}, job, Options{}, interceptor.Funcs{})
	for _, name := range []string{"j-master-0", "j-worker-0"} {
		rt, idx := "master", "0"
		if name == "j-worker-0" {
			rt = "worker"
		}
		pod := testjobs.MakePod(name, "ns").Label(kubeflowv1.OperatorNameLabel, fakeControllerName).
			Label(kubeflowv1.JobNameLabel, "j").Label(kubeflowv1.ReplicaTypeLabel, rt).Label(kubeflowv1.ReplicaIndexLabel, idx).
			Label(kubeflowv1.RestartAttemptLabel, "1").ControlledBy("PyTorchJob", "j", "job-uid").Phase(corev1.PodRunning).Obj()
		pod.Spec.Containers = []corev1.Container{{Name: "pytorch", Image: "x"}}
		if err := h.c.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: h.key})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range h.pods() {
		if p.DeletionTimestamp != nil || p.Labels[kubeflowv1.RestartAttemptLabel] != "1" {
			t.Errorf("pod %s of attempt 1 touched by a pass that read restarts 0", p.Name)
		}
	}
	if res.RequeueAfter == 0 {
		t.Error("a stale pass must look again")
	}
}

// podNamesOf lists the pods' names in order.
func podNamesOf(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
