package suite

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const (
	pytorch = kubeflowv1.PyTorchJobKind
	master  = kubeflowv1.PyTorchJobReplicaTypeMaster
	worker  = kubeflowv1.PyTorchJobReplicaTypeWorker
)

// annotateAll puts annotations on the templates of every replica type of w.
func annotateAll(w *testjobs.PyTorchJobWrapper, ann map[string]string) *testjobs.PyTorchJobWrapper {
	for rt := range w.Spec.PyTorchReplicaSpecs {
		for k, v := range ann {
			w.Annotation(rt, k, v)
		}
	}
	return w
}

func annotate(w *testjobs.PyTorchJobWrapper, rt kubeflowv1.ReplicaType, ann map[string]string) *testjobs.PyTorchJobWrapper {
	for k, v := range ann {
		w.Annotation(rt, k, v)
	}
	return w
}

func servicesOf(ctx SpecContext, ns, job string) []string {
	var svcs corev1.ServiceList
	Expect(k8s.List(ctx, &svcs, client.InNamespace(ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job})).To(Succeed())
	names := make([]string, 0, len(svcs.Items))
	for _, s := range svcs.Items {
		names = append(names, s.Name)
	}
	return names
}

var _ = Describe("Restart policies", func() {
	// Every entry has backoffLimit 1: a retried failure restarts the pod once
	// and then exhausts the limit; a terminal one fails the job at once.
	DescribeTable("a replica exiting non-zero",
		func(ctx SpecContext, policy kubeflowv1.RestartPolicy, code int, retried bool) {
			ns := newNamespace(ctx, "exit-"+strings.ToLower(string(policy)))
			job := annotate(testjobs.MakePyTorchJob("fail", ns).Master(1), master, exitAfter(code, "1s")).
				RestartPolicy(policy).BackoffLimit(1).Obj()
			Expect(k8s.Create(ctx, job)).To(Succeed())
			st := waitFor(ctx, pytorch, ns, "fail", kubeflowv1.JobFailed)
			failed := findCondition(st, kubeflowv1.JobFailed)
			exited := fmt.Sprintf("container pytorch exited with code %d", code)
			restarts := jobEvents(ctx, ns, "fail", "PyTorchJobRestarting")
			if retried {
				Expect(st.RestartCount).To(BeEquivalentTo(1))
				Expect(failed.Message).To(Equal("Job fail has failed because it has reached the specified backoff limit"))
				// Restarting gave way to Running when the new pod ran; the event stays.
				Expect(restarts).To(ConsistOf(HaveField("Message", ContainSubstring("fail-master-0: "+exited))))
			} else {
				Expect(st.RestartCount).To(BeZero())
				Expect(failed.Reason).To(Equal("PyTorchJobFailed"))
				Expect(failed.Message).To(ContainSubstring("fail-master-0: " + exited))
				Expect(findCondition(st, kubeflowv1.JobRestarting)).To(BeNil(), "conditions: %s", conditionsString(st))
				Expect(restarts).To(BeEmpty())
				// The failed pod is kept, never recreated.
				pods := jobPods(ctx, ns, "fail")
				Expect(pods).To(HaveLen(1))
				Expect(pods[0].Status.Phase).To(Equal(corev1.PodFailed))
			}
		},
		Entry("OnFailure, exit 1: restarted", kubeflowv1.RestartPolicyOnFailure, 1, true),
		Entry("OnFailure, exit 137: restarted", kubeflowv1.RestartPolicyOnFailure, 137, true),
		Entry("ExitCode, exit 1: fails", kubeflowv1.RestartPolicyExitCode, 1, false),
		Entry("ExitCode, exit 137: restarted", kubeflowv1.RestartPolicyExitCode, 137, true),
		Entry("Never, exit 1: fails", kubeflowv1.RestartPolicyNever, 1, false),
		Entry("Never, exit 137: fails", kubeflowv1.RestartPolicyNever, 137, false),
	)

	It("bounds all retries by backoffLimit, counted in status", func(ctx SpecContext) {
		ns := newNamespace(ctx, "backoff")
		w := testjobs.MakePyTorchJob("backoff", ns).Master(1).Workers(2).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).BackoffLimit(2)
		job := annotate(w, worker, exitAfter(1, "1s")).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		st := waitFor(ctx, pytorch, ns, "backoff", kubeflowv1.JobFailed)
		Expect(st.RestartCount).To(BeEquivalentTo(2))
		Expect(findCondition(st, kubeflowv1.JobFailed).Message).To(Equal("Job backoff has failed because it has reached the specified backoff limit"))
	})
})

