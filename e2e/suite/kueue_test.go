package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/e2e/kueueproc"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const (
	kueueQueueLabel    = kueueproc.QueueLabel
	kueuePriorityLabel = "kueue.x-k8s.io/priority-class"
	multiKueueManager  = "kueue.x-k8s.io/multikueue"
	kueueLocalQueue    = "queue"
	// kueueTolerationKey is the taint GPU node pools usually carry; the
	// flavor's toleration for it must reach every pod.
	kueueTolerationKey = "nvidia.com/gpu"
)

// kueueKinds are the kinds Kueue's own integrations cover (not our MPIJob,
// see kueueproc.BuiltinFrameworks).
var kueueKinds = []string{
	kubeflowv1.PyTorchJobKind, kubeflowv1.TFJobKind, kubeflowv1.XGBoostJobKind,
	kubeflowv1.PaddleJobKind, kubeflowv1.JAXJobKind,
}

// queuedKinds are the kinds queued in mode: the operator's integration adds MPIJob.
func queuedKinds(m kueueMode) []string {
	if m.Operator {
		return append(slices.Clone(kueueKinds), kubeflowv1.MPIJobKind)
	}
	return kueueKinds
}

// kueueFlavorLabels are the flavor's nodeLabels: every fake GPU node has them.
var kueueFlavorLabels = map[string]string{"nvidia.com/gpu.product": cluster.GPUProduct}

var kueueObj = kueueproc.Object

// kueueJob is a job of the given kind with one pod per replica (pods
// replicas in all), one GPU per pod, queued in the namespace's LocalQueue
// and created unsuspended. ann goes on every pod template.
func kueueJob(kind, ns, name string, pods int32, ann map[string]string) client.Object {
	var obj client.Object
	switch kind {
	case kubeflowv1.PyTorchJobKind:
		w := testjobs.MakePyTorchJob(name, ns).Master(1)
		if pods > 1 {
			w.Workers(pods - 1)
		}
		obj = w.Obj()
	case kubeflowv1.TFJobKind:
		obj = testjobs.MakeTFJob(name, ns).Workers(pods).Obj()
	case kubeflowv1.XGBoostJobKind:
		w := testjobs.MakeXGBoostJob(name, ns).Master(1)
		if pods > 1 {
			w.Workers(pods - 1)
		}
		obj = w.Obj()
	case kubeflowv1.PaddleJobKind:
		obj = testjobs.MakePaddleJob(name, ns).Workers(pods).Obj()
	case kubeflowv1.JAXJobKind:
		obj = testjobs.MakeJAXJob(name, ns).Workers(pods).Obj()
	case kubeflowv1.MPIJobKind:
		w := testjobs.MakeMPIJob(name, ns).Launcher()
		if pods > 1 {
			w.Workers(pods - 1)
		}
		obj = w.Obj()
	default:
		Fail("no Kueue integration for " + kind)
	}
	obj.SetLabels(map[string]string{kueueQueueLabel: kueueLocalQueue})
	testjobs.RunPolicy(obj).Suspend = ptr.To(false)
	for _, rs := range testjobs.ReplicaSpecs(obj) {
		for k, v := range ann {
			if rs.Template.Annotations == nil {
				rs.Template.Annotations = map[string]string{}
			}
			rs.Template.Annotations[k] = v
		}
		for i := range rs.Template.Spec.Containers {
			rs.Template.Spec.Containers[i].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse("1")}
		}
	}
	return obj
}

// kueueQueues creates a namespace (in the scope of Kueue's webhooks) with
// a LocalQueue on a new ClusterQueue of gpus GPUs in the shared flavor.
func kueueQueues(ctx context.Context, prefix, flavor string, gpus int) string {
	ns := newNamespaceWithLabels(ctx, "kueue-"+prefix, map[string]string{kueueNSLabel: "true"})
	cq := kueueObj("ClusterQueue", "", ns, map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{string(cluster.GPUResource)},
			"flavors": []any{map[string]any{
				"name":      flavor,
				"resources": []any{map[string]any{"name": string(cluster.GPUResource), "nominalQuota": strconv.Itoa(gpus)}},
			}},
		}},
		"preemption": map[string]any{"withinClusterQueue": "LowerPriority"},
	})
	Expect(k8s.Create(ctx, cq)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, cq))).To(Succeed())
	})
	lq := kueueObj("LocalQueue", ns, kueueLocalQueue, map[string]any{"clusterQueue": ns})
	Expect(k8s.Create(ctx, lq)).To(Succeed())
	// Jobs created before Kueue knows the queue would sit inadmissible.
	Eventually(ctx, func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cq), cq)).To(Succeed())
		g.Expect(kueueCondition(cq, "Active")).To(Equal("True"), "ClusterQueue %s active", ns)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(lq), lq)).To(Succeed())
		g.Expect(kueueCondition(lq, "Active")).To(Equal("True"), "LocalQueue %s/%s active", ns, kueueLocalQueue)
	}).Should(Succeed())
	return ns
}

// kueueCondition is the status of a condition of a Kueue object, "" if absent.
func kueueCondition(u *unstructured.Unstructured, t string) string {
	s, _ := kueueConditionReason(u, t)
	return s
}

var kueueConditionReason = kueueproc.Condition

func kueueConditionTime(u *unstructured.Unstructured, t string) time.Time {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == t {
			ts, _ := m["lastTransitionTime"].(string)
			parsed, _ := time.Parse(time.RFC3339, ts)
			return parsed
		}
	}
	return time.Time{}
}

