package controller_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// kindCase lets one spec drive every kind through the engine's run policy.
type kindCase struct {
	job       func(name, ns string) client.Object
	runPolicy func(client.Object) *kubeflowv1.RunPolicy
	status    func(client.Object) *kubeflowv1.JobStatus
}

var allKinds = map[string]kindCase{
	"PyTorchJob": {
		job:       func(n, ns string) client.Object { return testjobs.MakePyTorchJob(n, ns).Master(1).Workers(1).Obj() },
		runPolicy: func(o client.Object) *kubeflowv1.RunPolicy { return &o.(*kubeflowv1.PyTorchJob).Spec.RunPolicy },
		status:    func(o client.Object) *kubeflowv1.JobStatus { return &o.(*kubeflowv1.PyTorchJob).Status },
	},
	"TFJob": {
		job:       func(n, ns string) client.Object { return testjobs.MakeTFJob(n, ns).Chief(1).Workers(1).Obj() },
		runPolicy: func(o client.Object) *kubeflowv1.RunPolicy { return &o.(*kubeflowv1.TFJob).Spec.RunPolicy },
		status:    func(o client.Object) *kubeflowv1.JobStatus { return &o.(*kubeflowv1.TFJob).Status },
	},
	"MPIJob": {
		job:       func(n, ns string) client.Object { return testjobs.MakeMPIJob(n, ns).Launcher().Workers(1).Obj() },
		runPolicy: func(o client.Object) *kubeflowv1.RunPolicy { return &o.(*kubeflowv1.MPIJob).Spec.RunPolicy },
		status:    func(o client.Object) *kubeflowv1.JobStatus { return &o.(*kubeflowv1.MPIJob).Status },
	},
	"XGBoostJob": {
		job:       func(n, ns string) client.Object { return testjobs.MakeXGBoostJob(n, ns).Master(1).Workers(1).Obj() },
		runPolicy: func(o client.Object) *kubeflowv1.RunPolicy { return &o.(*kubeflowv1.XGBoostJob).Spec.RunPolicy },
		status:    func(o client.Object) *kubeflowv1.JobStatus { return &o.(*kubeflowv1.XGBoostJob).Status },
	},
	"PaddleJob": {
		job:       func(n, ns string) client.Object { return testjobs.MakePaddleJob(n, ns).Workers(2).Obj() },
		runPolicy: func(o client.Object) *kubeflowv1.RunPolicy { return &o.(*kubeflowv1.PaddleJob).Spec.RunPolicy },
		status:    func(o client.Object) *kubeflowv1.JobStatus { return &o.(*kubeflowv1.PaddleJob).Status },
	},
	"JAXJob": {
		job:       func(n, ns string) client.Object { return testjobs.MakeJAXJob(n, ns).Workers(2).Obj() },
		runPolicy: func(o client.Object) *kubeflowv1.RunPolicy { return &o.(*kubeflowv1.JAXJob).Spec.RunPolicy },
		status:    func(o client.Object) *kubeflowv1.JobStatus { return &o.(*kubeflowv1.JAXJob).Status },
	},
}

var _ = Describe("every kind", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	DescribeTable("suspends at creation, resumes, and leaves MultiKueue jobs alone",
		func(ctx context.Context, kind string) {
			kc := allKinds[kind]
			fresh := func(name string) client.Object {
				o := kc.job(name, ns)
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
				return o
			}
			hasCondition := func(name string, t kubeflowv1.JobConditionType) bool {
				c := condition(*kc.status(fresh(name)), t)
				return c != nil && c.Status == corev1.ConditionTrue
			}

			job := kc.job("sus", ns)
			kc.runPolicy(job).Suspend = ptr.To(true)
			Expect(k8s.Create(ctx, job)).To(Succeed())
			Eventually(func() bool { return hasCondition("sus", kubeflowv1.JobSuspended) }, timeout, interval).Should(BeTrue())
			Consistently(func() []corev1.Pod { return jobPods(ctx, ns, "sus") }, time.Second, interval).Should(BeEmpty())

			Eventually(func() error {
				o := fresh("sus")
				kc.runPolicy(o).Suspend = ptr.To(false)
				return k8s.Update(ctx, o)
			}, timeout, interval).Should(Succeed())
			Eventually(func() bool { return hasCondition("sus", kubeflowv1.JobRunning) }, timeout, interval).Should(BeTrue())
			Expect(condition(*kc.status(fresh("sus")), kubeflowv1.JobSuspended).Reason).To(Equal(kind + "Resumed"))

			mk := kc.job("mk", ns)
			kc.runPolicy(mk).ManagedBy = ptr.To(kubeflowv1.MultiKueueController)
			Expect(k8s.Create(ctx, mk)).To(Succeed())
			// The pass that leaves mk alone counts it as created (v1 counted
			// every job), after "sus": only then is its absence of status and
			// pods telling.
			Eventually(func() float64 { return jobsCreated(ns) }, timeout, interval).Should(Equal(2.0))
			Consistently(func(g Gomega) {
				g.Expect(kc.status(fresh("mk")).Conditions).To(BeEmpty())
				g.Expect(jobPods(ctx, ns, "mk")).To(BeEmpty())
			}, 2*time.Second, interval).Should(Succeed())
		},
		Entry(nil, "PyTorchJob"), Entry(nil, "TFJob"), Entry(nil, "MPIJob"),
		Entry(nil, "XGBoostJob"), Entry(nil, "PaddleJob"), Entry(nil, "JAXJob"),
	)
})
