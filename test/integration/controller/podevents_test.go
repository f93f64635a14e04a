package controller_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// The events `kubectl describe` shows about a job's pods: v1's
// ExitedWithCode and abnormal-pod warnings, each recorded once per state of
// its pod (v1 re-recorded them on every reconcile).
var _ = Describe("Pod events", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("records each pod's exit once, the exit-0 pods of a pass in one event", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("ex", ns).Master(1).Workers(2).RestartPolicy(kubeflowv1.RestartPolicyNever).
			Annotation("Worker", cluster.ExitCodeAnnotation, "0").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())

		// Whether both workers land in one pass or two, each is named once.
		Eventually(func() []string { return exitedOK(ctx, ns, "ex") }, timeout, interval).
			Should(ConsistOf("ex-worker-0", "ex-worker-1"))
		expectNoRepeat(ctx, ns, "ex", "ExitedWithCode")

		finishPod(ctx, ns, "ex-master-0", 3)
		eventuallyPyTorchCondition(ctx, ns, "ex", kubeflowv1.JobFailed)
		Eventually(func() []string { return jobEvents(ctx, ns, "ex", "ExitedWithCode") }, timeout, interval).
			Should(ContainElement(fmt.Sprintf("Normal Pod: %s.ex-master-0 exited with code 3 (x1)", ns)))
		expectNoRepeat(ctx, ns, "ex", "ExitedWithCode")
		Expect(exitedOK(ctx, ns, "ex")).To(ConsistOf("ex-worker-0", "ex-worker-1"))
	})

	It("warns once about an unschedulable pod, with the scheduler's reason", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("unsched", ns).Master(1).NodeSelector("Master", "example.com/no-such-node", "x").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())

		Eventually(func() []string { return jobEvents(ctx, ns, "unsched", "Unschedulable") }, timeout, interval).
			Should(ConsistOf(And(
				HavePrefix("Warning Error pod unsched-master-0 condition message: 0/4 nodes are available"),
				ContainSubstring("didn't match Pod's node affinity/selector"),
				HaveSuffix("(x1)"))))
		expectNoRepeat(ctx, ns, "unsched", "Unschedulable")
	})

	// KWOK runs no containers, so no kubelet reports waiting reasons. The
	// pods are held by a scheduling gate (no node, so neither KWOK nor the
	// pod garbage collector touches them) and the test writes the container
	// statuses a kubelet would, through the status subresource.
	It("warns once per waiting reason a kubelet reports", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("wait", ns).Master(1).Workers(1).
			SchedulingGate("Master", "example.com/hold").SchedulingGate("Worker", "example.com/hold").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "wait")) }, timeout, interval).
			Should(Equal([]string{"wait-master-0", "wait-worker-0"}))

		// Before any container status, the gated pods' newest condition.
		Eventually(func() []string { return jobEvents(ctx, ns, "wait", "SchedulingGated") }, timeout, interval).
			Should(ConsistOf(
				"Warning Error pod wait-master-0 condition message: Scheduling is blocked due to non-empty scheduling gates (x1)",
				"Warning Error pod wait-worker-0 condition message: Scheduling is blocked due to non-empty scheduling gates (x1)"))

		setWaiting(ctx, ns, "wait-master-0", "ErrImagePull", `failed to pull image "pytorch:nope": not found`)
		setWaiting(ctx, ns, "wait-worker-0", "CreateContainerConfigError", `secret "creds" not found`)
		Eventually(func() []string { return jobEvents(ctx, ns, "wait", "ErrImagePull") }, timeout, interval).
			Should(Equal([]string{`Warning Error pod wait-master-0 container pytorch waiting message: failed to pull image "pytorch:nope": not found (x1)`}))
		Eventually(func() []string { return jobEvents(ctx, ns, "wait", "CreateContainerConfigError") }, timeout, interval).
			Should(Equal([]string{`Warning Error pod wait-worker-0 container pytorch waiting message: secret "creds" not found (x1)`}))

		// A new state of a pod is a new event; the old ones are not repeated.
		setWaiting(ctx, ns, "wait-master-0", "ImagePullBackOff", `Back-off pulling image "pytorch:nope"`)
		setWaiting(ctx, ns, "wait-worker-0", "CrashLoopBackOff", "back-off 10s restarting failed container=pytorch")
		Eventually(func() []string { return jobEvents(ctx, ns, "wait", "ImagePullBackOff") }, timeout, interval).
			Should(Equal([]string{`Warning Error pod wait-master-0 container pytorch waiting message: Back-off pulling image "pytorch:nope" (x1)`}))
		Eventually(func() []string { return jobEvents(ctx, ns, "wait", "CrashLoopBackOff") }, timeout, interval).
			Should(Equal([]string{"Warning Error pod wait-worker-0 container pytorch waiting message: back-off 10s restarting failed container=pytorch (x1)"}))
		Expect(jobEvents(ctx, ns, "wait", "SchedulingGated")).To(HaveLen(2))
		for _, reason := range []string{"ErrImagePull", "CreateContainerConfigError", "ImagePullBackOff", "CrashLoopBackOff"} {
			Expect(jobEvents(ctx, ns, "wait", reason)).To(HaveLen(1), reason)
		}
		expectNoRepeat(ctx, ns, "wait", "")
	})
})