// workloadOf is the Workload Kueue made for a job (owned by it).
func workloadOf(ctx context.Context, kind, ns, job string) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(kueueGroup.WithKind("WorkloadList"))
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, o := range list.Items[i].GetOwnerReferences() {
			if o.Kind == kind && o.Name == job {
				return &list.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no Workload owned by %s %s/%s yet", kind, ns, job)
}

// waitWorkload waits until the job's Workload has condition t True.
func waitWorkload(ctx context.Context, kind, ns, job, t string) *unstructured.Unstructured {
	var wl *unstructured.Unstructured
	Eventually(ctx, func(g Gomega) {
		var err error
		wl, err = workloadOf(ctx, kind, ns, job)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(kueueCondition(wl, t)).To(Equal("True"), "Workload %s/%s %s; conditions %v", ns, wl.GetName(), t, nested(wl, "status", "conditions"))
	}).Should(Succeed())
	return wl
}

// waitPending waits until Kueue has tried the job's Workload and left it
// pending (QuotaReserved False, reason Pending).
func waitPending(ctx context.Context, kind, ns, job string) *unstructured.Unstructured {
	var wl *unstructured.Unstructured
	Eventually(ctx, func(g Gomega) {
		var err error
		wl, err = workloadOf(ctx, kind, ns, job)
		g.Expect(err).NotTo(HaveOccurred())
		status, reason := kueueConditionReason(wl, "QuotaReserved")
		g.Expect(status).To(Equal("False"))
		g.Expect(reason).To(Equal("Pending"))
	}).Should(Succeed())
	return wl
}

// getJob reads a job of any kind as a typed object.
func getJob(ctx context.Context, kind, ns, name string) (client.Object, error) {
	obj, err := k8s.Scheme().New(jobGVK(kind))
	if err != nil {
		return nil, err
	}
	job := obj.(client.Object)
	return job, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
}

// expectSuspendedWithoutPods waits until the job is suspended by Kueue and
// our operator has deleted its pods and reported it.
func expectSuspendedWithoutPods(ctx context.Context, kind, ns, name string) {
	Eventually(ctx, func(g Gomega) {
		job, err := getJob(ctx, kind, ns, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ptr.Deref(testjobs.RunPolicy(job).Suspend, false)).To(BeTrue(), "spec.runPolicy.suspend")
		st := testjobs.Status(job)
		g.Expect(isTrue(st, kubeflowv1.JobSuspended)).To(BeTrue(), "conditions: %s", conditionsString(st))
		for rt, rs := range st.ReplicaStatuses {
			g.Expect(rs.Active).To(BeZero(), "replicaStatuses[%s].active", rt)
		}
		g.Expect(podNames(jobPods(ctx, ns, name))).To(BeEmpty())
	}).Should(Succeed())
}

// expectFlavorOnPods waits for n pods of the job, each carrying the
// flavor's nodeSelector and toleration.
func expectFlavorOnPods(ctx context.Context, ns, job string, n int) {
	Eventually(ctx, func(g Gomega) {
		pods := jobPods(ctx, ns, job)
		g.Expect(pods).To(HaveLen(n))
		for _, p := range pods {
			for k, v := range kueueFlavorLabels {
				g.Expect(p.Spec.NodeSelector).To(HaveKeyWithValue(k, v), "pod %s", p.Name)
			}
			g.Expect(p.Spec.Tolerations).To(ContainElement(And(
				HaveField("Key", kueueTolerationKey), HaveField("Operator", corev1.TolerationOpExists),
				HaveField("Effect", corev1.TaintEffectNoSchedule))), "pod %s", p.Name)
		}
	}).Should(Succeed())
}

// workloadEvents sums the counts of the Workload's events whose reason
// satisfies match.
func workloadEvents(ctx context.Context, ns, wl string, match func(reason string) bool) int32 {
	var evs corev1.EventList
	Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
	var n int32
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == "Workload" && e.InvolvedObject.Name == wl && match(e.Reason) {
			n += max(e.Count, 1)
			if e.Series != nil {
				n += e.Series.Count - 1
			}
		}
	}
	return n
}

// The Kueue specs run in both integration modes: with Kueue's own
// kubeflow.org integrations (as v1 users run today), and with the
// operator's (Kueue configured as its v0.19+ defaults are, our kinds as
// external frameworks), where MPIJob is queued too. The operator's mode
// restarts the operator, so it runs alone (Serial).
var _ = Describe("Kueue", Ordered, ContinueOnFailure, Label("kueue"), func() { kueueSpecs(kueueBuiltin) })

var _ = Describe("Kueue with the operator's integration", Serial, Ordered, ContinueOnFailure, Label("kueue"), func() {
	kueueSpecs(kueueOperator)
})

