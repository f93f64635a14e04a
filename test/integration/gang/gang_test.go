// Package gang_test runs gang scheduling end to end on a real local control
// plane (harness/cluster): Volcano and scheduler-plugins PodGroups (their CRDs
// installed during the test, their schedulers stood in for by kube-scheduler
// profiles), and the native Kubernetes 1.37 Workload/PodGroup with the real
// GangScheduling plugin on 2 nodes x 8 fake GPUs.
package gang_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	schedpluginsv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/scheduling/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

const (
	timeout  = 90 * time.Second
	interval = 250 * time.Millisecond

	schedulerPluginsName = configv1alpha1.DefaultSchedulerPluginsSchedulerName
)

// suite is one cluster with the operator running in-process.
type suite struct {
	t       *testing.T
	env     *cluster.Cluster
	restCfg *rest.Config
	k8s     client.Client
}

func start(t *testing.T, opts cluster.Options, cfg *configv1alpha1.Configuration) *suite {
	t.Helper()
	env := util.StartTestCluster(t, opts)
	util.CaptureOperatorLogs(t, 400)
	restCfg := env.RESTConfig()
	restCfg.QPS, restCfg.Burst = 500, 1000
	s := util.Scheme()
	if err := gang.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(restCfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	op, err := util.StartOperator(restCfg, cfg)
	if err != nil {
		t.Fatalf("starting the operator: %v", err)
	}
	t.Cleanup(func() {
		if err := op.Stop(); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})
	return &suite{t: t, env: env, restCfg: restCfg, k8s: k8s}
}

// installExternalCRD installs one generated CRD of config/crd/external.
func (s *suite) installExternalCRD(ctx context.Context, file string) {
	s.t.Helper()
	dir := s.t.TempDir()
	data, err := os.ReadFile(filepath.Join(util.RepoRoot(), "config", "crd", "external", file))
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := util.InstallCRDs(ctx, s.restCfg, dir); err != nil {
		s.t.Fatal(err)
	}
}

func (s *suite) namespace(ctx context.Context) string {
	s.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gang-" + rand.String(6)}}
	if err := s.k8s.Create(ctx, ns); err != nil {
		s.t.Fatal(err)
	}
	return ns.Name
}

func (s *suite) pods(ctx context.Context, g Gomega, ns, job string) []corev1.Pod {
	var pl corev1.PodList
	g.Expect(s.k8s.List(ctx, &pl, client.InNamespace(ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job})).To(Succeed())
	return pl.Items
}

func (s *suite) job(ctx context.Context, g Gomega, ns, name string) *kubeflowv1.PyTorchJob {
	var j kubeflowv1.PyTorchJob
	g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &j)).To(Succeed())
	return &j
}

