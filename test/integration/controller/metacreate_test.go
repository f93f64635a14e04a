package controller_test

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed-d8a409e9/training-operator/internal/kube/metacreate"
)

// The engine's pods and Services are created with metadata-only replies
// (internal/kube/metacreate): what the API server stores must be what was sent,
// and what comes back must be the stored object's metadata only.
var _ = Describe("Metadata-only creates", func() {
	var (
		ns       string
		c        *metacreate.Client
		accepted []string // Accept headers of the POSTs sent
	)
	BeforeEach(func(ctx context.Context) {
		ns = newNamespace(ctx)
		accepted = nil
		cfg := rest.CopyConfig(restCfg)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodPost {
					accepted = append(accepted, req.Header.Get("Accept"))
				}
				return rt.RoundTrip(req)
			})
		})
		hc, err := rest.HTTPClientFor(cfg)
		Expect(err).NotTo(HaveOccurred())
		c, err = metacreate.New(k8s, cfg, hc)
		Expect(err).NotTo(HaveOccurred())
	})

	It("creates a pod as sent and reads back its metadata, not its defaulted spec", func(ctx context.Context) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{
				Containers:    []corev1.Container{{Name: "c", Image: "busybox", Args: []string{"x"}}},
				RestartPolicy: corev1.RestartPolicyNever,
			},
		}
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(accepted).To(ConsistOf(HavePrefix("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata")))

		var stored corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), &stored)).To(Succeed())
		Expect(pod.UID).To(Equal(stored.UID))
		// Not equal to stored's: a scheduler may bind the pod in between.
		Expect(pod.ResourceVersion).NotTo(BeEmpty())
		Expect(pod.CreationTimestamp).To(Equal(stored.CreationTimestamp))
		Expect(pod.Labels).To(Equal(map[string]string{"a": "b"}))
		Expect(stored.Labels).To(Equal(map[string]string{"a": "b"}))
		Expect(stored.Spec.Containers).To(HaveLen(1))
		Expect(stored.Spec.Containers[0].Args).To(Equal([]string{"x"}))
		Expect(stored.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		// The reply carried no spec: the server's defaults were not read back.
		Expect(stored.Spec.Containers[0].TerminationMessagePath).NotTo(BeEmpty())
		Expect(pod.Spec.Containers[0].TerminationMessagePath).To(BeEmpty())

		err := c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}, Spec: pod.Spec})
		Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "got %v", err)
	})

	It("creates a Service the same way, and anything else through the wrapped client", func(ctx context.Context) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"a": "b"},
				Ports: []corev1.ServicePort{{Name: "p", Port: 23456}}},
		}
		Expect(c.Create(ctx, svc)).To(Succeed())
		var stored corev1.Service
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(svc), &stored)).To(Succeed())
		Expect(svc.UID).To(Equal(stored.UID))
		Expect(stored.Spec.Ports).To(HaveLen(1))
		Expect(stored.Spec.Ports[0].Port).To(Equal(int32(23456)))
		Expect(stored.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))

		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}, Data: map[string]string{"k": "v"}}
		Expect(c.Create(ctx, cm)).To(Succeed())
		Expect(cm.UID).NotTo(BeEmpty())
		Expect(accepted).To(HaveLen(1), "the ConfigMap went through the wrapped client, not the metadata-only path")
	})

	It("passes create options on (dry run stores nothing)", func(ctx context.Context) {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "dry", Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		Expect(c.Create(ctx, pod, client.DryRunAll)).To(Succeed())
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	})
})

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