func kueueSpecs(mode kueueMode) {
	var (
		kq     *kueueProcess
		flavor = "e2e-gpu"
	)

	BeforeAll(func(ctx SpecContext) {
		if mode.Operator && !cfg.Local {
			Skip("the operator's Kueue integration specs restart the operator and Kueue: local control plane only")
		}
		begin := time.Now()
		kq = setupKueue(ctx, mode)
		// A flavor of the fake GPU nodes whose pods tolerate the usual GPU taint.
		rf := kueueObj("ResourceFlavor", "", flavor, map[string]any{
			"nodeLabels": map[string]any{"nvidia.com/gpu.product": cluster.GPUProduct},
			"tolerations": []any{map[string]any{
				"key": kueueTolerationKey, "operator": "Exists", "effect": "NoSchedule",
			}},
		})
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, rf))).To(Succeed())
		GinkgoWriter.Printf("e2e: Kueue ready after %s\n", time.Since(begin).Round(10*time.Millisecond))
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, rf))).To(Succeed())
		})
	}, NodeTimeout(5*time.Minute))

	// Kueue's log goes with the namespace artifacts of a failed spec.
	AfterEach(func() {
		if kq == nil || !CurrentSpecReport().Failed() {
			return
		}
		dir := specArtifactsDir()
		if b, err := os.ReadFile(kq.logPath); err == nil && os.MkdirAll(dir, 0o755) == nil {
			_ = os.WriteFile(filepath.Join(dir, "kueue.log"), b, 0o644)
		}
	})

	DescribeTable("suspends, admits, places and finishes a queued job", append([]any{func(ctx SpecContext, kind string) {
		ns := kueueQueues(ctx, strings.ToLower(kind), flavor, 4)
		job := kueueJob(kind, ns, "job", 2, exitAfter(0, "1s"))
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Expect(ptr.Deref(testjobs.RunPolicy(job).Suspend, false)).To(BeTrue(), "the queue's defaulting webhook suspends a queued job on create")

		wl := waitWorkload(ctx, kind, ns, "job", "Admitted")
		Expect(nested(wl, "status", "admission", "clusterQueue")).To(Equal(ns))
		// One pod set per replica type, the leading one first, admitted whole.
		var names []string
		podSets, _ := nested(wl, "spec", "podSets").([]any)
		for _, ps := range podSets {
			m, _ := ps.(map[string]any)
			names = append(names, fmt.Sprint(m["name"], "=", m["count"]))
		}
		Expect(names).To(Equal(kueuePodSets[kind]))
		expectFlavorOnPods(ctx, ns, "job", 2)
		waitFor(ctx, kind, ns, "job", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, kind, ns, "job", "Finished")
	}}, kindEntries(mode)...)...)

	It("keeps a job admitted with its quota through a whole-job restart", func(ctx SpecContext) {
		ns := kueueQueues(ctx, "restart", flavor, 2)
		job := testjobs.WithFailurePolicy(kueueJob(pytorch, ns, "rs", 2, nil), testjobs.MakeFailurePolicy(1).Obj())
		Expect(k8s.Create(ctx, job)).To(Succeed())
		wl := waitWorkload(ctx, pytorch, ns, "rs", "Admitted")
		admittedUID := wl.GetUID()
		waitFor(ctx, pytorch, ns, "rs", kubeflowv1.JobRunning)
		pods := jobPods(ctx, ns, "rs")
		Expect(pods).To(HaveLen(2))
		patch := client.MergeFrom(pods[1].DeepCopy())
		if pods[1].Annotations == nil {
			pods[1].Annotations = map[string]string{}
		}
		for k, v := range exitAfter(3, "0s") {
			pods[1].Annotations[k] = v
		}
		Expect(k8s.Patch(ctx, &pods[1], patch)).To(Succeed())
		// The restart is done once both pods of attempt 1 run.
		Eventually(ctx, func(g Gomega) {
			st, err := jobStatus(ctx, pytorch, ns, "rs")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st.Attempt()).To(Equal(int32(1)))
			ps := jobPods(ctx, ns, "rs")
			g.Expect(ps).To(HaveLen(2))
			for _, p := range ps {
				g.Expect(p.Labels[kubeflowv1.RestartAttemptLabel]).To(Equal("1"))
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
			}
		}).Should(Succeed())
		// The same Workload is still admitted: Kueue never saw the job suspended.
		wl = waitWorkload(ctx, pytorch, ns, "rs", "Admitted")
		Expect(wl.GetUID()).To(Equal(admittedUID))
		status, _ := kueueConditionReason(wl, "Evicted")
		Expect(status).NotTo(Equal("True"))
		obj, err := getJob(ctx, pytorch, ns, "rs")
		Expect(err).NotTo(HaveOccurred())
		Expect(ptr.Deref(testjobs.RunPolicy(obj).Suspend, false)).To(BeFalse())
		finishPods(ctx, ns, "rs", 0)
		waitFor(ctx, pytorch, ns, "rs", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, pytorch, ns, "rs", "Finished")
	})

	It("keeps a job that does not fit suspended without pods until quota frees", func(ctx SpecContext) {
		ns := kueueQueues(ctx, "quota", flavor, 2)
		Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "first", 2, nil))).To(Succeed())
		waitFor(ctx, pytorch, ns, "first", kubeflowv1.JobRunning)

		Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "second", 2, exitAfter(0, "1s")))).To(Succeed())
		waitPending(ctx, pytorch, ns, "second")
		expectSuspendedWithoutPods(ctx, pytorch, ns, "second")

		finishPods(ctx, ns, "first", 0)
		waitFor(ctx, pytorch, ns, "first", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, pytorch, ns, "second", "Admitted")
		waitFor(ctx, pytorch, ns, "second", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, pytorch, ns, "second", "Finished")
	})

	It("lets a higher WorkloadPriorityClass preempt a running job, which resumes and succeeds", func(ctx SpecContext) {
		ns := kueueQueues(ctx, "preempt", flavor, 2)
		low, high := ns+"-low", ns+"-high"
		for name, value := range map[string]int64{low: 100, high: 1000} {
			pc := &unstructured.Unstructured{Object: map[string]any{"value": value}}
			pc.SetGroupVersionKind(kueueGroup.WithKind("WorkloadPriorityClass"))
			pc.SetName(name)
			Expect(k8s.Create(ctx, pc)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, pc))).To(Succeed()) })
		}
		victim := kueueJob(pytorch, ns, "victim", 2, nil)
		victim.GetLabels()[kueuePriorityLabel] = low
		Expect(k8s.Create(ctx, victim)).To(Succeed())
		waitFor(ctx, pytorch, ns, "victim", kubeflowv1.JobRunning)
		Eventually(ctx, func(g Gomega) {
			g.Expect(jobPods(ctx, ns, "victim")).To(HaveEach(HaveField("Status.Phase", corev1.PodRunning)))
		}).Should(Succeed())

		// Runs until finished below, so the victim's eviction is observable.
		urgent := kueueJob(pytorch, ns, "urgent", 2, nil)
		urgent.GetLabels()[kueuePriorityLabel] = high
		Expect(k8s.Create(ctx, urgent)).To(Succeed())

		waitWorkload(ctx, pytorch, ns, "victim", "Preempted")
		expectSuspendedWithoutPods(ctx, pytorch, ns, "victim")
		waitFor(ctx, pytorch, ns, "urgent", kubeflowv1.JobRunning)
		finishPods(ctx, ns, "urgent", 0)
		waitFor(ctx, pytorch, ns, "urgent", kubeflowv1.JobSucceeded)

		// Re-admitted once the urgent job's quota is back.
		Eventually(ctx, func(g Gomega) {
			pods := jobPods(ctx, ns, "victim")
			g.Expect(pods).To(HaveLen(2))
			g.Expect(pods).To(HaveEach(HaveField("Status.Phase", corev1.PodRunning)))
		}).Should(Succeed())
		expectFlavorOnPods(ctx, ns, "victim", 2)
		finishPods(ctx, ns, "victim", 0)
		waitFor(ctx, pytorch, ns, "victim", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, pytorch, ns, "victim", "Finished")
	})

	It("never reconciles a job managed by MultiKueue", func(ctx SpecContext) {
		ns := kueueQueues(ctx, "managedby", flavor, 4)
		remote := testjobs.MakePyTorchJob("remote", ns).Master(1).Workers(1).ManagedBy(multiKueueManager).Suspend(false).Obj()
		remote.Labels = map[string]string{kueueQueueLabel: kueueLocalQueue}
		Expect(k8s.Create(ctx, remote)).To(Succeed())
		// A job of ours created afterwards in the same namespace: once it has
		// succeeded, the operator has long seen the MultiKueue one.
		Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "local", 1, exitAfter(0, "1s")))).To(Succeed())
		waitFor(ctx, pytorch, ns, "local", kubeflowv1.JobSucceeded)

		st, err := jobStatus(ctx, pytorch, ns, "remote")
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Conditions).To(BeEmpty(), "the operator must leave the status to MultiKueue")
		Expect(st.ReplicaStatuses).To(BeEmpty())
		Expect(podNames(jobPods(ctx, ns, "remote"))).To(BeEmpty())
		Expect(servicesOf(ctx, ns, "remote")).To(BeEmpty())
	})

	It("runs 200 jobs of mixed kinds through a queue that fits 20, never with pods while suspended", func(ctx SpecContext) {
		const jobs, fits = 200, 20
		ns := kueueQueues(ctx, "load", flavor, fits)
		w := startSuspendWatch(ctx, ns, queuedKinds(mode))

		begin := time.Now()
		cpu := startCPUWatch(kq)
		kinds := queuedKinds(mode)
		for i := range jobs {
			kind := kinds[i%len(kinds)]
			Expect(k8s.Create(ctx, kueueJob(kind, ns, fmt.Sprintf("j%03d", i), 1, exitAfter(0, "1s")))).To(Succeed())
		}
		Eventually(ctx, func(g Gomega) {
			g.Expect(w.err()).NotTo(HaveOccurred())
			g.Expect(w.succeeded()).To(Equal(jobs))
		}).WithTimeout(15 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("e2e: %d Kueue jobs (%s integration) succeeded in %s%s\n", jobs, mode,
			time.Since(begin).Round(100*time.Millisecond), cpu.perJob(jobs))
		Expect(w.violations()).To(BeEmpty())
		// The watches saw what they judge: every job queued suspended, every pod.
		Expect(w.queuedSuspended()).To(Equal(jobs))
		Expect(w.podsSeen()).To(BeNumerically(">=", jobs))
	}, SpecTimeout(20*time.Minute))

	if mode.Operator {
		operatorOnlySpecs(func() *kueueProcess { return kq }, mode, flavor)
	}

	Describe("with waitForPodsReady", Ordered, func() {
		BeforeAll(func(ctx SpecContext) {
			if kq == nil {
				Skip("waitForPodsReady needs a Kueue configured by the suite (local mode)")
			}
			// Restarted rather than enabled for all specs: its timeout must be
			// short here and would evict slow starters elsewhere.
			kq.switchTo(ctx, mode, &kueueproc.WaitForPodsReady{Timeout: "10s", BackoffBaseSecs: 1, BackoffLimitCount: 1})
		}, NodeTimeout(5*time.Minute))

		It("sets PodsReady when the job is Running", func(ctx SpecContext) {
			ns := kueueQueues(ctx, "podsready", flavor, 2)
			Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "job", 2, nil))).To(Succeed())
			wl := waitWorkload(ctx, pytorch, ns, "job", "PodsReady")
			job, err := getJob(ctx, pytorch, ns, "job")
			Expect(err).NotTo(HaveOccurred())
			running := findCondition(testjobs.Status(job), kubeflowv1.JobRunning)
			Expect(running).NotTo(BeNil(), "PodsReady before our Running condition")
			Expect(running.Status).To(Equal(corev1.ConditionTrue))
			Expect(running.LastTransitionTime.Time).NotTo(BeTemporally(">", kueueConditionTime(wl, "PodsReady")))

			finishPods(ctx, ns, "job", 0)
			waitFor(ctx, pytorch, ns, "job", kubeflowv1.JobSucceeded)
			waitWorkload(ctx, pytorch, ns, "job", "Finished")
		})

		It("evicts and requeues a job whose pods cannot start, leaving no pods", func(ctx SpecContext) {
			ns := kueueQueues(ctx, "stuck", flavor, 2)
			job := kueueJob(pytorch, ns, "stuck", 2, nil)
			for _, rs := range testjobs.ReplicaSpecs(job) {
				rs.Template.Spec.NodeSelector = map[string]string{"e2e.training-operator.kubeflow.org/no-such-node": "true"}
			}
			Expect(k8s.Create(ctx, job)).To(Succeed())

			// Evicted on the timeout, requeued and admitted again, evicted again;
			// then the requeuing limit (1) deactivates it.
			var wl *unstructured.Unstructured
			Eventually(ctx, func(g Gomega) {
				var err error
				wl, err = workloadOf(ctx, pytorch, ns, "stuck")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(nested(wl, "spec", "active")).To(BeFalse(), "Workload deactivated after the requeuing limit")
			}).WithTimeout(3 * time.Minute).Should(Succeed())
			Expect(workloadEvents(ctx, ns, wl.GetName(), func(r string) bool {
				return strings.HasPrefix(r, "Evicted") && strings.Contains(r, "PodsReadyTimeout")
			})).To(BeNumerically(">=", 1))
			Expect(workloadEvents(ctx, ns, wl.GetName(), func(r string) bool { return r == "Admitted" })).
				To(BeNumerically(">=", 2), "admitted again after the requeue")
			expectSuspendedWithoutPods(ctx, pytorch, ns, "stuck")
		})
	})
}

