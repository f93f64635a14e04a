package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// exitPod makes KWOK finish a running pod with code (the pod-exit stage
// reads the annotation from the pod, so one pod of one attempt fails).
func exitPod(ctx context.Context, ns, name string, code int) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, cluster.ExitCodeAnnotation, strconv.Itoa(code))
	Expect(k8s.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// failExited waits until KWOK has finished the pod as Failed.
func failExited(ctx context.Context, ns, name string) {
	Eventually(func() corev1.PodPhase {
		var p corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
		return p.Status.Phase
	}, timeout, interval).Should(Equal(corev1.PodFailed))
}

// attemptPodsRunning waits until n pods of the job run, all of attempt.
func attemptPodsRunning(ctx context.Context, ns, job string, n int, attempt int32) []corev1.Pod {
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		pods = jobPods(ctx, ns, job)
		g.Expect(pods).To(HaveLen(n))
		for _, p := range pods {
			g.Expect(p.DeletionTimestamp).To(BeNil(), p.Name)
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), p.Name)
			g.Expect(p.Labels[kubeflowv1.RestartAttemptLabel]).To(Equal(strconv.Itoa(int(attempt))), p.Name)
			g.Expect(p.Annotations[kubeflowv1.RestartAttemptLabel]).To(Equal(strconv.Itoa(int(attempt))), p.Name)
			g.Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever), p.Name)
			g.Expect(p.Finalizers).To(ContainElement(kubeflowv1.PodTrackingFinalizer), p.Name)
		}
	}, timeout, interval).Should(Succeed())
	return pods
}

func getJob(ctx context.Context, obj client.Object) client.Object {
	j := obj.DeepCopyObject().(client.Object)
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), j)).To(Succeed())
	return j
}

// eventuallyCondition waits for a True condition of any kind's job.
func eventuallyCondition(ctx context.Context, obj client.Object, t kubeflowv1.JobConditionType) *kubeflowv1.JobStatus {
	var st *kubeflowv1.JobStatus
	Eventually(func(g Gomega) {
		j := obj.DeepCopyObject().(client.Object)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), j)).To(Succeed())
		st = testjobs.Status(j)
		c := condition(*st, t)
		g.Expect(c).NotTo(BeNil(), "conditions: %v", conditionTypes(*st))
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "conditions: %v", conditionTypes(*st))
	}, timeout, interval).Should(Succeed())
	return st
}