var _ = Describe("Run policies", func() {
	It("fails a job running longer than activeDeadlineSeconds, on time", func(ctx SpecContext) {
		ns := newNamespace(ctx, "deadline")
		job := testjobs.MakePyTorchJob("deadline", ns).Master(1).Workers(1).ActiveDeadlineSeconds(3).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		st := waitFor(ctx, pytorch, ns, "deadline", kubeflowv1.JobFailed)
		Expect(findCondition(st, kubeflowv1.JobFailed).Message).To(Equal("Job deadline has failed because it was active longer than specified deadline"))
		Expect(findCondition(st, kubeflowv1.JobFailed).Reason).To(Equal("PyTorchJobFailed"))
		// The cause is the deadline, not a pod: nothing failed or restarted.
		Expect(st.RestartCount).To(BeZero())
		for rt, rs := range st.ReplicaStatuses {
			Expect(rs.Failed).To(BeZero(), "%s pods failed", rt)
		}
		// Not before the deadline, counted from startTime. Its running pods
		// do not change and the operator's resync is hours away, so failing
		// within waitFor's wait at all shows the deadline timer.
		Expect(st.StartTime).NotTo(BeNil())
		Expect(st.CompletionTime).NotTo(BeNil())
		deadline := st.StartTime.Add(3 * time.Second)
		Expect(st.CompletionTime.Time).NotTo(BeTemporally("<", deadline))
		Expect(findCondition(st, kubeflowv1.JobFailed).LastTransitionTime.Time).NotTo(BeTemporally("<", deadline))
	})

	It("deletes a finished job after ttlSecondsAfterFinished; the garbage collector removes its pods and services", func(ctx SpecContext) {
		ns := newNamespace(ctx, "ttl")
		job := annotateAll(testjobs.MakePyTorchJob("ttl", ns).Master(1).Workers(1).TTLSecondsAfterFinished(2), exitAfter(0, "1s")).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		st := waitFor(ctx, pytorch, ns, "ttl", kubeflowv1.JobSucceeded)
		Expect(jobPods(ctx, ns, "ttl")).To(HaveLen(2), "cleanPodPolicy None keeps the pods until the job goes")
		Eventually(ctx, func() bool {
			return gone(k8s.Get(ctx, client.ObjectKeyFromObject(job), &kubeflowv1.PyTorchJob{}))
		}).Should(BeTrue(), "job deleted after its TTL")
		Expect(time.Since(st.CompletionTime.Time)).To(BeNumerically(">=", 2*time.Second))
		Eventually(ctx, func(g Gomega) {
			g.Expect(podNames(jobPods(ctx, ns, "ttl"))).To(BeEmpty())
			g.Expect(servicesOf(ctx, ns, "ttl")).To(BeEmpty())
		}).Should(Succeed(), "pods and services garbage-collected")
	})

	DescribeTable("cleanPodPolicy on success",
		func(ctx SpecContext, policy kubeflowv1.CleanPodPolicy, wantPods []string) {
			ns := newNamespace(ctx, "clean-"+strings.ToLower(string(policy)))
			// The master finishes; the worker would run forever.
			w := testjobs.MakePyTorchJob("clean", ns).Master(1).Workers(1).CleanPodPolicy(policy)
			Expect(k8s.Create(ctx, annotate(w, master, exitAfter(0, "1s")).Obj())).To(Succeed())
			waitFor(ctx, pytorch, ns, "clean", kubeflowv1.JobSucceeded)
			check := func(g Gomega) {
				g.Expect(podNames(jobPods(ctx, ns, "clean"))).To(ConsistOf(wantPods))
				g.Expect(servicesOf(ctx, ns, "clean")).To(ConsistOf(wantPods), "services follow their pods")
			}
			Eventually(ctx, check).Should(Succeed())
			Consistently(ctx, check).WithTimeout(2 * time.Second).Should(Succeed())
		},
		Entry("All deletes every pod", kubeflowv1.CleanPodPolicyAll, []string{}),
		Entry("Running deletes the running worker", kubeflowv1.CleanPodPolicyRunning, []string{"clean-master-0"}),
		Entry("None keeps every pod", kubeflowv1.CleanPodPolicyNone, []string{"clean-master-0", "clean-worker-0"}),
	)

	It("suspends a running job (pods deleted) and resumes it to completion", func(ctx SpecContext) {
		ns := newNamespace(ctx, "suspend")
		job := testjobs.MakePyTorchJob("susp", ns).Master(1).Workers(1).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitFor(ctx, pytorch, ns, "susp", kubeflowv1.JobRunning)

		update := func(mutate func(j *kubeflowv1.PyTorchJob)) {
			Eventually(ctx, func() error {
				var j kubeflowv1.PyTorchJob
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &j); err != nil {
					return err
				}
				mutate(&j)
				return k8s.Update(ctx, &j)
			}).Should(Succeed())
		}
		update(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
		st := waitFor(ctx, pytorch, ns, "susp", kubeflowv1.JobSuspended)
		Expect(findCondition(st, kubeflowv1.JobRunning)).To(HaveField("Status", corev1.ConditionFalse))
		Eventually(ctx, func() []string { return podNames(jobPods(ctx, ns, "susp")) }).Should(BeEmpty())

		// While suspended the template may change (as Kueue does); then resume.
		update(func(j *kubeflowv1.PyTorchJob) {
			for _, rs := range j.Spec.PyTorchReplicaSpecs {
				rs.Template.Annotations = exitAfter(0, "1s")
			}
		})
		update(func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
		st = waitFor(ctx, pytorch, ns, "susp", kubeflowv1.JobSucceeded)
		Expect(findCondition(st, kubeflowv1.JobSuspended)).To(And(
			HaveField("Status", corev1.ConditionFalse), HaveField("Reason", "PyTorchJobResumed")))
		Expect(jobPods(ctx, ns, "susp")).To(HaveLen(2))
	})

	It("leaves jobs managed by MultiKueue untouched", func(ctx SpecContext) {
		ns := newNamespace(ctx, "managedby")
		managed := annotateAll(testjobs.MakePyTorchJob("remote", ns).Master(1).ManagedBy(kubeflowv1.MultiKueueController), exitAfter(0, "1s")).Obj()
		Expect(k8s.Create(ctx, managed)).To(Succeed())
		// A job of ours in the same namespace, created after it, completes.
		ours := annotateAll(testjobs.MakePyTorchJob("local", ns).Master(1), exitAfter(0, "1s")).Obj()
		Expect(k8s.Create(ctx, ours)).To(Succeed())
		waitFor(ctx, pytorch, ns, "local", kubeflowv1.JobSucceeded)
		Consistently(ctx, func(g Gomega) {
			g.Expect(podNames(jobPods(ctx, ns, "remote"))).To(BeEmpty())
			g.Expect(servicesOf(ctx, ns, "remote")).To(BeEmpty())
			st, err := jobStatus(ctx, pytorch, ns, "remote")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st.Conditions).To(BeEmpty())
		}).Should(Succeed())
	})
})