// jobEvents renders the core/v1 events about a PyTorchJob with the reason
// ("" for all) as "<type> <message> (x<count>)", sorted.
func jobEvents(ctx context.Context, ns, job, reason string) []string {
	var el corev1.EventList
	Expect(k8s.List(ctx, &el, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range el.Items {
		if e.InvolvedObject.Kind != kubeflowv1.PyTorchJobKind || e.InvolvedObject.Name != job || (reason != "" && e.Reason != reason) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s (x%d)", e.Type, e.Message, e.Count))
	}
	sort.Strings(out)
	return out
}

// exitedOK are the pods named by the job's exit-0 ExitedWithCode events,
// once per naming.
func exitedOK(ctx context.Context, ns, job string) []string {
	var out []string
	for _, e := range jobEvents(ctx, ns, job, "ExitedWithCode") {
		msg, ok := strings.CutSuffix(strings.TrimPrefix(e, "Normal "), " exited with code 0 (x1)")
		if !ok {
			continue
		}
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "Pods: "), "Pod: ")
		for _, name := range strings.Split(msg, ", ") {
			out = append(out, strings.TrimPrefix(name, ns+"."))
		}
	}
	return out
}

// expectNoRepeat checks that the job's events with the reason ("" for
// all) are each recorded once and stay so through passes of the operator
// that demonstrably ran after the check began: an unfinished job is probed
// (reconciledSince), a finished one is expired by ttlSecondsAfterFinished 0
// (its pass deletes the job after everything else a finished job's pass
// does).
func expectNoRepeat(ctx context.Context, ns, job, reason string) {
	GinkgoHelper()
	before := jobEvents(ctx, ns, job, reason)
	Expect(before).To(HaveEach(HaveSuffix("(x1)")))
	j := getPyTorchJob(ctx, ns, job)
	finished := condition(j.Status, kubeflowv1.JobSucceeded) != nil || condition(j.Status, kubeflowv1.JobFailed) != nil
	if !finished {
		reconciledSince(ctx, ns, job)
	} else {
		updatePyTorchJob(ctx, ns, job, func(j *kubeflowv1.PyTorchJob) {
			j.Spec.RunPolicy.TTLSecondsAfterFinished = ptr.To[int32](0)
		})
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: job}, &kubeflowv1.PyTorchJob{}))
		}, timeout, interval).Should(BeTrue(), "the operator did not expire %s", job)
	}
	// A pass's events are sent after it, asynchronously.
	Consistently(func() []string { return jobEvents(ctx, ns, job, reason) }, 2*time.Second, interval).Should(Equal(before))
}

// setWaiting writes what a kubelet reports for a pod's pytorch container
// that cannot start.
func setWaiting(ctx context.Context, ns, pod, reason, message string) {
	GinkgoHelper()
	var p corev1.Pod
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, &p)).To(Succeed())
	patch := client.MergeFrom(p.DeepCopy())
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  "pytorch",
		Image: testjobs.DefaultImage,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}}
	Expect(k8s.Status().Patch(ctx, &p, patch)).To(Succeed())
}