var _ = Describe("failure policy", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	fp := testjobs.MakeFailurePolicy

	for _, kind := range []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"} {
		It("restarts every pod of a "+kind+" when one exits 3 under RestartJob, then succeeds", func(ctx context.Context) {
			job := testjobs.WithFailurePolicy(allKinds[kind].job("rj", ns), fp(2).Obj())
			Expect(k8s.Create(ctx, job)).To(Succeed())
			pods := attemptPodsRunning(ctx, ns, "rj", 2, 0)
			exitPod(ctx, ns, pods[len(pods)-1].Name, 3)
			again := attemptPodsRunning(ctx, ns, "rj", 2, 1)
			for i := range again {
				Expect(again[i].UID).NotTo(Equal(pods[i].UID), "every pod is new")
			}
			st := testjobs.Status(getJob(ctx, job))
			Expect(st.Attempt()).To(Equal(int32(1)))
			Expect(st.RestartsCountTowardsMax).To(Equal(int32(1)))
			Expect(st.RestartCount).To(BeZero(), "a whole-job restart is no per-pod retry")
			for _, p := range again {
				exitPod(ctx, ns, p.Name, 0)
			}
			st = eventuallyCondition(ctx, job, kubeflowv1.JobSucceeded)
			Expect(st.Attempt()).To(Equal(int32(1)))
			Expect(eventCount(ctx, ns, kubeflowv1.FailurePolicyNoRuleMatchedReason)).To(Equal(int32(1)))
			Expect(eventCount(ctx, ns, kind+"Restarting")).To(BeZero(), "a whole-job restart has the failure policy's reason")
			Expect(eventCount(ctx, ns, kind+"RestartCompleted")).To(Equal(int32(1)))
			// Nothing is left holding a pod once the job is finished.
			Eventually(func(g Gomega) {
				for _, p := range jobPods(ctx, ns, "rj") {
					g.Expect(p.Finalizers).NotTo(ContainElement(kubeflowv1.PodTrackingFinalizer), p.Name)
				}
			}, timeout, interval).Should(Succeed())
		})
	}

	It("fails a job whose ignoring rule keeps restarting it once maxTotalRestarts are made", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("loop", ns).Master(1).Workers(1).FailurePolicy(fp(0).MaxTotal(1).
			Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		pods := attemptPodsRunning(ctx, ns, "loop", 2, 0)
		exitPod(ctx, ns, pods[1].Name, 3)
		pods = attemptPodsRunning(ctx, ns, "loop", 2, 1)
		exitPod(ctx, ns, pods[1].Name, 3)
		st := eventuallyCondition(ctx, job, kubeflowv1.JobFailed)
		c := condition(*st, kubeflowv1.JobFailed)
		Expect(c.Reason).To(Equal(kubeflowv1.ReachedMaxTotalRestartsReason))
		Expect(c.Message).To(ContainSubstring("maxTotalRestarts (1)"))
		Expect(st.Attempt()).To(Equal(int32(1)))
		Expect(st.RestartsCountTowardsMax).To(BeZero())
	})

	It("fails at once on a FailJob rule, naming the rule, and judges only the earliest failure", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("fj", ns).Master(1).Workers(2).FailurePolicy(fp(5).
			Rule("user-error", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 2).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "fj", 3, 0)
		exitPod(ctx, ns, "fj-worker-1", 2)
		st := eventuallyCondition(ctx, job, kubeflowv1.JobFailed)
		c := condition(*st, kubeflowv1.JobFailed)
		Expect(c.Reason).To(Equal(kubeflowv1.FailurePolicyFailJobReason))
		Expect(c.Message).To(ContainSubstring(`rule "user-error" (FailJob) matched pod fj-worker-1: container pytorch exited with code 2`))
		Expect(st.Attempt()).To(BeZero())
	})

	It("fails an MPIJob whose containers are not called mpi on a FailJob rule without containerName", func(ctx context.Context) {
		job := testjobs.WithFailurePolicy(testjobs.MakeMPIJob("mc", ns).Launcher().Workers(1).
			ContainerName(kubeflowv1.MPIJobReplicaTypeLauncher, "launcher").ContainerName(kubeflowv1.MPIJobReplicaTypeWorker, "worker").Obj(),
			fp(2).Rule("user-error", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 1).Obj())
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "mc", 2, 0)
		exitPod(ctx, ns, "mc-launcher", 1)
		st := eventuallyCondition(ctx, job, kubeflowv1.JobFailed)
		Expect(condition(*st, kubeflowv1.JobFailed).Message).To(ContainSubstring(`rule "user-error" (FailJob) matched pod mc-launcher: container launcher exited with code 1`))
		Expect(st.Attempt()).To(BeZero())
	})

	It("restarts on the earliest failure when a later one would match FailJob", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("ef", ns).Master(1).Workers(2).FailurePolicy(fp(5).
			Rule("user-error", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 2).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "ef", 3, 0)
		// The operator is stopped so that both failures are there at its next pass.
		Expect(operator.Stop()).To(Succeed())
		exitPod(ctx, ns, "ef-worker-0", 137)
		failExited(ctx, ns, "ef-worker-0")
		exitPod(ctx, ns, "ef-worker-1", 2)
		failExited(ctx, ns, "ef-worker-1")
		var err error
		operator, err = util.StartOperator(restCfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		attemptPodsRunning(ctx, ns, "ef", 3, 1)
		st := testjobs.Status(getJob(ctx, job))
		Expect(condition(*st, kubeflowv1.JobFailed)).To(BeNil())
		Expect(st.Attempt()).To(Equal(int32(1)))
	})

	It("fails naming the limit once maxRestarts is spent", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("mr", ns).Master(1).Workers(1).FailurePolicy(fp(1).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "mr", 2, 0)
		exitPod(ctx, ns, "mr-worker-0", 3)
		attemptPodsRunning(ctx, ns, "mr", 2, 1)
		exitPod(ctx, ns, "mr-master-0", 4)
		st := eventuallyCondition(ctx, job, kubeflowv1.JobFailed)
		Expect(condition(*st, kubeflowv1.JobFailed).Message).To(ContainSubstring("has reached the failure policy's maxRestarts (1)"))
		Expect(condition(*st, kubeflowv1.JobFailed).Reason).To(Equal(kubeflowv1.ReachedMaxRestartsReason))
		Expect(st.Attempt()).To(Equal(int32(1)))
		Expect(st.RestartsCountTowardsMax).To(Equal(int32(1)))
	})

	It("deletes the running pods of a job FailJob failed and keeps the failed one, unless cleanPodPolicy is set", func(ctx context.Context) {
		policy := fp(5).Rule("user-error", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 2).Obj()
		clean := testjobs.MakePyTorchJob("cl", ns).Master(1).Workers(2).FailurePolicy(policy).Obj()
		keep := testjobs.MakePyTorchJob("keep", ns).Master(1).Workers(2).FailurePolicy(policy).CleanPodPolicy(kubeflowv1.CleanPodPolicyNone).Obj()
		Expect(k8s.Create(ctx, clean)).To(Succeed())
		Expect(k8s.Create(ctx, keep)).To(Succeed())
		Expect(getPyTorchJob(ctx, ns, "cl").Spec.RunPolicy.CleanPodPolicy).To(BeNil(), "not defaulted with a failure policy")
		attemptPodsRunning(ctx, ns, "cl", 3, 0)
		attemptPodsRunning(ctx, ns, "keep", 3, 0)
		failed := jobPods(ctx, ns, "cl")[2]
		Expect(failed.Name).To(Equal("cl-worker-1"))
		exitPod(ctx, ns, "cl-worker-1", 2)
		exitPod(ctx, ns, "keep-worker-1", 2)
		eventuallyCondition(ctx, clean, kubeflowv1.JobFailed)
		eventuallyCondition(ctx, keep, kubeflowv1.JobFailed)
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "cl")) }, timeout, interval).Should(Equal([]string{"cl-worker-1"}))
		var now corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&failed), &now)).To(Succeed())
		Expect(now.UID).To(Equal(failed.UID), "the failed pod is kept for its logs")
		Expect(now.Status.Phase).To(Equal(corev1.PodFailed))
		// The user's None keeps v1's behaviour: every pod stays.
		Consistently(func() []string { return livePodNames(ctx, ns, "keep") }, 2*time.Second, interval).
			Should(Equal([]string{"keep-master-0", "keep-worker-0", "keep-worker-1"}))
	})

	It("deletes the running pods of an MPIJob that reached maxRestarts", func(ctx context.Context) {
		job := testjobs.WithFailurePolicy(testjobs.MakeMPIJob("mx", ns).Launcher().Workers(2).Obj(), fp(0).Obj())
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "mx", 3, 0)
		exitPod(ctx, ns, "mx-worker-1", 3)
		st := eventuallyCondition(ctx, job, kubeflowv1.JobFailed)
		Expect(condition(*st, kubeflowv1.JobFailed).Message).To(ContainSubstring("has reached the failure policy's maxRestarts (0)"))
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "mx")) }, timeout, interval).Should(Equal([]string{"mx-worker-1"}))
	})

	It("restarts on an eviction under an ignore rule without counting it", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("ev", ns).Master(1).Workers(1).FailurePolicy(fp(0).
			Rule("infrastructure", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).OnPodCondition(corev1.DisruptionTarget).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "ev", 2, 0)
		cs, err := kubernetes.NewForConfig(restCfg)
		Expect(err).NotTo(HaveOccurred())
		Expect(cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ev-worker-0"}})).To(Succeed())
		attemptPodsRunning(ctx, ns, "ev", 2, 1)
		st := testjobs.Status(getJob(ctx, job))
		Expect(st.Attempt()).To(Equal(int32(1)))
		Expect(st.RestartsCountTowardsMax).To(BeZero())
		Expect(condition(*st, kubeflowv1.JobFailed)).To(BeNil())
		eventuallyCondition(ctx, job, kubeflowv1.JobRunning)
	})

	It("with BlockingRecreate never has pods of two attempts at once", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("br", ns).Master(1).Workers(4).FailurePolicy(fp(3).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "br", 5, 0)
		// Every pod event from here on, from one watch.
		cs, err := kubernetes.NewForConfig(restCfg)
		Expect(err).NotTo(HaveOccurred())
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: kubeflowv1.JobNameLabel + "=br"})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		var mu sync.Mutex
		var overlaps []string
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			present := map[string]string{} // pod name -> attempt
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				if ev.Type == watch.Deleted {
					delete(present, p.Name)
				} else {
					present[p.Name] = p.Labels[kubeflowv1.RestartAttemptLabel]
				}
				attempts := map[string]bool{}
				for _, a := range present {
					attempts[a] = true
				}
				if len(attempts) > 1 {
					mu.Lock()
					overlaps = append(overlaps, fmt.Sprint(present))
					mu.Unlock()
				}
			}
		}()
		exitPod(ctx, ns, "br-worker-2", 1)
		attemptPodsRunning(ctx, ns, "br", 5, 1)
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		Expect(overlaps).To(BeEmpty())
	})

	It("reports a restart blocked by a pod stuck terminating, and force-deletes it only once its node is lost", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("lost", ns).Master(1).Workers(1).FailurePolicy(fp(2).LostPodTimeout(2).Obj()).Obj()
		for _, s := range job.Spec.PyTorchReplicaSpecs {
			s.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(1))
		}
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "lost", 2, 0)
		// The worker's kubelet is gone: once deleted, the pod hangs terminating.
		var worker corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "lost-worker-0"}, &worker)).To(Succeed())
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, cluster.KubeletLostAnnotation)
		Expect(k8s.Patch(ctx, &worker, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		exitPod(ctx, ns, "lost-master-0", 3)

		// Reported: the count in status, the pod in the Restarting condition
		// and an event; past the lost-pod timeout the node is looked at.
		Eventually(func(g Gomega) {
			st := testjobs.Status(getJob(ctx, job))
			g.Expect(st.TerminatingPods).To(Equal(int32(1)))
			c := condition(*st, kubeflowv1.JobRestarting)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring(`lost-worker-0 (node %q)`, worker.Spec.NodeName))
			g.Expect(c.Message).To(ContainSubstring("past it: lost-worker-0"))
			g.Expect(eventCount(ctx, ns, engine.ReasonRestartBlocked)).To(BeNumerically(">=", 1))
		}, timeout, interval).Should(Succeed())
		// Its node is Ready, so its kubelet may yet finish it: it stays, and
		// so does the restart, over a recheck of the node.
		Consistently(func(g Gomega) {
			var p corev1.Pod
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&worker), &p)).To(Succeed())
			g.Expect(p.UID).To(Equal(worker.UID))
			g.Expect(jobPods(ctx, ns, "lost")).To(HaveLen(1), "no pod of the new attempt while an old one terminates")
		}, 12*time.Second, time.Second).Should(Succeed())
		Expect(eventCount(ctx, ns, engine.ReasonForceDeletedLostPod)).To(BeZero())

		// The node is lost: the pod is force-deleted, the restart goes on.
		Expect(env.SetNodeLost(ctx, worker.Spec.NodeName, true)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(env.SetNodeLost(ctx, worker.Spec.NodeName, false)).To(Succeed())
		}, NodeTimeout(time.Minute))
		attemptPodsRunning(ctx, ns, "lost", 2, 1)
		st := testjobs.Status(getJob(ctx, job))
		Expect(st.TerminatingPods).To(BeZero())
		Eventually(func() int32 { return eventCount(ctx, ns, engine.ReasonForceDeletedLostPod) }, timeout, interval).Should(Equal(int32(1)))
	})

	It("creates a new attempt's pods only once the restart backoff is over", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("bo", ns).Master(1).Workers(1).FailurePolicy(fp(2).Backoff(4, 0).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "bo", 2, 0)
		exitPod(ctx, ns, "bo-master-0", 3)
		var exited time.Time
		Eventually(func(g Gomega) {
			var p corev1.Pod
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bo-master-0"}, &p)).To(Succeed())
			g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
			t := p.Status.ContainerStatuses[0].State.Terminated
			g.Expect(t).NotTo(BeNil())
			exited = t.FinishedAt.Time
		}, timeout, interval).Should(Succeed())
		again := attemptPodsRunning(ctx, ns, "bo", 2, 1)
		for _, p := range again {
			// Times are in whole seconds: 4 s later is at least 3 apart.
			Expect(p.CreationTimestamp.Sub(exited)).To(BeNumerically(">=", 3*time.Second), "%s created %s, the old attempt failed %s", p.Name, p.CreationTimestamp, exited)
		}
		Expect(eventMessages(ctx, ns, kubeflowv1.FailurePolicyNoRuleMatchedReason)).To(ContainElement(ContainSubstring("Its pods are created 4s after this decision")))
	})

	It("behaves as v1 without a failure policy: no attempt label, no finalizer", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("v1", ns).Master(1).Workers(1).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		pods := waitPodsRunning(ctx, ns, "v1", 2)
		for _, p := range pods {
			Expect(p.Labels).NotTo(HaveKey(kubeflowv1.RestartAttemptLabel))
			Expect(p.Annotations).NotTo(HaveKey(kubeflowv1.RestartAttemptLabel))
			Expect(p.Finalizers).To(BeEmpty())
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyOnFailure))
		}
		Expect(testjobs.Status(getJob(ctx, job)).Restarts).To(BeNil())
		Expect(restartsColumn(ctx, ns, "v1")).To(BeNil(), "no Restarts cell without a failure policy")
	})

	It("shows 0 in the Restarts column of a job with a failure policy that has not restarted", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("zero", ns).Master(1).Workers(1).FailurePolicy(fp(1).Obj()).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		attemptPodsRunning(ctx, ns, "zero", 2, 0)
		Expect(restartsColumn(ctx, ns, "zero")).To(BeEquivalentTo(0))
		exitPod(ctx, ns, "zero-worker-0", 1)
		attemptPodsRunning(ctx, ns, "zero", 2, 1)
		Eventually(func() any { return restartsColumn(ctx, ns, "zero") }, timeout, interval).Should(BeEquivalentTo(1))
	})
})

