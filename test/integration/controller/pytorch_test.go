package controller_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

func envMap(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

var _ = Describe("PyTorchJob", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("creates pods and headless services with v1 names, labels, env and owner references", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("mnist", ns).Master(1).Workers(2).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())

		Eventually(func() []string { return podNames(jobPods(ctx, ns, "mnist")) }, timeout, interval).
			Should(Equal([]string{"mnist-master-0", "mnist-worker-0", "mnist-worker-1"}))
		for _, p := range jobPods(ctx, ns, "mnist") {
			Expect(p.OwnerReferences).To(HaveLen(1))
			ref := p.OwnerReferences[0]
			Expect(ref.Kind).To(Equal("PyTorchJob"))
			Expect(ref.APIVersion).To(Equal("kubeflow.org/v1"))
			Expect(*ref.Controller).To(BeTrue())
			Expect(ref.UID).To(Equal(getPyTorchJob(ctx, ns, "mnist").UID))
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "pytorchjob-controller"))
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.JobNameLabel, "mnist"))
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyOnFailure))
			e := envMap(p.Spec.Containers[0])
			Expect(e).To(HaveKeyWithValue("MASTER_ADDR", "mnist-master-0"))
			Expect(e).To(HaveKeyWithValue("MASTER_PORT", "23456"))
			Expect(e).To(HaveKeyWithValue("WORLD_SIZE", "3"))
			Expect(e).To(HaveKeyWithValue("PYTHONUNBUFFERED", "1"))
		}
		w1 := jobPods(ctx, ns, "mnist")[2]
		Expect(w1.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaTypeLabel, "worker"))
		Expect(w1.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaIndexLabel, "1"))
		Expect(envMap(w1.Spec.Containers[0])).To(HaveKeyWithValue("RANK", "2"))
		Expect(w1.Spec.InitContainers).To(HaveLen(1))
		Expect(w1.Spec.InitContainers[0].Name).To(Equal("init-pytorch"))
		m0 := jobPods(ctx, ns, "mnist")[0]
		Expect(m0.Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))

		var svcs corev1.ServiceList
		Eventually(func() int {
			Expect(k8s.List(ctx, &svcs, client.InNamespace(ns))).To(Succeed())
			return len(svcs.Items)
		}, timeout, interval).Should(Equal(3))
		for _, s := range svcs.Items {
			Expect(s.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
			Expect(s.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "pytorchjob-port", Port: 23456, Protocol: corev1.ProtocolTCP, TargetPort: intstrFromInt(23456)}}))
			Expect(s.Spec.Selector).To(HaveKeyWithValue(kubeflowv1.ReplicaIndexLabel, s.Labels[kubeflowv1.ReplicaIndexLabel]))
		}

		j := eventuallyPyTorchCondition(ctx, ns, "mnist", kubeflowv1.JobRunning)
		Expect(j.Status.StartTime).NotTo(BeNil())
		// Count-only changes are batched (engine.DefaultStatusBatchWindow), so
		// workers that start after the master show up shortly after Running.
		Eventually(func() int32 {
			j = eventuallyPyTorchCondition(ctx, ns, "mnist", kubeflowv1.JobRunning)
			return j.Status.ReplicaStatuses["Worker"].Active
		}, timeout, interval).Should(Equal(int32(2)))
		Expect(j.Status.ReplicaStatuses["Worker"].Selector).To(Equal(
			"training.kubeflow.org/job-name=mnist,training.kubeflow.org/operator-name=pytorchjob-controller,training.kubeflow.org/replica-type=worker"))
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Running=True"}))

		// v1's reasons, one event per kind of child for the whole batch.
		Eventually(func() []string { return eventNotes(ctx, ns, "SuccessfulCreatePod") }, timeout, interval).
			Should(Equal([]string{"Created 3 pods: mnist-master-0, mnist-worker-0, mnist-worker-1"}))
		Eventually(func() []string { return eventNotes(ctx, ns, "SuccessfulCreateService") }, timeout, interval).
			Should(Equal([]string{"Created 3 services: mnist-master-0, mnist-worker-0, mnist-worker-1"}))
	})

	// The operator caches Services as metadata only, half the memory of a
	// typed Service; a typed informer beside it would undo that.
	It("caches the Services it creates as metadata only", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("meta", ns).Master(1).Workers(1).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "meta")) }, timeout, interval).
			Should(Equal([]string{"meta-master-0", "meta-worker-0"}))
		var metas metav1.PartialObjectMetadataList
		metas.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
		Eventually(func() int {
			Expect(operator.Cache.List(ctx, &metas, client.InNamespace(ns))).To(Succeed())
			return len(metas.Items)
		}, timeout, interval).Should(Equal(2))
		for _, m := range metas.Items {
			Expect(m.Labels).To(HaveKey(kubeflowv1.ReplicaIndexLabel))
		}
		err := operator.Cache.List(ctx, &corev1.ServiceList{}, client.InNamespace(ns))
		var notCached *cache.ErrResourceNotCached
		Expect(errors.As(err, &notCached)).To(BeTrue(), "the operator has a typed Service informer: %v", err)
	})

	It("succeeds when the master succeeds and applies cleanPodPolicy", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("ok", ns).Master(1).Workers(2).CleanPodPolicy(kubeflowv1.CleanPodPolicyRunning).
			Annotation("Master", cluster.ExitCodeAnnotation, "0").Annotation("Master", cluster.ExitDelayAnnotation, "2s").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := eventuallyPyTorchCondition(ctx, ns, "ok", kubeflowv1.JobSucceeded)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Running=False", "Succeeded=True"}))
		Expect(j.Status.CompletionTime).NotTo(BeNil())
		Expect(condition(j.Status, kubeflowv1.JobSucceeded).Reason).To(Equal("PyTorchJobSucceeded"))
		Expect(condition(j.Status, kubeflowv1.JobSucceeded).Message).To(Equal("PyTorchJob ok is successfully completed."))
		// Running workers are deleted, the succeeded master is kept.
		Eventually(func() []string { return livePodNames(ctx, ns, "ok") }, timeout, interval).Should(Equal([]string{"ok-master-0"}))
	})

	It("keeps pods of a succeeded job with cleanPodPolicy None and removes all with All", func(ctx context.Context) {
		none := testjobs.MakePyTorchJob("keep", ns).Master(1).Workers(1).CleanPodPolicy(kubeflowv1.CleanPodPolicyNone).
			Annotation("Master", cluster.ExitCodeAnnotation, "0").Obj()
		all := testjobs.MakePyTorchJob("drop", ns).Master(1).Workers(1).CleanPodPolicy(kubeflowv1.CleanPodPolicyAll).
			Annotation("Master", cluster.ExitCodeAnnotation, "0").Obj()
		Expect(k8s.Create(ctx, none)).To(Succeed())
		Expect(k8s.Create(ctx, all)).To(Succeed())
		eventuallyPyTorchCondition(ctx, ns, "keep", kubeflowv1.JobSucceeded)
		eventuallyPyTorchCondition(ctx, ns, "drop", kubeflowv1.JobSucceeded)
		Eventually(func() []string { return livePodNames(ctx, ns, "drop") }, timeout, interval).Should(BeEmpty())
		Consistently(func() []string { return livePodNames(ctx, ns, "keep") }, 2*time.Second, interval).
			Should(Equal([]string{"keep-master-0", "keep-worker-0"}))
	})

	DescribeTable("restart policies",
		func(ctx context.Context, policy kubeflowv1.RestartPolicy, code int, wantRestart bool) {
			job := testjobs.MakePyTorchJob("rp", ns).Master(1).Workers(1).RestartPolicy(policy).Obj()
			Expect(k8s.Create(ctx, job)).To(Succeed())
			pods := waitPodsRunning(ctx, ns, "rp", 2)
			oldUID := pods[1].UID
			incarnations := watchPodIncarnations(ctx, ns, "rp-worker-0")
			finishPod(ctx, ns, "rp-worker-0", code)
			if wantRestart {
				// Restarting is transient (Running replaces it once the master is
				// seen active again), so check its durable traces: the event,
				// the counter and the recreated pod.
				Eventually(func() []string { return eventNotes(ctx, ns, "PyTorchJobRestarting") }, timeout, interval).
					Should(ContainElement(ContainSubstring("Pod rp-worker-0: container pytorch exited with code")))
				Eventually(func(g Gomega) {
					var p corev1.Pod
					g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rp-worker-0"}, &p)).To(Succeed())
					g.Expect(p.UID).NotTo(Equal(oldUID))
					g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
					// Running again, written by a pass that saw the replacement run.
					j := getPyTorchJob(ctx, ns, "rp")
					c := condition(j.Status, kubeflowv1.JobRunning)
					g.Expect(c).NotTo(BeNil())
					g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
					g.Expect(condition(j.Status, kubeflowv1.JobFailed)).To(BeNil())
					// One restart per pod of the name that was replaced: the exit,
					// plus one if KWOK's late DELETE by name (see the deletion
					// table below) killed a replacement. Never counted twice.
					g.Expect(j.Status.RestartCount).To(Equal(int32(incarnations()-1)), "incarnations of rp-worker-0: %d", incarnations())
				}, timeout, interval).Should(Succeed())
				return
			}
			j := eventuallyPyTorchCondition(ctx, ns, "rp", kubeflowv1.JobFailed)
			msg := condition(j.Status, kubeflowv1.JobFailed).Message
			Expect(msg).To(HavePrefix("PyTorchJob rp is failed because 1 Worker replica(s) failed."))
			Expect(msg).To(ContainSubstring("rp-worker-0: container pytorch exited with code"))
		},
		Entry("OnFailure, exit 1 restarts", kubeflowv1.RestartPolicyOnFailure, 1, true),
		Entry("OnFailure, exit 137 restarts", kubeflowv1.RestartPolicyOnFailure, 137, true),
		Entry("Always, exit 1 restarts", kubeflowv1.RestartPolicyAlways, 1, true),
		Entry("Always, exit 137 restarts", kubeflowv1.RestartPolicyAlways, 137, true),
		Entry("ExitCode, exit 1 fails", kubeflowv1.RestartPolicyExitCode, 1, false),
		Entry("ExitCode, exit 137 restarts", kubeflowv1.RestartPolicyExitCode, 137, true),
		Entry("Never, exit 1 fails", kubeflowv1.RestartPolicyNever, 1, false),
		Entry("Never, exit 137 fails", kubeflowv1.RestartPolicyNever, 137, false),
	)

	DescribeTable("a pod deleted by someone else is recreated and counted",
		func(ctx context.Context, policy kubeflowv1.RestartPolicy, grace *int64) {
			job := testjobs.MakePyTorchJob("del", ns).Master(1).Workers(1).RestartPolicy(policy).Obj()
			Expect(k8s.Create(ctx, job)).To(Succeed())
			pods := waitPodsRunning(ctx, ns, "del", 2)
			incarnations := watchPodIncarnations(ctx, ns, "del-worker-0")
			// Exactly this pod: a DELETE by name that lands late (a client
			// retry) would also delete its replacement.
			opts := []client.DeleteOption{client.Preconditions{UID: &pods[1].UID}}
			if grace != nil {
				opts = append(opts, client.GracePeriodSeconds(*grace))
			}
			Expect(k8s.Delete(ctx, &pods[1], opts...)).To(Succeed())
			Eventually(func(g Gomega) {
				var p corev1.Pod
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "del-worker-0"}, &p)).To(Succeed())
				g.Expect(p.UID).NotTo(Equal(pods[1].UID))
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
				count := getPyTorchJob(ctx, ns, "del").Status.RestartCount
				// Even a deletion with grace 0 first writes the pod with a
				// deletionTimestamp, and KWOK answers every such pod with a
				// DELETE by name, which may land after the replacement took the
				// name: that kills the replacement, rightly one more restart.
				// So every pod of the name that was replaced is one restart.
				g.Expect(count).To(BeNumerically(">=", 1))
				g.Expect(count).To(Equal(int32(incarnations() - 1)))
			}, timeout, interval).Should(Succeed())
			Expect(condition(getPyTorchJob(ctx, ns, "del").Status, kubeflowv1.JobFailed)).To(BeNil())
		},
		Entry("OnFailure, deleted at once", kubeflowv1.RestartPolicyOnFailure, ptr.To[int64](0)),
		Entry("ExitCode, deleted at once", kubeflowv1.RestartPolicyExitCode, ptr.To[int64](0)),
		Entry("Never, deleted at once", kubeflowv1.RestartPolicyNever, ptr.To[int64](0)),
		Entry("OnFailure, deleted gracefully", kubeflowv1.RestartPolicyOnFailure, nil),
		Entry("ExitCode, deleted gracefully", kubeflowv1.RestartPolicyExitCode, nil),
		Entry("Never, deleted gracefully", kubeflowv1.RestartPolicyNever, nil),
	)

	It("fails with v1's message once backoffLimit is reached", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("bo", ns).Master(1).Workers(1).BackoffLimit(2).CleanPodPolicy(kubeflowv1.CleanPodPolicyAll).
			RestartPolicy(kubeflowv1.RestartPolicyOnFailure).
			Annotation("Worker", cluster.ExitCodeAnnotation, "1").Annotation("Worker", cluster.ExitDelayAnnotation, "500ms").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := eventuallyPyTorchCondition(ctx, ns, "bo", kubeflowv1.JobFailed)
		c := condition(j.Status, kubeflowv1.JobFailed)
		Expect(c.Reason).To(Equal("PyTorchJobFailed"))
		Expect(c.Message).To(Equal("Job bo has failed because it has reached the specified backoff limit"))
		Expect(j.Status.RestartCount).To(Equal(int32(2)))
		Eventually(func() []string { return livePodNames(ctx, ns, "bo") }, timeout, interval).Should(BeEmpty())
	})

	It("fails on activeDeadlineSeconds through a timer, with no other event", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("ads", ns).Master(1).ActiveDeadlineSeconds(5).CleanPodPolicy(kubeflowv1.CleanPodPolicyAll).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "ads", 1)
		j := eventuallyPyTorchCondition(ctx, ns, "ads", kubeflowv1.JobFailed)
		failed := condition(j.Status, kubeflowv1.JobFailed)
		Expect(failed.Reason).To(Equal("PyTorchJobFailed"))
		Expect(failed.Message).To(Equal("Job ads has failed because it was active longer than specified deadline"))
		// The cause is the deadline, not a pod: nothing failed or restarted.
		Expect(j.Status.RestartCount).To(BeZero())
		Expect(j.Status.ReplicaStatuses).To(HaveKeyWithValue(kubeflowv1.ReplicaType("Master"), HaveField("Failed", BeZero())))
		// Not before the deadline, counted from startTime. No resync can have
		// done it within the wait (controller-runtime's default is 10 h) and
		// the running pod does not change, so only the deadline timer fails it.
		Expect(j.Status.StartTime).NotTo(BeNil())
		deadline := j.Status.StartTime.Add(5 * time.Second)
		Expect(j.Status.CompletionTime.Time).NotTo(BeTemporally("<", deadline))
		Expect(failed.LastTransitionTime.Time).NotTo(BeTemporally("<", deadline))
		Eventually(func() []string { return livePodNames(ctx, ns, "ads") }, timeout, interval).Should(BeEmpty())
	})

	It("deletes a finished job after ttlSecondsAfterFinished", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("ttl", ns).Master(1).TTLSecondsAfterFinished(3).
			Annotation("Master", cluster.ExitCodeAnnotation, "0").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		eventuallyPyTorchCondition(ctx, ns, "ttl", kubeflowv1.JobSucceeded)
		Eventually(func() bool {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ttl"}, &kubeflowv1.PyTorchJob{})
			return apierrors.IsNotFound(err)
		}, timeout, interval).Should(BeTrue())
		// Children go by garbage collection.
		Eventually(func() []string { return livePodNames(ctx, ns, "ttl") }, timeout, interval).Should(BeEmpty())
	})

	It("suspends at creation, suspends while running and resumes", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("sus", ns).Master(1).Workers(1).Suspend(true).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := eventuallyPyTorchCondition(ctx, ns, "sus", kubeflowv1.JobSuspended)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Suspended=True"}))
		Expect(j.Status.StartTime).To(BeNil())
		Consistently(func() []string { return podNames(jobPods(ctx, ns, "sus")) }, 2*time.Second, interval).Should(BeEmpty())

		// Resume; Kueue-style template mutation on resume must apply.
		updatePyTorchJob(ctx, ns, "sus", func(j *kubeflowv1.PyTorchJob) {
			j.Spec.RunPolicy.Suspend = ptr.To(false)
			j.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "gpu-node-1"}
		})
		j = eventuallyPyTorchCondition(ctx, ns, "sus", kubeflowv1.JobRunning)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Suspended=False", "Running=True"}))
		Expect(condition(j.Status, kubeflowv1.JobSuspended).Reason).To(Equal("PyTorchJobResumed"))
		firstStart := j.Status.StartTime
		Expect(firstStart).NotTo(BeNil())
		var w corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sus-worker-0"}, &w)).To(Succeed())
		Expect(w.Spec.NodeName).To(Equal("gpu-node-1"))

		// Suspend while running: everything goes, Running=False.
		updatePyTorchJob(ctx, ns, "sus", func(j *kubeflowv1.PyTorchJob) {
			j.Spec.RunPolicy.Suspend = ptr.To(true)
		})
		j = eventuallyPyTorchCondition(ctx, ns, "sus", kubeflowv1.JobSuspended)
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Running=False", "Suspended=True"}))
		Eventually(func() []string { return livePodNames(ctx, ns, "sus") }, timeout, interval).Should(BeEmpty())
		Eventually(func() int32 { return getPyTorchJob(ctx, ns, "sus").Status.ReplicaStatuses["Worker"].Active }, timeout, interval).Should(BeZero())

		time.Sleep(1100 * time.Millisecond) // startTime has second precision
		updatePyTorchJob(ctx, ns, "sus", func(j *kubeflowv1.PyTorchJob) {
			j.Spec.RunPolicy.Suspend = ptr.To(false)
		})
		j = eventuallyPyTorchCondition(ctx, ns, "sus", kubeflowv1.JobRunning)
		Expect(j.Status.StartTime.After(firstStart.Time)).To(BeTrue(), "startTime is reset on resume")
	})

	It("leaves jobs managed by MultiKueue alone", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("mk", ns).Master(1).ManagedBy(kubeflowv1.MultiKueueController).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		// The pass that leaves the job alone counts it as created (v1 counted
		// every job): only then is its absence of status and pods telling.
		Eventually(func() float64 { return jobsCreated(ns) }, timeout, interval).Should(Equal(1.0))
		Consistently(func(g Gomega) {
			j := getPyTorchJob(ctx, ns, "mk")
			g.Expect(j.Status.Conditions).To(BeEmpty())
			g.Expect(jobPods(ctx, ns, "mk")).To(BeEmpty())
		}, 3*time.Second, interval).Should(Succeed())
	})

	It("scales workers up and down by index", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("sc", ns).Master(1).Workers(2).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "sc", 3)
		scale := func(n int32) {
			Eventually(func() error {
				j := getPyTorchJob(ctx, ns, "sc")
				j.Spec.PyTorchReplicaSpecs["Worker"].Replicas = ptr.To(n)
				return k8s.Update(ctx, j)
			}, timeout, interval).Should(Succeed())
		}
		scale(4)
		Eventually(func() []string { return livePodNames(ctx, ns, "sc") }, timeout, interval).
			Should(Equal([]string{"sc-master-0", "sc-worker-0", "sc-worker-1", "sc-worker-2", "sc-worker-3"}))
		scale(1)
		Eventually(func() []string { return livePodNames(ctx, ns, "sc") }, timeout, interval).
			Should(Equal([]string{"sc-master-0", "sc-worker-0"}))
		Eventually(func() []string {
			var sl corev1.ServiceList
			Expect(k8s.List(ctx, &sl, client.InNamespace(ns))).To(Succeed())
			var names []string
			for _, s := range sl.Items {
				if s.DeletionTimestamp == nil {
					names = append(names, s.Name)
				}
			}
			return names
		}, timeout, interval).Should(ConsistOf("sc-master-0", "sc-worker-0"))
		Expect(condition(getPyTorchJob(ctx, ns, "sc").Status, kubeflowv1.JobFailed)).To(BeNil())
	})

	It("manages the elastic HPA: created, repaired on drift, deleted on suspend", func(ctx context.Context) {
		job := testjobs.MakePyTorchJob("el", ns).Workers(2).Elastic(1, 4, testjobs.CPUMetric(80)).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		var hpa autoscalingv2.HorizontalPodAutoscaler
		key := client.ObjectKey{Namespace: ns, Name: "el"}
		Eventually(func() error { return k8s.Get(ctx, key, &hpa) }, timeout, interval).Should(Succeed())
		Expect(hpa.Spec.MaxReplicas).To(Equal(int32(4)))
		Expect(*hpa.Spec.MinReplicas).To(Equal(int32(1)))
		Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{Kind: "PyTorchJob", Name: "el", APIVersion: "kubeflow.org/v1"}))

		setHPAMaxReplicas(ctx, key, 99)
		Eventually(func() int32 {
			Expect(k8s.Get(ctx, key, &hpa)).To(Succeed())
			return hpa.Spec.MaxReplicas
		}, timeout, interval).Should(Equal(int32(4)))

		updatePyTorchJob(ctx, ns, "el", func(j *kubeflowv1.PyTorchJob) {
			j.Spec.RunPolicy.Suspend = ptr.To(true)
		})
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, key, &hpa)) }, timeout, interval).Should(BeTrue())
	})

	It("neither duplicates nor replaces pods when the operator restarts mid-job", func(ctx context.Context) {
		// Pod names are fixed, so a duplicate never shows as one pod more: it
		// is a create answered 409 AlreadyExists, or a pod replaced (a new
		// UID). Every operator process of this spec records its requests.
		var logs []*util.RequestLog
		restart := func(stagger time.Duration) {
			GinkgoHelper()
			Expect(operator.Stop()).To(Succeed())
			cfg, log := util.RecordRequests(restCfg, ns)
			if stagger > 0 {
				// The n-th pod create waits n staggers before it is sent, so
				// the process is stopped with creates still to come (a stop
				// cancels the waiting ones: they never reach the server).
				var n atomic.Int64
				cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
					return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
						if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/pods") {
							select {
							case <-time.After(time.Duration(n.Add(1)) * stagger):
							case <-req.Context().Done():
								return nil, req.Context().Err()
							}
						}
						return rt.RoundTrip(req)
					})
				})
			}
			var err error
			operator, err = util.StartOperator(cfg, util.DefaultConfiguration())
			Expect(err).NotTo(HaveOccurred())
			logs = append(logs, log)
		}
		uids := watchPodUIDs(ctx, ns)
		restart(300 * time.Millisecond) // so that the creates before the restart under test are recorded too

		job := testjobs.MakePyTorchJob("rs", ns).Master(1).Workers(8).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		// Stop the operator while it is creating pods, then start a fresh one.
		Eventually(func() int { return len(jobPods(ctx, ns, "rs")) }, timeout, 20*time.Millisecond).Should(BeNumerically(">", 0))
		restart(0)
		waitPodsRunning(ctx, ns, "rs", 9)
		reconciledSince(ctx, ns, "rs")
		running := podUIDs(jobPods(ctx, ns, "rs"))
		Expect(running).To(HaveLen(9))

		// And once more with every pod running.
		restart(0)
		reconciledSince(ctx, ns, "rs")

		Expect(podUIDs(jobPods(ctx, ns, "rs"))).To(Equal(running), "pods replaced")
		Expect(uids()).To(HaveLen(9), "pods ever created in the namespace")
		childPost := func(r util.Request) bool {
			return r.Method == http.MethodPost && (r.Resource() == "pods" || r.Resource() == "services")
		}
		for i, log := range logs {
			// Answered: 201; no answer: a create cut off by the stop.
			Expect(log.Matching(func(r util.Request) bool { return childPost(r) && r.Code != 0 && r.Code != http.StatusCreated })).
				To(BeEmpty(), "operator process %d", i+1)
			Expect(log.Matching(func(r util.Request) bool {
				return r.Method == http.MethodDelete && strings.HasPrefix(r.Resource(), "pods/")
			})).To(BeEmpty(), "operator process %d", i+1)
		}
		Expect(logs[2].Matching(childPost)).To(BeEmpty(), "the process started with every pod running")
		// Each of the 9 pods was created once, by the first process or by
		// the one started while it was creating them; and the restart did
		// come mid-creation, else it tested nothing of what it claims.
		podCreated := func(r util.Request) bool {
			return r.Method == http.MethodPost && r.Resource() == "pods" && r.Code == http.StatusCreated
		}
		before, after := logs[0].Count(podCreated), logs[1].Count(podCreated)
		GinkgoWriter.Printf("pods created before the restart %d, after it %d\n", before, after)
		Expect(before+after).To(Equal(9), "pods created before (%d) and after (%d) the restart", before, after)
		Expect(after).To(BeNumerically(">", 0), "every pod was created before the restart: it was not mid-creation")
		j := eventuallyPyTorchCondition(ctx, ns, "rs", kubeflowv1.JobRunning)
		Expect(j.Status.RestartCount).To(BeZero())
		Expect(conditionTypes(j.Status)).To(Equal([]string{"Created=True", "Running=True"}))
	})

	It("does not record its pod events again when the operator restarts", func(ctx context.Context) {
		// Workers exit 0 while the master runs on: the job runs with pod
		// events (ExitedWithCode) recorded by this operator process.
		job := testjobs.MakePyTorchJob("pe", ns).Master(1).Workers(2).
			Annotation("Worker", cluster.ExitCodeAnnotation, "0").Annotation("Worker", cluster.ExitDelayAnnotation, "200ms").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		// Both exits named, once each, in one event or two (however the
		// passes fell): nothing of them is still to be recorded.
		Eventually(func(g Gomega) {
			rs := getPyTorchJob(ctx, ns, "pe").Status.ReplicaStatuses["Worker"]
			g.Expect(rs).NotTo(BeNil())
			g.Expect(rs.Succeeded).To(Equal(int32(2)))
			g.Expect(exitedOK(ctx, ns, "pe")).To(ConsistOf("pe-worker-0", "pe-worker-1"))
		}, timeout, interval).Should(Succeed())
		before := jobEvents(ctx, ns, "pe", "")

		Expect(operator.Stop()).To(Succeed())
		cfg, log := util.RecordRequests(restCfg, ns)
		var err error
		operator, err = util.StartOperator(cfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		// The new process's first pass over the running job has pod events
		// to plan and no memo of them: it reads what was recorded (once).
		uid := string(getPyTorchJob(ctx, ns, "pe").UID)
		readsRecorded := func(r util.Request) bool {
			return r.Method == http.MethodGet && r.Resource() == "events" && r.Code == http.StatusOK &&
				strings.Contains(r.Query.Get("fieldSelector"), uid)
		}
		Eventually(func() int { return log.Count(readsRecorded) }, timeout, interval).Should(Equal(1))
		reconciledSince(ctx, ns, "pe")
		// The passes' events are sent after them, asynchronously.
		eventWrites := func(r util.Request) bool {
			return strings.HasPrefix(r.Resource(), "events") && (r.Method == http.MethodPost || r.Method == http.MethodPatch)
		}
		Consistently(func(g Gomega) {
			g.Expect(jobEvents(ctx, ns, "pe", "")).To(Equal(before))
			g.Expect(log.Matching(eventWrites)).To(BeEmpty())
		}, 2*time.Second, interval).Should(Succeed())
		Expect(log.Count(readsRecorded)).To(Equal(1))
		Expect(condition(getPyTorchJob(ctx, ns, "pe").Status, kubeflowv1.JobRunning)).NotTo(BeNil())
	})

	It("reports a child name held by another job as a condition, not a hot loop", func(ctx context.Context) {
		// The operator's requests are recorded: each pass tries the create and
		// is answered 409.
		Expect(operator.Stop()).To(Succeed())
		cfg, log := util.RecordRequests(restCfg, ns)
		var err error
		operator, err = util.StartOperator(cfg, util.DefaultConfiguration())
		Expect(err).NotTo(HaveOccurred())
		refused := func(r util.Request) bool {
			return r.Method == http.MethodPost && r.Resource() == "pods" && r.Code == http.StatusConflict
		}
		blocker := testjobs.MakePod("clash-master-0", ns).Obj()
		blocker.Spec.Containers = []corev1.Container{{Name: "c", Image: "x"}}
		Expect(k8s.Create(ctx, blocker)).To(Succeed())
		Expect(k8s.Create(ctx, testjobs.MakePyTorchJob("clash", ns).Master(1).Obj())).To(Succeed())
		j := eventuallyPyTorchCondition(ctx, ns, "clash", "ChildConflict")
		Expect(condition(j.Status, "ChildConflict").Message).To(ContainSubstring("pod clash-master-0"))
		// The condition came from a refused create (the recording sees the
		// operator's passes); then the next try waits for the slow retry:
		// at most one more, from a late child event's pass, where a hot
		// loop would try every few milliseconds.
		tries := log.Count(refused)
		Expect(tries).To(BeNumerically(">", 0), "no refused create recorded")
		Consistently(func() int { return log.Count(refused) }, 3*time.Second, interval).Should(BeNumerically("<=", tries+1))
		Expect(k8s.Delete(ctx, blocker, client.GracePeriodSeconds(0))).To(Succeed())
	})

	It("runs the seed PyTorchJob to Succeeded", func(ctx context.Context) {
		seed := util.SeedPyTorchJob(ns)
		for _, rt := range []kubeflowv1.ReplicaType{"Master", "Worker"} {
			a := map[string]string{cluster.ExitCodeAnnotation: "0", cluster.ExitDelayAnnotation: "2s"}
			seed.Spec.PyTorchReplicaSpecs[rt].Template.Annotations = a
		}
		Expect(k8s.Create(ctx, seed)).To(Succeed())
		j := eventuallyPyTorchCondition(ctx, ns, "pytorch-mnist", kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		Expect(j.Status.ReplicaStatuses["Master"].Succeeded).To(Equal(int32(1)))
	})
})