// kueuePodSets are the pod sets (name=count) of kueueJob's two-pod jobs.
var kueuePodSets = map[string][]string{
	kubeflowv1.PyTorchJobKind: {"master=1", "worker=1"},
	kubeflowv1.TFJobKind:      {"worker=2"},
	kubeflowv1.XGBoostJobKind: {"master=1", "worker=1"},
	kubeflowv1.PaddleJobKind:  {"worker=2"},
	kubeflowv1.JAXJobKind:     {"worker=2"},
	kubeflowv1.MPIJobKind:     {"launcher=1", "worker=1"},
}

// kindEntries are the table entries of the kinds queued in mode.
func kindEntries(mode kueueMode) []any {
	var out []any
	for _, k := range queuedKinds(mode) {
		out = append(out, Entry(nil, k))
	}
	return out
}

// suspendWatch follows a namespace's pods and jobs (one watch each, from
// the start) and records every pod created while its job was suspended.
// Both streams come from the same etcd, so resource versions order them:
// the job's suspend value at a pod's creation revision is exact.
type suspendWatch struct {
	mu sync.Mutex
	// history of spec.runPolicy.suspend per job name, in revision order.
	history map[string][]suspendAt
	pods    map[string]podAt // pod name -> its job and creation revision
	done    map[string]bool
	failure error
}