var _ = Describe("Failure policy", func() {
	It("restarts the whole job when a worker exits 3, then succeeds with restarts 1", func(ctx SpecContext) {
		ns := newNamespace(ctx, "failure-policy")
		job := testjobs.MakePyTorchJob("fp", ns).Master(1).Workers(2).
			FailurePolicy(testjobs.MakeFailurePolicy(1).Rule("user-error", kubeflowv1.FailJobAction).
				OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 1).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitFor(ctx, pytorch, ns, "fp", kubeflowv1.JobRunning)
		pods := jobPods(ctx, ns, "fp")
		Expect(pods).To(HaveLen(3))
		var w corev1.Pod
		for _, p := range pods {
			if p.Name == "fp-worker-1" {
				w = p
			}
		}
		patch := client.MergeFrom(w.DeepCopy())
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		for k, v := range exitAfter(3, "0s") {
			w.Annotations[k] = v
		}
		Expect(k8s.Patch(ctx, &w, patch)).To(Succeed())
		Eventually(ctx, func(g Gomega) {
			ps := jobPods(ctx, ns, "fp")
			g.Expect(ps).To(HaveLen(3))
			for _, p := range ps {
				g.Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.RestartAttemptLabel, "1"), p.Name)
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), p.Name)
			}
		}).Should(Succeed())
		finishPods(ctx, ns, "fp", 0)
		st := waitFor(ctx, pytorch, ns, "fp", kubeflowv1.JobSucceeded)
		Expect(st.Attempt()).To(Equal(int32(1)))
		Expect(st.RestartsCountTowardsMax).To(Equal(int32(1)))
		Expect(jobEvents(ctx, ns, "fp", kubeflowv1.FailurePolicyNoRuleMatchedReason)).To(HaveLen(1))
		Expect(jobEvents(ctx, ns, "fp", "PyTorchJobRestarting")).To(BeEmpty(), "a whole-job restart has the failure policy's reason")
	})
})
