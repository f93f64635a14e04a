package controller_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// jobStatusOf returns the status of a job of any of the engine's kinds.
func jobStatusOf(obj client.Object) kubeflowv1.JobStatus {
	switch j := obj.(type) {
	case *kubeflowv1.PyTorchJob:
		return j.Status
	case *kubeflowv1.TFJob:
		return j.Status
	case *kubeflowv1.XGBoostJob:
		return j.Status
	case *kubeflowv1.PaddleJob:
		return j.Status
	case *kubeflowv1.JAXJob:
		return j.Status
	}
	panic(fmt.Sprintf("unexpected job type %T", obj))
}

// freshJob reads the current state of job into a new object of its type.
func freshJob[J client.Object](ctx context.Context, job J) (J, error) {
	fresh := reflect.New(reflect.TypeOf(job).Elem()).Interface().(J)
	err := k8s.Get(ctx, client.ObjectKeyFromObject(job), fresh)
	return fresh, err
}

// awaitJobCondition waits until job (of any kind) has a True condition of
// type t and returns the job as read then.
func awaitJobCondition[J client.Object](ctx context.Context, job J, t kubeflowv1.JobConditionType) J {
	var out J
	Eventually(func(g Gomega) {
		j, err := freshJob(ctx, job)
		g.Expect(err).NotTo(HaveOccurred())
		st := jobStatusOf(j)
		c := condition(st, t)
		g.Expect(c).NotTo(BeNil(), "conditions: %v", conditionTypes(st))
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue), "conditions: %v", conditionTypes(st))
		out = j
	}, timeout, interval).Should(Succeed())
	return out
}

// seedJob decodes the seed document's manifest of kind into obj, in ns.
func seedJob(kind string, obj client.Object, ns string) {
	m, err := util.SeedManifests()
	Expect(err).NotTo(HaveOccurred())
	Expect(m).To(HaveKey(kind))
	Expect(yaml.UnmarshalStrict([]byte(m[kind]), obj)).To(Succeed())
	obj.SetNamespace(ns)
}

// exitAnnotations make KWOK finish a pod with the code after the delay.
func exitAnnotations(code int, delay string) map[string]string {
	return map[string]string{cluster.ExitCodeAnnotation: fmt.Sprint(code), cluster.ExitDelayAnnotation: delay}
}

// liveServices lists the names of a namespace's Services not being deleted.
func liveServices(ctx context.Context, ns string) []corev1.Service {
	var sl corev1.ServiceList
	Expect(k8s.List(ctx, &sl, client.InNamespace(ns))).To(Succeed())
	var out []corev1.Service
	for _, s := range sl.Items {
		if s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	return out
}

// containerEnv finds a container by name and returns its env as a map.
func containerEnv(p corev1.Pod, name string) map[string]string {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return envMap(c)
		}
	}
	return nil
}

// tfAddr is the FQDN TF_CONFIG uses for a replica; the operator takes its
// cluster domain from CUSTOM_CLUSTER_DOMAIN, as v1 did.
func tfAddr(job, rt string, i int, ns string) string {
	host := fmt.Sprintf("%s-%s-%d.%s.svc", job, rt, i, ns)
	if d := os.Getenv("CUSTOM_CLUSTER_DOMAIN"); d != "" {
		host += "." + d
	}
	return fmt.Sprintf("%q", host+":2222")
}