type suspendAt struct {
	rev     uint64
	suspend bool
}

type podAt struct {
	job string
	rev uint64
}

func startSuspendWatch(ctx context.Context, ns string, kinds []string) *suspendWatch {
	dyn, err := dynamic.NewForConfig(restCfg)
	Expect(err).NotTo(HaveOccurred())
	w := &suspendWatch{history: map[string][]suspendAt{}, pods: map[string]podAt{}, done: map[string]bool{}}
	wctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	follow := func(gvr schema.GroupVersionResource, handle func(watch.EventType, *unstructured.Unstructured, uint64)) {
		ready := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			rv, started := "", false
			for wctx.Err() == nil {
				wi, err := dyn.Resource(gvr).Namespace(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
				if !started {
					close(ready)
					started = true
				}
				if err != nil {
					w.fail(fmt.Errorf("watch %s: %w", gvr.Resource, err))
					return
				}
				for ev := range wi.ResultChan() {
					if ev.Type == watch.Error {
						w.fail(fmt.Errorf("watch %s: %v", gvr.Resource, ev.Object))
						wi.Stop()
						return
					}
					u, ok := ev.Object.(*unstructured.Unstructured)
					if !ok {
						continue
					}
					rv = u.GetResourceVersion()
					if ev.Type == watch.Bookmark {
						continue
					}
					rev, err := strconv.ParseUint(rv, 10, 64)
					if err != nil {
						w.fail(fmt.Errorf("resource version %q: %w", rv, err))
						return
					}
					handle(ev.Type, u, rev)
				}
				// The server ends watches now and then: resume from the last revision.
			}
		}()
		<-ready
	}
	for _, kind := range kinds {
		gvr := kubeflowv1.GroupVersion.WithResource(strings.ToLower(kind) + "s")
		follow(gvr, func(t watch.EventType, u *unstructured.Unstructured, rev uint64) {
			if t == watch.Deleted {
				return
			}
			suspend, _, _ := unstructured.NestedBool(u.Object, "spec", "runPolicy", "suspend")
			succeeded := false
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == string(kubeflowv1.JobSucceeded) && m["status"] == "True" {
					succeeded = true
				}
			}
			w.job(u.GetName(), rev, suspend, succeeded)
		})
	}
	follow(corev1.SchemeGroupVersion.WithResource("pods"), func(t watch.EventType, u *unstructured.Unstructured, rev uint64) {
		if t == watch.Added {
			w.pod(u.GetName(), u.GetLabels()[kubeflowv1.JobNameLabel], rev)
		}
	})
	return w
}

func (w *suspendWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failure == nil {
		w.failure = err
	}
}

func (w *suspendWatch) job(name string, rev uint64, suspend, succeeded bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.history[name]
	if len(h) == 0 || h[len(h)-1].suspend != suspend {
		w.history[name] = append(h, suspendAt{rev, suspend})
	}
	if succeeded {
		w.done[name] = true
	}
}