// restartsColumn is the Restarts cell of a PyTorchJob as the API server
// prints it for kubectl get -o wide (nil: blank).
func restartsColumn(ctx context.Context, ns, name string) any {
	cs, err := kubernetes.NewForConfig(restCfg)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/apis/kubeflow.org/v1/namespaces", ns, "pytorchjobs", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	var table metav1.Table
	Expect(json.Unmarshal(raw, &table)).To(Succeed())
	col := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == "Restarts" })
	Expect(col).To(BeNumerically(">=", 0), "columns: %v", table.ColumnDefinitions)
	Expect(table.Rows).To(HaveLen(1))
	return table.Rows[0].Cells[col]
}

var _ = Describe("failure accounting", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	// A suspension's pods may terminate for long (a checkpoint on SIGTERM):
	// a foreign finalizer holds them terminating here, past an operator
	// restart (which forgets its own deletions) and the resume. They ended
	// because of the suspension, which is no failure of the policy and no
	// backoffLimit retry.
	DescribeTable("does not count a suspension whose pods still terminate after a restart and a resume",
		func(ctx context.Context, build func(ns string) *kubeflowv1.PyTorchJob) {
			job := build(ns)
			name := job.Name
			Expect(k8s.Create(ctx, job)).To(Succeed())
			pods := waitPodsRunning(ctx, ns, name, 2)
			for i := range pods {
				holdPod(ctx, &pods[i])
			}
			updatePyTorchJob(ctx, ns, name, func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
			eventuallyPyTorchCondition(ctx, ns, name, kubeflowv1.JobSuspended)
			Eventually(func(g Gomega) {
				for _, p := range jobPods(ctx, ns, name) {
					g.Expect(p.DeletionTimestamp).NotTo(BeNil(), p.Name)
					g.Expect(p.Status.Conditions).To(ContainElement(And(
						HaveField("Type", corev1.DisruptionTarget), HaveField("Status", corev1.ConditionTrue),
						HaveField("Reason", kubeflowv1.SuspendedDisruptionReason))), p.Name)
				}
			}, timeout, interval).Should(Succeed())

			Expect(operator.Stop()).To(Succeed())
			var err error
			operator, err = util.StartOperator(restCfg, util.DefaultConfiguration())
			Expect(err).NotTo(HaveOccurred())
			updatePyTorchJob(ctx, ns, name, func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
			Eventually(func() *kubeflowv1.JobCondition {
				return condition(getPyTorchJob(ctx, ns, name).Status, kubeflowv1.JobSuspended)
			}, timeout, interval).Should(HaveField("Status", corev1.ConditionFalse))
			Consistently(func(g Gomega) {
				st := getPyTorchJob(ctx, ns, name).Status
				g.Expect(condition(st, kubeflowv1.JobFailed)).To(BeNil())
				g.Expect(st.RestartCount).To(BeZero())
				g.Expect(st.Attempt()).To(BeZero())
			}, 2*time.Second, interval).Should(Succeed())

			for i := range pods {
				releaseHeldPod(ctx, &pods[i])
			}
			again := waitPodsRunning(ctx, ns, name, 2)
			for i := range again {
				Expect(again[i].UID).NotTo(Equal(pods[i].UID), "a new set of pods")
			}
			st := getPyTorchJob(ctx, ns, name).Status
			Expect(condition(st, kubeflowv1.JobFailed)).To(BeNil())
			Expect(st.RestartCount).To(BeZero())
			Expect(st.Attempt()).To(BeZero())
		},
		Entry("maxRestarts 0", func(ns string) *kubeflowv1.PyTorchJob {
			return testjobs.MakePyTorchJob("sfp", ns).Master(1).Workers(1).FailurePolicy(testjobs.MakeFailurePolicy(0).Obj()).Obj()
		}),
		Entry("backoffLimit 0 only", func(ns string) *kubeflowv1.PyTorchJob {
			return testjobs.MakePyTorchJob("sbl", ns).Master(1).Workers(1).BackoffLimit(0).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
		}),
	)

	It("counts a worker deleted while the operator was stopped, exactly once", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("acc", ns).Master(1).Workers(2).BackoffLimit(5).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		pods := waitPodsRunning(ctx, ns, "acc", 3)
		for _, p := range pods {
			Expect(p.Finalizers).To(ContainElement(kubeflowv1.PodTrackingFinalizer))
		}
		Expect(operator.Stop()).To(Succeed())
		Expect(k8s.Delete(ctx, &pods[2], client.GracePeriodSeconds(0))).To(Succeed())
		var err error
		operator, err = util.StartOperator(restCfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			var p corev1.Pod
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&pods[2]), &p)).To(Succeed())
			g.Expect(p.UID).NotTo(Equal(pods[2].UID))
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		}, timeout, interval).Should(Succeed())
		Expect(getPyTorchJob(ctx, ns, "acc").Status.RestartCount).To(Equal(int32(1)))

		// A restart of the operator after the count does not count it again:
		// the new process's first pass (its pod events are up to date once a
		// new exit is recorded) leaves restartCount where it was.
		Expect(operator.Stop()).To(Succeed())
		operator, err = util.StartOperator(restCfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		exitPod(ctx, ns, "acc-worker-0", 1)
		Eventually(func() int32 { return getPyTorchJob(ctx, ns, "acc").Status.RestartCount }, timeout, interval).Should(Equal(int32(2)))
		waitPodsRunning(ctx, ns, "acc", 3)
		Expect(getPyTorchJob(ctx, ns, "acc").Status.RestartCount).To(Equal(int32(2)))
	})

	It("with pod tracking off, releases every pod and counts failures from the pods it sees, as v1", func(ctx context.Context) {
		before := testjobs.MakePyTorchJob("before", ns).Master(1).Workers(1).BackoffLimit(5).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
		Expect(k8s.Create(ctx, before)).To(Succeed())
		for _, p := range waitPodsRunning(ctx, ns, "before", 2) {
			Expect(p.Finalizers).To(ContainElement(kubeflowv1.PodTrackingFinalizer))
		}

		Expect(operator.Stop()).To(Succeed())
		untracked := util.DefaultConfiguration()
		untracked.Controller.PodTracking = ptr.To(false)
		var err error
		operator, err = util.StartOperator(restCfg, untracked)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(operator.Stop()).To(Succeed())
			operator, err = util.StartOperator(restCfg, util.DefaultConfiguration())
			Expect(err).NotTo(HaveOccurred())
		})

		// The way back to v1: nothing is left holding a pod.
		Eventually(func(g Gomega) {
			for _, p := range jobPods(ctx, ns, "before") {
				g.Expect(p.Finalizers).NotTo(ContainElement(kubeflowv1.PodTrackingFinalizer), p.Name)
			}
		}, timeout, interval).Should(Succeed())

		after := testjobs.MakePyTorchJob("after", ns).Master(1).Workers(1).BackoffLimit(5).RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj()
		Expect(k8s.Create(ctx, after)).To(Succeed())
		pods := waitPodsRunning(ctx, ns, "after", 2)
		for _, p := range pods {
			Expect(p.Finalizers).To(BeEmpty(), p.Name)
		}
		exitPod(ctx, ns, "after-worker-0", 1)
		Eventually(func() int32 { return getPyTorchJob(ctx, ns, "after").Status.RestartCount }, timeout, interval).Should(Equal(int32(1)))
		for _, p := range waitPodsRunning(ctx, ns, "after", 2) {
			Expect(p.Finalizers).To(BeEmpty(), p.Name)
		}
	})

	It("releases the pods of a deleted job, so none is stranded", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("gone", ns).Master(1).Workers(1).BackoffLimit(1).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "gone", 2)
		Expect(k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
		Eventually(func() []corev1.Pod { return jobPods(ctx, ns, "gone") }, timeout, interval).Should(BeEmpty())
	})
})

// holdFinalizer keeps a deleted pod terminating, as a long grace period does.
const holdFinalizer = "test.kubeflow.org/hold"

func holdPod(ctx context.Context, pod *corev1.Pod) {
	patch := fmt.Sprintf(`{"metadata":{"uid":%q,"finalizers":[%q]}}`, pod.UID, holdFinalizer)
	Expect(k8s.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(patch)))).To(Succeed())
}

func releaseHeldPod(ctx context.Context, pod *corev1.Pod) {
	patch := fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, holdFinalizer)
	err := k8s.Patch(ctx, pod.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
	Expect(client.IgnoreNotFound(err)).To(Succeed())
}