// updateJob applies mutate to the job, retrying on conflicts with the
// operator's status writes.
func (s *suite) updateJob(ctx context.Context, g Gomega, ns, name string, mutate func(*kubeflowv1.PyTorchJob)) {
	g.Eventually(func(g Gomega) {
		j := s.job(ctx, g, ns, name)
		mutate(j)
		g.Expect(s.k8s.Update(ctx, j)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

func condition(j *kubeflowv1.PyTorchJob, t kubeflowv1.JobConditionType) *kubeflowv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func (s *suite) createdMessage(ctx context.Context, g Gomega, ns, name string) string {
	c := condition(s.job(ctx, g, ns, name), kubeflowv1.JobCreated)
	g.Expect(c).NotTo(BeNil())
	return c.Message
}

func (s *suite) awaitCondition(ctx context.Context, g Gomega, ns, name string, t kubeflowv1.JobConditionType) {
	g.Eventually(func(g Gomega) {
		c := condition(s.job(ctx, g, ns, name), t)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
	}, timeout, interval).Should(Succeed())
}

// eventNotes are the notes of the namespace's events with the reason.
func (s *suite) eventNotes(ctx context.Context, g Gomega, ns, reason string) []string {
	var el eventsv1.EventList
	g.Expect(s.k8s.List(ctx, &el, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range el.Items {
		if e.Reason != reason {
			continue
		}
		// Repeated identical events are one object with a count.
		n := max(e.DeprecatedCount, 1)
		if e.Series != nil {
			n = max(n, e.Series.Count)
		}
		for range n {
			out = append(out, e.Note)
		}
	}
	return out
}

// newJob is a PyTorchJob with a master and workers that finish with exit
// code 0 after delay once Running.
func newJob(name, ns string, workers int32, delay string) *kubeflowv1.PyTorchJob {
	j := testjobs.MakePyTorchJob(name, ns).Master(1).Workers(workers).
		Annotation("Master", cluster.ExitCodeAnnotation, "0").Annotation("Master", cluster.ExitDelayAnnotation, delay).
		Annotation("Worker", cluster.ExitCodeAnnotation, "0").Annotation("Worker", cluster.ExitDelayAnnotation, delay).
		Obj()
	for _, rs := range j.Spec.PyTorchReplicaSpecs {
		rs.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		}
	}
	return j
}

func TestVolcanoAndSchedulerPlugins(t *testing.T) {
	s := start(t, cluster.Options{Nodes: 2, SchedulerNames: []string{gang.VolcanoSchedulerName, schedulerPluginsName}},
		util.DefaultConfiguration())
	t.Run("Volcano", s.testVolcano)
	t.Run("SchedulerPlugins", s.testSchedulerPlugins)
}

// testVolcano: the CRD is missing first (reported, then recovered), pods wait
// for Volcano's admission, get Volcano's annotations, and the PodGroup goes
// when the job succeeds.
func (s *suite) testVolcano(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := s.namespace(ctx)
	job := newJob("vc", ns, 2, "2s")
	job.Spec.PyTorchReplicaSpecs["Worker"].Template.Spec.SchedulerName = gang.VolcanoSchedulerName
	job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{MinAvailable: ptr.To[int32](10)}
	g.Expect(s.k8s.Create(ctx, job)).To(Succeed())

	By(t, "a missing PodGroup CRD holds the job with a condition message and an event")
	g.Eventually(func(g Gomega) {
		msg := s.createdMessage(ctx, g, ns, "vc")
		g.Expect(msg).To(ContainSubstring("needs the PodGroup scheduling.volcano.sh/v1beta1 API"))
		g.Expect(msg).To(ContainSubstring("install Volcano"))
		g.Expect(s.eventNotes(ctx, g, ns, gang.ReasonFailedCreatePodGroup)).To(ContainElement(msg))
	}, timeout, interval).Should(Succeed())
	g.Expect(s.pods(ctx, g, ns, "vc")).To(BeEmpty())

	By(t, "after the CRD is installed, the PodGroup is created and pods wait for admission")
	s.installExternalCRD(ctx, "scheduling.volcano.sh_podgroups.yaml")
	var pg volcanov1beta1.PodGroup
	key := client.ObjectKey{Namespace: ns, Name: "vc"}
	g.Eventually(func(g Gomega) {
		g.Expect(s.k8s.Get(ctx, key, &pg)).To(Succeed())
		g.Expect(s.createdMessage(ctx, g, ns, "vc")).To(Equal(
			`waiting for Volcano to admit PodGroup vc (phase not yet set, minMember 10, queue "default"); pods are created once it is Inqueue`))
	}, timeout, interval).Should(Succeed())
	g.Expect(pg.Spec.MinMember).To(Equal(int32(10)))
	g.Expect(pg.Spec.Queue).To(Equal("default"))
	g.Expect(pg.Spec.MinResources).NotTo(BeNil())
	g.Expect((*pg.Spec.MinResources)[corev1.ResourceCPU]).To(Equal(resource.MustParse("3")))
	g.Expect((*pg.Spec.MinResources)[corev1.ResourceMemory]).To(Equal(resource.MustParse("3Gi")))
	g.Expect(metav1.IsControlledBy(&pg, s.job(ctx, g, ns, "vc"))).To(BeTrue())
	g.Consistently(func(g Gomega) []corev1.Pod { return s.pods(ctx, g, ns, "vc") }, 3*time.Second, interval).Should(BeEmpty())
	g.Expect(s.job(ctx, g, ns, "vc").Status.StartTime).To(BeNil(), "startTime waits for the gang (activeDeadlineSeconds counts from it)")

	By(t, "the PodGroup follows the job (v1's e2e lowers minAvailable)")
	s.updateJob(ctx, g, ns, "vc", func(j *kubeflowv1.PyTorchJob) {
		j.Spec.RunPolicy.SchedulingPolicy.MinAvailable = ptr.To[int32](3)
	})
	g.Eventually(func(g Gomega) int32 {
		g.Expect(s.k8s.Get(ctx, key, &pg)).To(Succeed())
		return pg.Spec.MinMember
	}, timeout, interval).Should(Equal(int32(3)))

	By(t, "Volcano admits the group (Inqueue): pods are created, annotated and scheduled by the volcano profile")
	g.Eventually(func(g Gomega) {
		g.Expect(s.k8s.Get(ctx, key, &pg)).To(Succeed())
		pg.Status.Phase = volcanov1beta1.PodGroupInqueue
		g.Expect(s.k8s.Update(ctx, &pg)).To(Succeed()) // the Volcano CRD has no status subresource
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		pods := s.pods(ctx, g, ns, "vc")
		g.Expect(pods).To(HaveLen(3))
		for _, p := range pods {
			g.Expect(p.Spec.SchedulerName).To(Equal("volcano"))
			g.Expect(p.Annotations).To(HaveKeyWithValue("scheduling.k8s.io/group-name", "vc"))
			g.Expect(p.Annotations).To(HaveKeyWithValue("volcano.sh/task-spec", p.Labels[kubeflowv1.ReplicaTypeLabel]))
		}
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) *metav1.Time { return s.job(ctx, g, ns, "vc").Status.StartTime }, timeout, interval).
		ShouldNot(BeNil(), "startTime is set on admission")

	By(t, "success deletes the PodGroup")
	s.awaitCondition(ctx, g, ns, "vc", kubeflowv1.JobSucceeded)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(s.k8s.Get(ctx, key, &volcanov1beta1.PodGroup{}))
	}, timeout, interval).Should(BeTrue())
	g.Eventually(func(g Gomega) []string { return s.eventNotes(ctx, g, ns, gang.ReasonDeletePodGroup) }, timeout, interval).
		Should(ConsistOf("Deleted PodGroup: vc"))
	// v1's announcement, once (v1 repeated it on every reconcile of the finished job).
	g.Eventually(func(g Gomega) []string { return s.eventNotes(ctx, g, ns, gang.ReasonJobTerminated) }, timeout, interval).
		Should(Equal([]string{"Job has been terminated. Deleting PodGroup"}))
	// A later pass over the finished job shows itself: with
	// ttlSecondsAfterFinished 0 it deletes the job, after the gang teardown
	// every pass over a finished job runs. Only then is the single
	// announcement telling (events are sent asynchronously, hence the wait).
	s.updateJob(ctx, g, ns, "vc", func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.TTLSecondsAfterFinished = ptr.To[int32](0) })
	g.Eventually(func() bool {
		return apierrors.IsNotFound(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vc"}, &kubeflowv1.PyTorchJob{}))
	}, timeout, interval).Should(BeTrue(), "the finished job was not expired")
	g.Consistently(func(g Gomega) []string { return s.eventNotes(ctx, g, ns, gang.ReasonJobTerminated) }, 2*time.Second, interval).
		Should(HaveLen(1))
}

// testSchedulerPlugins: missing CRD then install, the coscheduling PodGroup
// and pod label, suspend deletes the group and resume re-creates it.
func (s *suite) testSchedulerPlugins(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := s.namespace(ctx)
	job := newJob("sp", ns, 2, "3s")
	for _, rs := range job.Spec.PyTorchReplicaSpecs {
		rs.Template.Spec.SchedulerName = schedulerPluginsName
		rs.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse("2")}
	}
	job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{ScheduleTimeoutSeconds: ptr.To[int32](120)}
	job.Spec.RunPolicy.Suspend = ptr.To(false)
	g.Expect(s.k8s.Create(ctx, job)).To(Succeed())

	By(t, "a missing CRD is reported")
	g.Eventually(func(g Gomega) string { return s.createdMessage(ctx, g, ns, "sp") }, timeout, interval).
		Should(ContainSubstring("needs the PodGroup scheduling.x-k8s.io/v1alpha1 API"))
	g.Expect(s.pods(ctx, g, ns, "sp")).To(BeEmpty())

	By(t, "after install: PodGroup with minMember, minResources over every resource, timeout; labelled pods")
	s.installExternalCRD(ctx, "scheduling.x-k8s.io_podgroups.yaml")
	key := client.ObjectKey{Namespace: ns, Name: "sp"}
	var pg schedpluginsv1alpha1.PodGroup
	g.Eventually(func() error { return s.k8s.Get(ctx, key, &pg) }, timeout, interval).Should(Succeed())
	g.Expect(pg.Spec.MinMember).To(Equal(int32(3)))
	g.Expect(pg.Spec.ScheduleTimeoutSeconds).To(Equal(ptr.To[int32](120)))
	g.Expect(pg.Spec.MinResources).To(HaveLen(3))
	g.Expect(pg.Spec.MinResources[cluster.GPUResource]).To(Equal(resource.MustParse("6")))
	g.Expect(pg.Spec.MinResources[corev1.ResourceCPU]).To(Equal(resource.MustParse("3")))
	g.Eventually(func(g Gomega) {
		pods := s.pods(ctx, g, ns, "sp")
		g.Expect(pods).To(HaveLen(3))
		for _, p := range pods {
			g.Expect(p.Spec.SchedulerName).To(Equal(schedulerPluginsName))
			g.Expect(p.Labels).To(HaveKeyWithValue(schedpluginsv1alpha1.PodGroupLabel, "sp"))
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
		}
	}, timeout, interval).Should(Succeed())

	By(t, "suspend deletes the PodGroup with the pods; resume re-creates both")
	s.updateJob(ctx, g, ns, "sp", func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
	g.Eventually(func() bool {
		return apierrors.IsNotFound(s.k8s.Get(ctx, key, &schedpluginsv1alpha1.PodGroup{}))
	}, timeout, interval).Should(BeTrue())
	g.Eventually(func(g Gomega) []corev1.Pod { return s.pods(ctx, g, ns, "sp") }, timeout, interval).Should(BeEmpty())
	g.Expect(s.eventNotes(ctx, g, ns, gang.ReasonJobTerminated)).To(BeEmpty(), "a suspended job is not terminated")
	s.updateJob(ctx, g, ns, "sp", func(j *kubeflowv1.PyTorchJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
	g.Eventually(func() error { return s.k8s.Get(ctx, key, &pg) }, timeout, interval).Should(Succeed())

	By(t, "success deletes it again")
	s.awaitCondition(ctx, g, ns, "sp", kubeflowv1.JobSucceeded)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(s.k8s.Get(ctx, key, &schedpluginsv1alpha1.PodGroup{}))
	}, timeout, interval).Should(BeTrue())
	g.Eventually(func(g Gomega) []string { return s.eventNotes(ctx, g, ns, gang.ReasonDeletePodGroup) }, timeout, interval).
		Should(HaveLen(2))
	g.Eventually(func(g Gomega) []string { return s.eventNotes(ctx, g, ns, gang.ReasonJobTerminated) }, timeout, interval).
		Should(Equal([]string{"Job has been terminated. Deleting PodGroup"}))
}

// TestNativeGang: two jobs each needing 12 of the 16 GPUs as one gang. With
// kube-scheduler's GangScheduling plugin one job gets all its pods bound and
// completes while the other has none bound (no deadlock of half-placed
// gangs); then the second runs.
func TestNativeGang(t *testing.T) {
	cfg := util.DefaultConfiguration()
	cfg.GangScheduling.PodGroupAPI = configv1alpha1.PodGroupAPIKubernetes
	s := start(t, cluster.Options{
		Nodes: 2, GPUsPerNode: 8,
		FeatureGates:  "GenericWorkload=true",
		RuntimeConfig: "scheduling.k8s.io/v1beta1=true",
	}, cfg)
	g := NewWithT(t)
	ctx := context.Background()
	ns := s.namespace(ctx)

	names := []string{"gang-a", "gang-b"}
	for _, name := range names {
		// 3 pods x 4 GPUs = 12 GPUs; both jobs together would need 24 of 16.
		job := newJob(name, ns, 2, "5s")
		for _, rs := range job.Spec.PyTorchReplicaSpecs {
			rs.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse("4")}
		}
		g.Expect(s.k8s.Create(ctx, job)).To(Succeed())
	}

	By(t, "each job gets a Workload and a gang PodGroup, its pods join the group")
	for _, name := range names {
		key := client.ObjectKey{Namespace: ns, Name: name}
		g.Eventually(func(g Gomega) {
			var w schedulingv1beta1.Workload
			var pg schedulingv1beta1.PodGroup
			g.Expect(s.k8s.Get(ctx, key, &w)).To(Succeed())
			g.Expect(s.k8s.Get(ctx, key, &pg)).To(Succeed())
			g.Expect(pg.Spec.SchedulingPolicy.Gang).To(Equal(&schedulingv1beta1.GangSchedulingPolicy{MinCount: 3}))
			g.Expect(pg.Spec.WorkloadRef).To(Equal(&schedulingv1beta1.WorkloadReference{WorkloadName: name, TemplateName: gang.NativeTemplateName}))
			g.Expect(w.Spec.PodGroupTemplates).To(HaveLen(1))
			pods := s.pods(ctx, g, ns, name)
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(p.Spec.SchedulingGroup).To(Equal(&corev1.PodSchedulingGroup{PodGroupName: ptr.To(name)}))
			}
		}, timeout, interval).Should(Succeed())
	}

	// bound counts the job's pods placed on a node (finished ones included).
	bound := func(g Gomega, name string) int {
		n := 0
		for _, p := range s.pods(ctx, g, ns, name) {
			if p.Spec.NodeName != "" {
				n++
			}
		}
		return n
	}

	By(t, "one gang is placed whole while the other has no pod bound, until the first finishes")
	var first, second string
	g.Eventually(func(g Gomega) {
		a, b := bound(g, names[0]), bound(g, names[1])
		g.Expect([]int{a, b}).To(Or(Equal([]int{3, 0}), Equal([]int{0, 3})))
		first, second = names[0], names[1]
		if b == 3 {
			first, second = names[1], names[0]
		}
	}, timeout, interval).Should(Succeed())
	t.Logf("first gang: %s, second: %s", first, second)
	// While the first gang's pods all hold their GPUs, the second has none:
	// nothing of it is half-placed holding GPUs the first needs or vice versa.
	deadline := time.Now().Add(timeout)
	for {
		j := s.job(ctx, g, ns, first)
		if c := condition(j, kubeflowv1.JobSucceeded); c != nil && c.Status == corev1.ConditionTrue {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not succeed: %+v", first, j.Status.Conditions)
		}
		// Read the second gang first: if the first still holds everything
		// afterwards, it did so when the second was read.
		secondBound := bound(g, second)
		active := 0
		for _, p := range s.pods(ctx, g, ns, first) {
			if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				active++
			}
		}
		if active == 3 {
			g.Expect(secondBound).To(Equal(0), "the second gang must not be partly placed while the first holds the GPUs")
		}
		time.Sleep(interval)
	}

	By(t, "then the second gang is placed whole and completes")
	g.Eventually(func(g Gomega) int { return bound(g, second) }, timeout, interval).Should(Equal(3))
	s.awaitCondition(ctx, g, ns, second, kubeflowv1.JobSucceeded)
	for _, name := range names {
		key := client.ObjectKey{Namespace: ns, Name: name}
		g.Eventually(func() bool {
			return apierrors.IsNotFound(s.k8s.Get(ctx, key, &schedulingv1beta1.Workload{}))
		}, timeout, interval).Should(BeTrue(), "Workload %s not deleted", name)
		// The PodGroup is gone once its (finished) pods no longer hold its protection finalizer.
		var pg schedulingv1beta1.PodGroup
		err := s.k8s.Get(ctx, key, &pg)
		g.Expect(apierrors.IsNotFound(err) || pg.DeletionTimestamp != nil).To(BeTrue(), "PodGroup %s: %v", name, err)
	}

	By(t, "a whole-job restart keeps the Workload and PodGroup, and the new attempt joins the gang again")
	job := testjobs.WithFailurePolicy(testjobs.MakePyTorchJob("gang-r", ns).Master(1).Workers(2).Obj(), testjobs.MakeFailurePolicy(1).Obj())
	for _, rs := range job.Spec.PyTorchReplicaSpecs {
		rs.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{cluster.GPUResource: resource.MustParse("4")}
	}
	g.Expect(s.k8s.Create(ctx, job)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "gang-r"}
	attemptRunning := func(attempt string) []corev1.Pod {
		var pods []corev1.Pod
		g.Eventually(func(g Gomega) {
			pods = s.pods(ctx, g, ns, "gang-r")
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(p.Labels[kubeflowv1.RestartAttemptLabel]).To(Equal(attempt), p.Name)
				g.Expect(p.Spec.SchedulingGroup).To(Equal(&corev1.PodSchedulingGroup{PodGroupName: ptr.To("gang-r")}), p.Name)
				g.Expect(p.Spec.NodeName).NotTo(BeEmpty(), p.Name)
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), p.Name)
			}
		}, timeout, interval).Should(Succeed())
		return pods
	}
	pods := attemptRunning("0")
	var w0 schedulingv1beta1.Workload
	var pg0 schedulingv1beta1.PodGroup
	g.Expect(s.k8s.Get(ctx, key, &w0)).To(Succeed())
	g.Expect(s.k8s.Get(ctx, key, &pg0)).To(Succeed())
	g.Expect(s.k8s.Patch(ctx, &pods[len(pods)-1], client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+cluster.ExitCodeAnnotation+`":"3"}}}`)))).To(Succeed())
	attemptRunning("1")
	var w1 schedulingv1beta1.Workload
	var pg1 schedulingv1beta1.PodGroup
	g.Expect(s.k8s.Get(ctx, key, &w1)).To(Succeed())
	g.Expect(s.k8s.Get(ctx, key, &pg1)).To(Succeed())
	g.Expect(w1.UID).To(Equal(w0.UID), "the Workload is kept through the restart")
	g.Expect(pg1.UID).To(Equal(pg0.UID), "the PodGroup is kept through the restart")
	g.Expect(pg1.Spec.SchedulingPolicy.Gang).To(Equal(&schedulingv1beta1.GangSchedulingPolicy{MinCount: 3}))
	g.Expect(s.job(ctx, g, ns, "gang-r").Status.Attempt()).To(Equal(int32(1)))
}

// By logs a step.
func By(t *testing.T, step string) {
	t.Helper()
	t.Logf("STEP: %s", step)
}