func (w *suspendWatch) pod(name, job string, rev uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.pods[name]; !seen {
		w.pods[name] = podAt{job, rev}
	}
}

func (w *suspendWatch) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

func (w *suspendWatch) succeeded() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.done)
}

// queuedSuspended counts the jobs first seen suspended (by Kueue's webhook).
func (w *suspendWatch) queuedSuspended() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, h := range w.history {
		if len(h) > 0 && h[0].suspend {
			n++
		}
	}
	return n
}

func (w *suspendWatch) podsSeen() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pods)
}

// violations lists pods created while their job was suspended (or before
// the job was seen), and jobs suspended again after having pods: in this
// spec nothing preempts, so both mean pods ran unadmitted.
func (w *suspendWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	firstPod := map[string]uint64{}
	for name, p := range w.pods {
		state, known := false, false
		for _, s := range w.history[p.job] {
			if s.rev > p.rev {
				break
			}
			state, known = s.suspend, true
		}
		if !known || state {
			out = append(out, fmt.Sprintf("pod %s created at revision %d while job %s was suspended (history %v)", name, p.rev, p.job, w.history[p.job]))
		}
		if f, ok := firstPod[p.job]; !ok || p.rev < f {
			firstPod[p.job] = p.rev
		}
	}
	for job, first := range firstPod {
		for _, s := range w.history[job] {
			if s.rev > first && s.suspend {
				out = append(out, fmt.Sprintf("job %s suspended again at revision %d after its first pod (revision %d)", job, s.rev, first))
			}
		}
	}
	return out
}

