/*
Copyright 2026 The training-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/internal/serving/cert"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

// job returns a minimal valid PyTorchJob with a Master (replicas left to
// defaulting) and two Workers.
func pytorchJob(ns, name string) *kubeflowv1.PyTorchJob {
	container := corev1.Container{Name: "pytorch", Image: "example.com/train:v1"}
	return &kubeflowv1.PyTorchJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubeflowv1.PyTorchJobSpec{PyTorchReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
			kubeflowv1.PyTorchJobReplicaTypeMaster: {Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}},
			kubeflowv1.PyTorchJobReplicaTypeWorker: {Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}},
		}},
	}
}

// defaultPort is the port each kind's defaulting adds to its container.
// (protocol TCP comes from the CRD schema's default).
var defaultPort = map[string]corev1.ContainerPort{
	"PyTorchJob": {Name: kubeflowv1.PyTorchJobDefaultPortName, ContainerPort: kubeflowv1.PyTorchJobDefaultPort, Protocol: corev1.ProtocolTCP},
	"TFJob":      {Name: kubeflowv1.TFJobDefaultPortName, ContainerPort: kubeflowv1.TFJobDefaultPort, Protocol: corev1.ProtocolTCP},
	"XGBoostJob": {Name: kubeflowv1.XGBoostJobDefaultPortName, ContainerPort: kubeflowv1.XGBoostJobDefaultPort, Protocol: corev1.ProtocolTCP},
}

// storedSpec reads a job back and returns its run policy and replica specs.
func storedSpec(ctx context.Context, kind, ns, name string) (kubeflowv1.RunPolicy, map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	switch kind {
	case "PyTorchJob":
		var j kubeflowv1.PyTorchJob
		Expect(k8s.Get(ctx, key, &j)).To(Succeed())
		Expect(j.Spec.NprocPerNode).To(Equal(ptr.To("auto")))
		return j.Spec.RunPolicy, j.Spec.PyTorchReplicaSpecs
	case "TFJob":
		var j kubeflowv1.TFJob
		Expect(k8s.Get(ctx, key, &j)).To(Succeed())
		Expect(j.Spec.SuccessPolicy).To(Equal(ptr.To(kubeflowv1.SuccessPolicyDefault)))
		return j.Spec.RunPolicy, j.Spec.TFReplicaSpecs
	case "MPIJob":
		var j kubeflowv1.MPIJob
		Expect(k8s.Get(ctx, key, &j)).To(Succeed())
		Expect(j.Spec.CleanPodPolicy).To(Equal(ptr.To(kubeflowv1.CleanPodPolicyNone)))
		return j.Spec.RunPolicy, j.Spec.MPIReplicaSpecs
	case "XGBoostJob":
		var j kubeflowv1.XGBoostJob
		Expect(k8s.Get(ctx, key, &j)).To(Succeed())
		return j.Spec.RunPolicy, j.Spec.XGBReplicaSpecs
	}
	Fail("unknown kind " + kind)
	return kubeflowv1.RunPolicy{}, nil
}

var _ = Describe("Admission webhooks", func() {
	var ns string
	BeforeEach(func(ctx context.Context) { ns = newNamespace(ctx) })

	DescribeTable("creates the seed document's samples with their defaults stored",
		func(ctx context.Context, kind string) {
			obj := seedObject(kind, ns)
			Expect(k8s.Create(ctx, obj)).To(Succeed())

			runPolicy, specs := storedSpec(ctx, kind, ns, obj.GetName())
			if kind == "MPIJob" {
				// MPI stores its default in the deprecated spec.cleanPodPolicy
				// (checked above): one in runPolicy would shadow later updates of it.
				Expect(runPolicy.CleanPodPolicy).To(BeNil())
			} else {
				Expect(runPolicy.CleanPodPolicy).To(Equal(ptr.To(kubeflowv1.CleanPodPolicyNone)))
			}
			Expect(runPolicy.Suspend).To(Equal(ptr.To(false)), "the CRD's schema default")
			Expect(runPolicy.ManagedBy).To(BeNil(), "managedBy is never defaulted")
			Expect(specs).NotTo(BeEmpty())
			for rtype, rs := range specs {
				Expect(rs.Replicas).NotTo(BeNil(), "%s replicas", rtype)
				Expect(rs.RestartPolicy).NotTo(BeEmpty(), "%s restartPolicy", rtype)
				for _, c := range rs.Template.Spec.Containers {
					Expect(c.Name).NotTo(BeEmpty(), "%s container name", rtype)
				}
				if port, ok := defaultPort[kind]; ok {
					Expect(rs.Template.Spec.Containers[0].Ports).To(ContainElement(port), "%s ports", rtype)
				}
			}
			if kind == "MPIJob" {
				// The sample gives no restartPolicy and no container names.
				for _, rs := range specs {
					Expect(rs.RestartPolicy).To(Equal(kubeflowv1.RestartPolicyNever))
					Expect(rs.Template.Spec.Containers[0].Name).To(Equal(kubeflowv1.MPIJobDefaultContainerName))
				}
			}
		},
		Entry("PyTorchJob", "PyTorchJob"),
		Entry("TFJob", "TFJob"),
		Entry("MPIJob", "MPIJob"),
		Entry("XGBoostJob", "XGBoostJob"),
	)

	It("accepts an omitted Master replicas and stores 1", func(ctx context.Context) {
		job := pytorchJob(ns, "no-master-replicas")
		Expect(k8s.Create(ctx, job)).To(Succeed())
		var got kubeflowv1.PyTorchJob
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(job), &got)).To(Succeed())
		master := got.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster]
		Expect(master.Replicas).To(Equal(ptr.To[int32](1)))
		Expect(master.RestartPolicy).To(Equal(kubeflowv1.RestartPolicyOnFailure))
		// Protocol TCP is the CRD schema's default (from the core Pod schema).
		Expect(master.Template.Spec.Containers[0].Ports).To(ConsistOf(corev1.ContainerPort{Name: "pytorchjob-port", ContainerPort: 23456, Protocol: corev1.ProtocolTCP}))
	})

	It("rejects a PyTorchJob with 2 Master replicas, naming the field", func(ctx context.Context) {
		job := pytorchJob(ns, "two-masters")
		job.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeMaster].Replicas = ptr.To[int32](2)
		err := k8s.Create(ctx, job)
		Expect(errorMessage(err)).To(Equal(`admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: ` +
			`spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1`))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "422 Invalid")
		var statusErr *apierrors.StatusError
		Expect(err).To(BeAssignableToTypeOf(statusErr))
		Expect(err.(*apierrors.StatusError).Status().Details.Causes).To(ConsistOf(metav1.StatusCause{
			Type: metav1.CauseTypeForbidden, Message: "Forbidden: must be 1", Field: "spec.pytorchReplicaSpecs[Master].replicas",
		}))
	})

	It("rejects an MPIJob without a Launcher", func(ctx context.Context) {
		obj := seedObject("MPIJob", ns)
		specs, _, _ := unstructuredMap(obj.Object, "spec", "mpiReplicaSpecs")
		delete(specs, "Launcher")
		err := k8s.Create(ctx, obj)
		Expect(errorMessage(err)).To(Equal(`admission webhook "validator.mpijob.training-operator.kubeflow.org" denied the request: ` +
			`spec.mpiReplicaSpecs[Launcher]: Required value: must be present`))
	})

	It("rejects a TFJob with a Chief and a Master after normalizing the type names", func(ctx context.Context) {
		obj := seedObject("TFJob", ns)
		specs, _, _ := unstructuredMap(obj.Object, "spec", "tfReplicaSpecs")
		specs["chief"], specs["Master"] = specs["Chief"], specs["Chief"]
		delete(specs, "Chief")
		err := k8s.Create(ctx, obj)
		Expect(errorMessage(err)).To(Equal(`admission webhook "validator.tfjob.training-operator.kubeflow.org" denied the request: ` +
			`spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role`))
	})

	It("rejects a name whose pod names would be too long, naming the longest", func(ctx context.Context) {
		name := "j" + strings.Repeat("x", 54)
		job := pytorchJob(ns, name)
		job.Spec.PyTorchReplicaSpecs[kubeflowv1.PyTorchJobReplicaTypeWorker].Replicas = ptr.To[int32](100)
		err := k8s.Create(ctx, job)
		Expect(errorMessage(err)).To(Equal(fmt.Sprintf(`admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: `+
			`metadata.name: Invalid value: %q: must be no more than 53 characters: the child name "%s-worker-99" would be 65 characters, `+
			`more than the 63 allowed for a pod hostname or Service name (DNS-1035 label)`, name, name)))
	})

	It("rejects a change of managedBy", func(ctx context.Context) {
		job := pytorchJob(ns, "managed")
		job.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.MultiKueueController)
		Expect(k8s.Create(ctx, job)).To(Succeed())
		job.Spec.RunPolicy.ManagedBy = ptr.To(kubeflowv1.KubeflowJobsController)
		err := k8s.Update(ctx, job)
		Expect(errorMessage(err)).To(Equal(`admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: ` +
			`spec.runPolicy.managedBy: Invalid value: "kubeflow.org/training-operator": field is immutable`))

		// Other updates still go through (and keep the defaults).
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
		job.Spec.RunPolicy.Suspend = ptr.To(true)
		Expect(k8s.Update(ctx, job)).To(Succeed())
		Expect(job.Spec.RunPolicy.ManagedBy).To(Equal(ptr.To(kubeflowv1.MultiKueueController)))
	})

	It("returns the nProcPerNode deprecation warning", func(ctx context.Context) {
		job := pytorchJob(ns, "elastic")
		job.Spec.ElasticPolicy = &kubeflowv1.ElasticPolicy{NProcPerNode: ptr.To[int32](2)}
		before := warnings.count()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Expect(warnings.since(before)).To(ContainElement(webhooks.NProcPerNodeDeprecationWarning))
	})

	It("rejects unknown fields with strict field validation, naming the field", func(ctx context.Context) {
		obj := yamlObject(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: typo
spec:
  pytorchReplicaSpecs:
    Worker:
      replicaz: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: example.com/train:v1
`, ns)
		// kubectl create --validate=strict. (controller-runtime's
		// CreateOptions.Raw.FieldValidation is overwritten by its own
		// FieldValidation field, so that one must be used.)
		err := k8s.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))
		Expect(errorMessage(err)).To(ContainSubstring(`unknown field "spec.pytorchReplicaSpecs.Worker.replicaz"`))
		Expect(apierrors.IsBadRequest(err)).To(BeTrue())
	})

	It("lists only the enabled kinds in the webhook configurations", func(ctx context.Context) {
		mutating, validating := webhookNames(ctx)
		Expect(mutating).To(ConsistOf(
			"defaulter.pytorchjob.training-operator.kubeflow.org", "defaulter.tfjob.training-operator.kubeflow.org",
			"defaulter.mpijob.training-operator.kubeflow.org", "defaulter.xgboostjob.training-operator.kubeflow.org",
			"defaulter.paddlejob.training-operator.kubeflow.org"))
		Expect(validating).To(ConsistOf(
			"validator.pytorchjob.training-operator.kubeflow.org", "validator.tfjob.training-operator.kubeflow.org",
			"validator.mpijob.training-operator.kubeflow.org", "validator.xgboostjob.training-operator.kubeflow.org",
			"validator.paddlejob.training-operator.kubeflow.org"))

		// So creating a job of the disabled kind is not blocked by a webhook
		// nobody serves (v1 rejected it: failurePolicy Fail).
		job := &kubeflowv1.JAXJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "jax"},
			Spec: kubeflowv1.JAXJobSpec{JAXReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{
				kubeflowv1.JAXJobReplicaTypeWorker: {Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "jax", Image: "example.com/jax:v1"}}}}},
			}},
		}
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Expect(job.Spec.JAXReplicaSpecs[kubeflowv1.JAXJobReplicaTypeWorker].Replicas).To(BeNil(), "not defaulted: not served")
	})

	It("injects the CA bundle and points the webhooks at the client URL", func(ctx context.Context) {
		var secret corev1.Secret
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: secretName}, &secret)).To(Succeed())
		Expect(secret.Data).To(HaveKey(cert.CACertKey))
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		Expect(k8s.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &v)).To(Succeed())
		for _, w := range v.Webhooks {
			Expect(bytes.Equal(w.ClientConfig.CABundle, secret.Data[cert.CACertKey])).To(BeTrue(), w.Name)
			Expect(w.ClientConfig.Service).To(BeNil(), w.Name)
			Expect(*w.ClientConfig.URL).To(MatchRegexp(`^https://127\.0\.0\.1:\d+/validate-kubeflow-org-v1-[a-z]+job$`), w.Name)
		}
	})

	It("restores the configurations when a re-applied manifest resets them", func(ctx context.Context) {
		objs, err := renderKustomization(configWebhookDir())
		Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if o.GetObjectKind().GroupVersionKind().Kind != "ValidatingWebhookConfiguration" {
				continue
			}
			var cur admissionregistrationv1.ValidatingWebhookConfiguration
			Expect(k8s.Get(ctx, client.ObjectKey{Name: o.GetName()}, &cur)).To(Succeed())
			o.SetResourceVersion(cur.ResourceVersion)
			Expect(k8s.Update(ctx, o)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			_, validating := webhookNames(ctx)
			g.Expect(validating).To(HaveLen(5))
		}, timeout, interval).Should(Succeed())
		Eventually(func() error {
			return k8s.Create(ctx, pytorchJob(ns, "after-reapply"), client.DryRunAll)
		}, timeout, interval).Should(Succeed())
	})

	It("explains itself through kubectl", func(ctx context.Context) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			Fail("kubectl not found in PATH: make test puts the control plane's kubectl there (hack/controlplane.sh builds it)")
		}
		cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", env.KubeconfigPath(), "create", "-n", ns, "-f", "-")
		cmd.Stdin = strings.NewReader(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bad
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: example.com/train:v1
`)
		out, err := cmd.CombinedOutput()
		Expect(err).To(HaveOccurred())
		GinkgoWriter.Printf("kubectl create: %s\n", out)
		Expect(string(out)).To(ContainSubstring(`The PyTorchJob "bad" is invalid: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1`))
	})
})

// unstructuredMap returns the map at a path of an unstructured object.
func unstructuredMap(obj map[string]any, path ...string) (map[string]any, bool, error) {
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("no map at %s", p)
		}
		cur = next
	}
	return cur, true, nil
}