var _ = Describe("TFJob", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	It("runs the seed TFJob to Succeeded with v1 names, labels, services and TF_CONFIG", func(ctx context.Context) {
		var seed kubeflowv1.TFJob
		seedJob("TFJob", &seed, ns)
		for _, rt := range []kubeflowv1.ReplicaType{"Chief", "Worker", "PS"} {
			seed.Spec.TFReplicaSpecs[rt].Template.Annotations = exitAnnotations(0, "3s")
		}
		Expect(k8s.Create(ctx, &seed)).To(Succeed())

		want := []string{"tf-mnist-chief-0", "tf-mnist-ps-0", "tf-mnist-worker-0", "tf-mnist-worker-1"}
		Eventually(func() []string { return podNames(jobPods(ctx, ns, "tf-mnist")) }, timeout, interval).Should(Equal(want))
		cluster := fmt.Sprintf(`{"chief":[%s],"ps":[%s],"worker":[%s,%s]}`,
			tfAddr("tf-mnist", "chief", 0, ns), tfAddr("tf-mnist", "ps", 0, ns),
			tfAddr("tf-mnist", "worker", 0, ns), tfAddr("tf-mnist", "worker", 1, ns))
		for _, p := range jobPods(ctx, ns, "tf-mnist") {
			rt, idx := p.Labels[kubeflowv1.ReplicaTypeLabel], p.Labels[kubeflowv1.ReplicaIndexLabel]
			Expect(p.Name).To(Equal("tf-mnist-" + rt + "-" + idx))
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.OperatorNameLabel, "tfjob-controller"))
			Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.JobNameLabel, "tf-mnist"))
			if rt == "chief" {
				Expect(p.Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))
			} else {
				Expect(p.Labels).NotTo(HaveKey(kubeflowv1.JobRoleLabel))
			}
			Expect(p.OwnerReferences).To(HaveLen(1))
			Expect(p.OwnerReferences[0].Kind).To(Equal("TFJob"))
			Expect(p.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyOnFailure))
			Expect(p.Spec.Containers[0].Env).To(HaveLen(1), "TF_CONFIG is the only env TF adds")
			Expect(containerEnv(p, "tensorflow")).To(HaveKeyWithValue("TF_CONFIG",
				fmt.Sprintf(`{"cluster":%s,"task":{"type":"%s","index":%s},"environment":"cloud"}`, cluster, rt, idx)))
		}
		Eventually(func() int { return len(liveServices(ctx, ns)) }, timeout, interval).Should(Equal(4))
		for _, s := range liveServices(ctx, ns) {
			Expect(want).To(ContainElement(s.Name))
			Expect(s.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))
			Expect(s.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "tfjob-port", Port: 2222, Protocol: corev1.ProtocolTCP, TargetPort: intstrFromInt(2222)}}))
		}

		j := awaitJobCondition(ctx, &seed, kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
		c := condition(j.Status, kubeflowv1.JobSucceeded)
		Expect(c.Reason).To(Equal("TFJobSucceeded"))
		Expect(c.Message).To(Equal(fmt.Sprintf("TFJob %s/tf-mnist successfully completed.", ns)))
		Expect(condition(j.Status, kubeflowv1.JobRunning).Message).To(Equal(fmt.Sprintf("TFJob %s/tf-mnist is running.", ns)))
		Expect(j.Status.ReplicaStatuses["Chief"].Succeeded).To(Equal(int32(1)))
		Expect(j.Status.CompletionTime).NotTo(BeNil())
	})

	It("gives a local (single-replica) job no TF_CONFIG", func(ctx context.Context) {
		job := testjobs.MakeTFJob("local", ns).Workers(1).Annotation("Worker", cluster.ExitCodeAnnotation, "0").Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		j := awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
		Expect(condition(j.Status, kubeflowv1.JobSucceeded).Message).To(Equal(fmt.Sprintf("TFJob %s/local successfully completed.", ns)))
		pods := jobPods(ctx, ns, "local")
		Expect(pods).To(HaveLen(1))
		Expect(pods[0].Spec.Containers[0].Env).To(BeEmpty())
		Expect(pods[0].Labels).To(HaveKeyWithValue(kubeflowv1.JobRoleLabel, "master"))
	})

	It("succeeds without a chief once worker 0 exits 0, by default", func(ctx context.Context) {
		job := testjobs.MakeTFJob("w0", ns).Workers(2).PS(1).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "w0", 3)
		awaitJobCondition(ctx, job, kubeflowv1.JobRunning)
		finishPod(ctx, ns, "w0-worker-0", 0)
		j := awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
		Expect(strings.Join(conditionTypes(j.Status), ",")).To(Equal("Created=True,Running=False,Succeeded=True"))
	})

	It("waits for every worker with successPolicy AllWorkers", func(ctx context.Context) {
		job := testjobs.MakeTFJob("all", ns).Workers(2).PS(1).SuccessPolicy(kubeflowv1.SuccessPolicyAllWorkers).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "all", 3)
		finishPod(ctx, ns, "all-worker-0", 0)
		Eventually(func(g Gomega) {
			j, err := freshJob(ctx, job)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(j.Status.ReplicaStatuses["Worker"].Succeeded).To(Equal(int32(1)))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			j, err := freshJob(ctx, job)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(condition(j.Status, kubeflowv1.JobSucceeded)).To(BeNil())
		}, 2*time.Second, interval).Should(Succeed())
		finishPod(ctx, ns, "all-worker-1", 0)
		awaitJobCondition(ctx, job, kubeflowv1.JobSucceeded)
	})

	It("fails when a worker fails under restartPolicy Never", func(ctx context.Context) {
		job := testjobs.MakeTFJob("bad", ns).Chief(1).Workers(1).Obj()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		waitPodsRunning(ctx, ns, "bad", 2)
		finishPod(ctx, ns, "bad-worker-0", 1)
		j := awaitJobCondition(ctx, job, kubeflowv1.JobFailed)
		Expect(condition(j.Status, kubeflowv1.JobFailed).Reason).To(Equal("TFJobFailed"))
	})
})