// operatorOnlySpecs are the specs of the operator's integration alone: the
// move from Kueue's own, the double-management report, and topology-aware
// placement.
func operatorOnlySpecs(kqOf func() *kueueProcess, mode kueueMode, flavor string) {
	It("takes over from Kueue's integration with jobs in flight: nothing requeued, nothing started twice", func(ctx SpecContext) {
		kq := kqOf()
		kq.switchTo(ctx, kueueBuiltin, nil)
		DeferCleanup(func(ctx SpecContext) { kq.switchTo(ctx, mode, nil) }, NodeTimeout(3*time.Minute))
		// 1+2 jobs: pod sets of different counts, so a Workload described
		// otherwise than Kueue's integration did would not match.
		ns := kueueQueues(ctx, "move", flavor, 3)
		w := startSuspendWatch(ctx, ns, []string{pytorch})
		Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "running", 3, nil))).To(Succeed())
		waitFor(ctx, pytorch, ns, "running", kubeflowv1.JobRunning)
		Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "queued", 3, exitAfter(0, "1s")))).To(Succeed())
		waitPending(ctx, pytorch, ns, "queued")
		running, err := workloadOf(ctx, pytorch, ns, "running")
		Expect(err).NotTo(HaveOccurred())
		queued, err := workloadOf(ctx, pytorch, ns, "queued")
		Expect(err).NotTo(HaveOccurred())
		podUIDs := map[string]string{}
		for _, p := range jobPods(ctx, ns, "running") {
			podUIDs[p.Name] = string(p.UID)
		}
		Expect(podUIDs).To(HaveLen(3))

		kq.switchTo(ctx, kueueOperator, nil)

		// Only the operator's integration can now finish the running job's
		// Workload and start the queued one.
		finishPods(ctx, ns, "running", 0)
		waitFor(ctx, pytorch, ns, "running", kubeflowv1.JobSucceeded)
		wl := waitWorkload(ctx, pytorch, ns, "running", "Finished")
		Expect(wl.GetUID()).To(Equal(running.GetUID()), "the running job's Workload was replaced")
		for _, p := range jobPods(ctx, ns, "running") {
			Expect(string(p.UID)).To(Equal(podUIDs[p.Name]), "pod %s was replaced", p.Name)
		}
		waitFor(ctx, pytorch, ns, "queued", kubeflowv1.JobSucceeded)
		wl = waitWorkload(ctx, pytorch, ns, "queued", "Finished")
		Expect(wl.GetUID()).To(Equal(queued.GetUID()), "the queued job was requeued with a new Workload")
		// Events are written asynchronously.
		Eventually(ctx, func(g Gomega) {
			g.Expect(jobEvents(ctx, ns, "queued", "Started")).To(ContainElement(HaveField("Source.Component", "training-operator-kueue")),
				"the queued job was started by the operator's integration")
		}).Should(Succeed())
		Expect(w.err()).NotTo(HaveOccurred())
		Expect(w.violations()).To(BeEmpty())
	})

	It("reports a kind that Kueue's own integration manages too, and leaves it to that one: one Workload, started once", func(ctx SpecContext) {
		kq := kqOf()
		kq.switchTo(ctx, kueueMode{Operator: true, BuiltinToo: true}, nil)
		DeferCleanup(func(ctx SpecContext) { kq.switchTo(ctx, mode, nil) }, NodeTimeout(3*time.Minute))
		ns := kueueQueues(ctx, "conflict", flavor, 4)
		w := startSuspendWatch(ctx, ns, []string{pytorch, kubeflowv1.MPIJobKind})
		Expect(k8s.Create(ctx, kueueJob(pytorch, ns, "both", 2, exitAfter(0, "1s")))).To(Succeed())
		// Kueue's integrations.frameworks never covers v1's MPIJob: it stays the operator's.
		Expect(k8s.Create(ctx, kueueJob(kubeflowv1.MPIJobKind, ns, "mpi", 2, exitAfter(0, "1s")))).To(Succeed())

		Eventually(ctx, func(g Gomega) {
			st, err := jobStatus(ctx, pytorch, ns, "both")
			g.Expect(err).NotTo(HaveOccurred())
			c := findCondition(st, kueueConflictCondition)
			g.Expect(c).NotTo(BeNil(), "conditions: %s", conditionsString(st))
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("kubeflow.org/pytorchjob"))
			g.Expect(c.Message).To(ContainSubstring("PyTorchJob.v1.kubeflow.org"))
			g.Expect(jobEvents(ctx, ns, "both", string(kueueConflictCondition))).To(ContainElement(HaveField("Type", corev1.EventTypeWarning)))
		}).Should(Succeed())
		waitFor(ctx, pytorch, ns, "both", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, pytorch, ns, "both", "Finished")
		waitFor(ctx, kubeflowv1.MPIJobKind, ns, "mpi", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, kubeflowv1.MPIJobKind, ns, "mpi", "Finished")
		// Kueue's recorder writes its events asynchronously: wait for its
		// Started before judging who started the job.
		Eventually(ctx, func(g Gomega) {
			g.Expect(jobEvents(ctx, ns, "both", "Started")).To(ContainElement(HaveField("Source.Component", Not(Equal("training-operator-kueue")))))
		}).Should(Succeed())
		Expect(jobEvents(ctx, ns, "both", "Started")).To(HaveEach(HaveField("Source.Component", Not(Equal("training-operator-kueue")))),
			"the operator's integration started a job Kueue's own manages")
		Expect(jobEvents(ctx, ns, "mpi", string(kueueConflictCondition))).To(BeEmpty())

		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kueueGroup.WithKind("WorkloadList"))
		Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(2), "one Workload per job")
		Expect(w.err()).NotTo(HaveOccurred())
		Expect(w.violations()).To(BeEmpty())
	})

	It("gives the quota of succeeded replicas back while the rest of the job runs", func(ctx SpecContext) {
		ns := kueueQueues(ctx, "reclaim", flavor, 3)
		job := kueueJob(pytorch, ns, "reclaim", 3, nil)
		testjobs.ReplicaSpecs(job)[kubeflowv1.PyTorchJobReplicaTypeWorker].Template.Annotations = exitAfter(0, "1s")
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(ctx, func(g Gomega) {
			wl, err := workloadOf(ctx, pytorch, ns, "reclaim")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(nested(wl, "status", "reclaimablePods")).To(ConsistOf(And(
				HaveKeyWithValue("name", "worker"), HaveKeyWithValue("count", BeNumerically("==", 2)))))
		}).Should(Succeed())
		st, err := jobStatus(ctx, pytorch, ns, "reclaim")
		Expect(err).NotTo(HaveOccurred())
		Expect(isTrue(st, kubeflowv1.JobSucceeded)).To(BeFalse(), "the master still runs")
		finishPods(ctx, ns, "reclaim", 0)
		waitFor(ctx, pytorch, ns, "reclaim", kubeflowv1.JobSucceeded)
		waitWorkload(ctx, pytorch, ns, "reclaim", "Finished")
	})

	Describe("topology-aware scheduling", Ordered, func() {
		const tasFlavor, topology = "e2e-tas", "e2e-topology"
		BeforeAll(func(ctx SpecContext) {
			topo := kueueObj("Topology", "", topology, map[string]any{"levels": []any{
				map[string]any{"nodeLabel": cluster.TopologyBlockLabel},
				map[string]any{"nodeLabel": cluster.TopologyRackLabel},
				map[string]any{"nodeLabel": "kubernetes.io/hostname"},
			}})
			rf := kueueObj("ResourceFlavor", "", tasFlavor, map[string]any{
				"nodeLabels":   map[string]any{"nvidia.com/gpu.product": cluster.GPUProduct},
				"topologyName": topology,
			})
			for _, o := range []*unstructured.Unstructured{topo, rf} {
				Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, o))).To(Succeed())
				DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed()) })
			}
		})

		// blockOf maps each pod of the job to its node's block.
		blocksOf := func(ctx context.Context, g Gomega, ns, job string, n int) (blocks map[string]string, nodes map[string]string) {
			pods := jobPods(ctx, ns, job)
			g.Expect(pods).To(HaveLen(n))
			blocks, nodes = map[string]string{}, map[string]string{}
			for _, p := range pods {
				g.Expect(p.Spec.NodeName).NotTo(BeEmpty(), "pod %s scheduled", p.Name)
				var node corev1.Node
				g.Expect(k8s.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &node)).To(Succeed())
				blocks[p.Name] = node.Labels[cluster.TopologyBlockLabel]
				nodes[p.Name] = p.Spec.NodeName
			}
			return blocks, nodes
		}
		distinct := func(m map[string]string) []string {
			var out []string
			for _, v := range m {
				if !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
			return out
		}

		It("places a Worker-only job with required topology block in one block, ranks next to each other", func(ctx SpecContext) {
			ns := kueueQueues(ctx, "tas-block", tasFlavor, 32)
			job := testjobs.MakeJAXJob("ranks", ns).Workers(3).Obj()
			job.Labels = map[string]string{kueueQueueLabel: kueueLocalQueue}
			rs := job.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker]
			rs.Template.Annotations = map[string]string{kueueRequiredTopology: cluster.TopologyBlockLabel}
			rs.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse("4")}
			Expect(k8s.Create(ctx, job)).To(Succeed())
			waitWorkload(ctx, kubeflowv1.JAXJobKind, ns, "ranks", "Admitted")
			Eventually(ctx, func(g Gomega) {
				blocks, nodes := blocksOf(ctx, g, ns, "ranks", 3)
				g.Expect(distinct(blocks)).To(HaveLen(1), "blocks of the pods: %v", blocks)
				// Kueue assigns the lowest ranks to the first domain: ranks 0 and 1 share a node.
				g.Expect(nodes["ranks-worker-0"]).To(Equal(nodes["ranks-worker-1"]), "nodes of the pods: %v", nodes)
			}).Should(Succeed())
			waitFor(ctx, kubeflowv1.JAXJobKind, ns, "ranks", kubeflowv1.JobRunning)
			finishPods(ctx, ns, "ranks", 0)
			waitFor(ctx, kubeflowv1.JAXJobKind, ns, "ranks", kubeflowv1.JobSucceeded)
		})

		It("places master and workers of one pod-set group in one block", func(ctx SpecContext) {
			ns := kueueQueues(ctx, "tas-group", tasFlavor, 32)
			job := testjobs.MakePyTorchJob("grouped", ns).Master(1).Workers(3).Obj()
			job.Labels = map[string]string{kueueQueueLabel: kueueLocalQueue}
			for rt, rs := range job.Spec.PyTorchReplicaSpecs {
				rs.Template.Annotations = map[string]string{
					kueueRequiredTopology: cluster.TopologyBlockLabel,
					kueuePodSetGroupName:  "all",
				}
				gpus := "3"
				if rt == kubeflowv1.PyTorchJobReplicaTypeMaster {
					gpus = "4"
				}
				rs.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse(gpus)}
			}
			Expect(k8s.Create(ctx, job)).To(Succeed())
			waitWorkload(ctx, pytorch, ns, "grouped", "Admitted")
			Eventually(ctx, func(g Gomega) {
				blocks, _ := blocksOf(ctx, g, ns, "grouped", 4)
				g.Expect(distinct(blocks)).To(HaveLen(1), "blocks of the pods: %v", blocks)
			}).Should(Succeed())
			waitFor(ctx, pytorch, ns, "grouped", kubeflowv1.JobRunning)
			finishPods(ctx, ns, "grouped", 0)
			waitFor(ctx, pytorch, ns, "grouped", kubeflowv1.JobSucceeded)
		})

		It("keeps a job larger than any block suspended, without pods", func(ctx SpecContext) {
			// The cluster holds it (32 GPUs, 20 asked), no block (16) does.
			waitFreeGPUs(ctx, 20)
			ns := kueueQueues(ctx, "tas-big", tasFlavor, 32)
			job := testjobs.MakeJAXJob("big", ns).Workers(5).Obj()
			job.Labels = map[string]string{kueueQueueLabel: kueueLocalQueue}
			rs := job.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker]
			rs.Template.Annotations = map[string]string{kueueRequiredTopology: cluster.TopologyBlockLabel}
			rs.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse("4")}
			Expect(k8s.Create(ctx, job)).To(Succeed())
			// The positive sign: Kueue tried and found no block to hold it.
			Eventually(ctx, func(g Gomega) {
				wl, err := workloadOf(ctx, kubeflowv1.JAXJobKind, ns, "big")
				g.Expect(err).NotTo(HaveOccurred())
				status, reason := kueueConditionReason(wl, "QuotaReserved")
				g.Expect(status).To(Equal("False"))
				g.Expect(reason).To(Equal("Pending"))
				g.Expect(fmt.Sprint(nested(wl, "status", "conditions"))).To(ContainSubstring("topology"))
			}).Should(Succeed())
			expectSuspendedWithoutPods(ctx, kubeflowv1.JAXJobKind, ns, "big")
		})
	})
}

