package suite

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// In-place upgrade from v1.9.4: the operator is stopped, the cluster is
// put in the state v1 leaves behind when it is stopped mid-flight (jobs of
// every kind Running with exactly the children v1 makes, an MPIJob whose
// launcher already completed, an elastic job's HPA, two suspended jobs),
// and the operator is started on it. It stops the shared operator, so it
// runs alone (Serial) and on the local control plane only.
var _ = Describe("Upgrade from v1 in place", Serial, func() {
	It("adopts what v1 made: no running pod replaced, every job finishes, suspended jobs resume", func(ctx SpecContext) {
		if !cfg.Local {
			Skip("stops and restarts the operator process: local control plane only")
		}
		ns := newNamespace(ctx, "upgrade")

		By("stopping the operator, as when v1 is stopped mid-flight")
		Expect(operator.terminate(30 * time.Second)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			// Whatever happened, later specs and the suite's teardown need an operator.
			if operator.Exited() {
				restartOperator(ctx, "operator-after-upgrade")
			}
		}, NodeTimeout(3*time.Minute))
		// A v1 cluster has v1's webhooks, not ours: jobs are written as v1's
		// defaulting left them. The operator re-creates its configurations.
		for _, wh := range []client.Object{
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "validator.training-operator.kubeflow.org"}},
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "defaulter.training-operator.kubeflow.org"}},
		} {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, wh))).To(Succeed())
		}
		// The apiserver's admission sees the deletion through its own watch.
		Eventually(ctx, func() error {
			return k8s.Create(ctx, testjobs.MakePyTorchJob("webhook-probe", ns).Master(1).Obj(), client.DryRunAll)
		}).Should(Succeed())

		running := []client.Object{
			testjobs.MakePyTorchJob("pt", ns).Master(1).Workers(1).Obj(),
			testjobs.MakePyTorchJob("pt-elastic", ns).Workers(2).Elastic(1, 3, testjobs.CPUMetric(80)).Obj(),
			testjobs.MakeTFJob("tf", ns).Chief(1).Workers(1).Obj(),
			testjobs.MakeMPIJob("mpi", ns).Launcher().Workers(2).Obj(),
			testjobs.MakeXGBoostJob("xgb", ns).Master(1).Workers(1).Obj(),
			testjobs.MakePaddleJob("pd", ns).Workers(2).Obj(),
			testjobs.MakeJAXJob("jax", ns).Workers(2).Obj(),
			// backoffLimit: its failures are tracked, so v1's pods get the finalizer.
			testjobs.MakePyTorchJob("pt-backoff", ns).Master(1).Workers(1).BackoffLimit(3).Obj(),
		}
		suspended := []client.Object{
			testjobs.MakePyTorchJob("pt-suspended", ns).Master(1).Workers(1).Suspend(true).Obj(),
			testjobs.MakeTFJob("tf-suspended", ns).Chief(1).Workers(1).Suspend(true).Obj(),
		}
		now := metav1.Now()
		for _, job := range append(append([]client.Object{}, running...), suspended...) {
			testjobs.Default(job)
			Expect(k8s.Create(ctx, job)).To(Succeed())
			kind, st := testjobs.KindOf(job), testjobs.Status(job)
			st.Conditions = []kubeflowv1.JobCondition{v1Condition(kubeflowv1.JobCreated, kind+"Created", fmt.Sprintf("%s %s is created.", kind, job.GetName()), now)}
			if ptr.Deref(testjobs.RunPolicy(job).Suspend, false) {
				st.Conditions = append(st.Conditions, v1Condition(kubeflowv1.JobSuspended, kind+"Suspended", fmt.Sprintf("%s %s is suspended.", kind, job.GetName()), now))
			} else {
				st.Conditions = append(st.Conditions, v1Condition(kubeflowv1.JobRunning, kind+"Running", fmt.Sprintf("%s %s is running.", kind, job.GetName()), now))
				st.StartTime = &now
				st.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{}
				for rt, spec := range testjobs.ReplicaSpecs(job) {
					st.ReplicaStatuses[rt] = &kubeflowv1.ReplicaStatus{Active: ptr.Deref(spec.Replicas, 1)}
				}
			}
			Expect(k8s.Status().Update(ctx, job)).To(Succeed())
		}

		By("creating the children v1 made")
		original := map[string]map[string]string{} // job -> pod name -> UID
		var launcher *corev1.Pod
		for _, job := range running {
			for _, pod := range testjobs.V1Pods(job) {
				if pod.Name == "mpi-launcher" {
					// v1 stopped after the launcher completed.
					pod.Annotations = exitAfter(0, "0s")
					launcher = pod
				}
				Expect(k8s.Create(ctx, pod)).To(Succeed())
				if original[job.GetName()] == nil {
					original[job.GetName()] = map[string]string{}
				}
				original[job.GetName()][pod.Name] = string(pod.UID)
			}
			for _, svc := range testjobs.V1Services(job) {
				Expect(k8s.Create(ctx, svc)).To(Succeed())
			}
		}
		mpi := running[3].(*kubeflowv1.MPIJob)
		mpiChildren := testjobs.V1MPIChildren(mpi)
		for _, o := range mpiChildren {
			Expect(k8s.Create(ctx, o)).To(Succeed())
		}
		hpa := testjobs.V1HPA(running[1].(*kubeflowv1.PyTorchJob))
		Expect(k8s.Create(ctx, hpa)).To(Succeed())
		Expect(launcher).NotTo(BeNil())
		Expect(launcher.Labels).NotTo(HaveKey(kubeflowv1.ReplicaIndexLabel), "v1's launcher has no replica-index label")

		Eventually(ctx, func(g Gomega) {
			for _, job := range running {
				for _, p := range jobPods(ctx, ns, job.GetName()) {
					want := corev1.PodRunning
					if p.Name == launcher.Name {
						want = corev1.PodSucceeded
					}
					g.Expect(p.Status.Phase).To(Equal(want), "pod %s", p.Name)
				}
			}
		}).Should(Succeed())

		By("starting the operator on v1's cluster")
		restartOperator(ctx, "operator-upgraded")

		By("MPIJob: v1's launcher completed, so the job succeeds; its children are adopted")
		waitFor(ctx, kubeflowv1.MPIJobKind, ns, "mpi", kubeflowv1.JobSucceeded)
		Eventually(ctx, func(g Gomega) {
			for _, o := range mpiChildren {
				cur := emptyCopy(o)
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(o), cur)).To(Succeed())
				g.Expect(cur.GetLabels()).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, kubeflowv1.MPIJobControllerName), "%T %s", o, o.GetName())
				g.Expect(cur.GetLabels()).To(HaveKeyWithValue("app", "mpi"))
				g.Expect(cur.GetUID()).To(Equal(o.GetUID()), "%T %s must be v1's object, not a new one", o, o.GetName())
			}
			var l corev1.Pod
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(launcher), &l)).To(Succeed())
			g.Expect(l.UID).To(Equal(launcher.UID))
			g.Expect(l.Labels).To(HaveKeyWithValue(kubeflowv1.ReplicaIndexLabel, "0"), "adopted launcher")
		}).Should(Succeed())

		By("the elastic job's HPA is adopted")
		Eventually(ctx, func(g Gomega) {
			var cur autoscalingv2.HorizontalPodAutoscaler
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(hpa), &cur)).To(Succeed())
			g.Expect(cur.UID).To(Equal(hpa.UID))
			g.Expect(cur.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, kubeflowv1.PyTorchJobControllerName))
		}).Should(Succeed())

		By("v1's running pods of a job with backoffLimit are tracked from the first pass, not replaced")
		Expect(original["pt-backoff"]).NotTo(BeEmpty(), "v1's pods of pt-backoff")
		Eventually(ctx, func(g Gomega) {
			pods := jobPods(ctx, ns, "pt-backoff")
			// Every one of v1's pods is looked at, none gone.
			g.Expect(pods).To(HaveLen(len(original["pt-backoff"])))
			for _, p := range pods {
				g.Expect(p.Finalizers).To(ContainElement(kubeflowv1.PodTrackingFinalizer), "pod %s", p.Name)
				g.Expect(original["pt-backoff"]).To(HaveKeyWithValue(p.Name, string(p.UID)), "pod %s was replaced", p.Name)
			}
		}).Should(Succeed())

		By("every running job finishes with its own pods")
		for _, job := range running {
			if job.GetName() != "mpi" {
				finishPods(ctx, ns, job.GetName(), 0)
			}
		}
		for _, job := range running {
			waitFor(ctx, testjobs.KindOf(job), ns, job.GetName(), kubeflowv1.JobSucceeded)
			pods := jobPods(ctx, ns, job.GetName())
			Expect(pods).To(HaveLen(len(original[job.GetName()])), "%s's pods", job.GetName())
			for _, p := range pods {
				Expect(original[job.GetName()]).To(HaveKeyWithValue(p.Name, string(p.UID)), "pod %s was replaced", p.Name)
			}
			Expect(jobEvents(ctx, ns, job.GetName(), "SuccessfulCreatePod")).To(BeEmpty(), "%s created pods", job.GetName())
		}
		Eventually(ctx, func(g Gomega) {
			pods := jobPods(ctx, ns, "pt-backoff")
			g.Expect(pods).To(HaveLen(len(original["pt-backoff"])))
			for _, p := range pods {
				g.Expect(p.Finalizers).NotTo(ContainElement(kubeflowv1.PodTrackingFinalizer), "finished job's pod %s keeps the finalizer", p.Name)
			}
		}).Should(Succeed())

		By("the adopted HPA is removed once its job finished")
		Eventually(ctx, func() bool {
			return gone(k8s.Get(ctx, client.ObjectKeyFromObject(hpa), &autoscalingv2.HorizontalPodAutoscaler{}))
		}).Should(BeTrue())

		By("v1-suspended jobs resume when unsuspended")
		for _, job := range suspended {
			kind := testjobs.KindOf(job)
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
			patch := client.MergeFrom(job.DeepCopyObject().(client.Object))
			testjobs.RunPolicy(job).Suspend = ptr.To(false)
			Expect(k8s.Patch(ctx, job, patch)).To(Succeed())
			waitFor(ctx, kind, ns, job.GetName(), kubeflowv1.JobRunning)
			finishPods(ctx, ns, job.GetName(), 0)
			waitFor(ctx, kind, ns, job.GetName(), kubeflowv1.JobSucceeded)
		}

		By("MPI's adopted children go with their job")
		Expect(k8s.Delete(ctx, mpi)).To(Succeed())
		Eventually(ctx, func(g Gomega) {
			for _, o := range mpiChildren {
				g.Expect(gone(k8s.Get(ctx, client.ObjectKeyFromObject(o), emptyCopy(o)))).To(BeTrue(), "%T %s", o, o.GetName())
			}
		}).Should(Succeed())
	})
})

// restartOperator starts bin/manager again in its own work directory and
// points the suite's metrics and log at it.
func restartOperator(ctx context.Context, dir string, change ...func(*configv1alpha1.Configuration)) {
	operator = startOperator(filepath.Join(env.WorkDir(), dir), env.KubeconfigPath(), change...)
	cfg.MetricsURL, cfg.OperatorLog = operator.metricsURL, operator.LogPath()
	operator.waitReady(ctx)
	waitWebhookServing(ctx)
}

func v1Condition(t kubeflowv1.JobConditionType, reason, msg string, now metav1.Time) kubeflowv1.JobCondition {
	return kubeflowv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now}
}

// emptyCopy is an empty object of o's type to read into.
func emptyCopy(o client.Object) client.Object {
	c := o.DeepCopyObject().(client.Object)
	c.SetLabels(nil)
	c.SetUID("")
	return c
}