// jobsCreated is the operator's training_operator_jobs_created_total over
// the namespace's jobs. A job managed by another controller is counted by
// the pass that decides to leave it alone.
func jobsCreated(ns string) float64 {
	GinkgoHelper()
	n, err := util.MetricSum("training_operator_jobs_created_total", map[string]string{"job_namespace": ns})
	Expect(err).NotTo(HaveOccurred())
	return n
}

// reconciledSince waits until the operator has reconciled the unfinished
// PyTorchJob since the call. It writes a stale ChildConflict condition into
// the job's status, which a pass over a job whose child names are free
// removes, and waits for the removal. Twice: the second pass starts only
// once the first, with what follows its status write (pod events, pod
// deletions), has ended, as a job is never reconciled twice at once.
func reconciledSince(ctx context.Context, ns, name string) {
	GinkgoHelper()
	for range 2 {
		Eventually(func(g Gomega) {
			j := getPyTorchJob(ctx, ns, name)
			g.Expect(condition(j.Status, "ChildConflict")).To(BeNil())
			now := metav1.Now()
			j.Status.Conditions = append(j.Status.Conditions, kubeflowv1.JobCondition{
				Type: "ChildConflict", Status: corev1.ConditionTrue, Reason: "ReconcileProbe",
				Message: "written by the test, removed by the operator", LastUpdateTime: now, LastTransitionTime: now,
			})
			g.Expect(k8s.Status().Update(ctx, j)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func() *kubeflowv1.JobCondition {
			return condition(getPyTorchJob(ctx, ns, name).Status, "ChildConflict")
		}, timeout, interval).Should(BeNil(), "the operator did not reconcile %s", name)
	}
}

// podUIDs maps live pods' names to their UIDs.
func podUIDs(pods []corev1.Pod) map[string]types.UID {
	out := map[string]types.UID{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.UID
		}
	}
	return out
}

// watchPodUIDs collects the UIDs of every pod of the namespace (narrowed
// by opts) from now on, until ctx ends.
func watchPodUIDs(ctx context.Context, ns string, opts ...client.ListOption) func() []types.UID {
	wc, err := client.NewWithWatch(restCfg, client.Options{Scheme: util.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &corev1.PodList{}, append([]client.ListOption{client.InNamespace(ns)}, opts...)...)
	Expect(err).NotTo(HaveOccurred())
	var mu sync.Mutex
	seen := map[types.UID]bool{}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if pod, isPod := e.Object.(*corev1.Pod); isPod {
					mu.Lock()
					seen[pod.UID] = true
					mu.Unlock()
				}
			}
		}
	}()
	return func() []types.UID {
		mu.Lock()
		defer mu.Unlock()
		out := make([]types.UID, 0, len(seen))
		for u := range seen {
			out = append(out, u)
		}
		return out
	}
}

// roundTripperFunc is an http.RoundTripper from a function.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