const (
	kueueRequiredTopology = "kueue.x-k8s.io/podset-required-topology"
	kueuePodSetGroupName  = "kueue.x-k8s.io/podset-group-name"
	// kueueConflictCondition is the condition the operator sets on a job
	// both Kueue integrations would manage.
	kueueConflictCondition kubeflowv1.JobConditionType = "KueueIntegrationConflict"
)

// waitFreeGPUs waits until the fake GPU nodes have at least n GPUs that no
// scheduled, unfinished pod holds.
func waitFreeGPUs(ctx context.Context, n int64) {
	Eventually(ctx, func(g Gomega) {
		var nodes corev1.NodeList
		g.Expect(k8s.List(ctx, &nodes)).To(Succeed())
		var free int64
		for _, node := range nodes.Items {
			q := node.Status.Allocatable[cluster.GPUResource]
			free += q.Value()
		}
		var pods corev1.PodList
		g.Expect(k8s.List(ctx, &pods)).To(Succeed())
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, c := range p.Spec.Containers {
				q := c.Resources.Limits[cluster.GPUResource]
				free -= q.Value()
			}
		}
		g.Expect(free).To(BeNumerically(">=", n), "free GPUs")
	}).Should(Succeed())
}

// cpuWatch reads the CPU time the operator and Kueue spend over a spec
// (local mode only); a measurement reported, never asserted.
type cpuWatch struct {
	pids  [2]int
	start [2]float64
}

func startCPUWatch(kq *kueueProcess) *cpuWatch {
	if kq == nil || operator == nil {
		return nil
	}
	w := &cpuWatch{pids: [2]int{operator.Pid(), kq.proc.Pid()}}
	for i, pid := range w.pids {
		w.start[i], _ = childproc.CPUSeconds(pid)
	}
	return w
}

// perJob is ", CPU per job: operator X ms, Kueue Y ms", or "".
func (w *cpuWatch) perJob(jobs int) string {
	if w == nil {
		return ""
	}
	var ms [2]float64
	for i, pid := range w.pids {
		now, err := childproc.CPUSeconds(pid)
		if err != nil {
			return ""
		}
		ms[i] = (now - w.start[i]) * 1000 / float64(jobs)
	}
	return fmt.Sprintf(", CPU per job: operator %.1f ms, Kueue %.1f ms, both %.1f ms", ms[0], ms[1], ms[0]+ms[1])
}
