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

// Package webhook_test runs the admission webhooks and the built-in
// certificate management in-process against a real kube-apiserver
// (harness/cluster). The generated webhook configurations (config/webhook,
// rendered like kustomize does) are installed as in a deployment; the
// operator injects its CA bundle and, since the local cluster has no
// kube-proxy, points them at https://127.0.0.1:<port> (webhook.clientURL).
package webhook_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/internal/config"
	"github.com/seed-d8a409e9/training-operator/internal/operator"
	"github.com/seed-d8a409e9/training-operator/internal/serving/cert"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/test/util"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond

	// operatorNamespace holds the certificate Secret.
	operatorNamespace = "kubeflow"
	secretName        = "training-operator-webhook-cert"
	// disabledKind is left out of the enabled schemes.
	disabledKind = kubeflowv1.JAXJobKind
)

var (
	env      *cluster.Cluster
	restCfg  *rest.Config
	k8s      client.Client
	warnings = &warningRecorder{}
	readyz   healthz.Checker
	stopMgr  context.CancelFunc
	mgrDone  chan error
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Admission webhooks integration")
}

// The suite is one Go test to hack/testsummary: a spec that called Skip()
// must fail it here, or the skip would pass unseen.
var _ = ReportAfterSuite("no skipped specs", func(r Report) {
	if skipped := util.SkippedSpecs(r); len(skipped) > 0 {
		Fail(fmt.Sprintf("%d specs did not run on the local control plane, which has everything they need:\n%s",
			len(skipped), strings.Join(skipped, "\n")))
	}
})

var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = cluster.Start(ctx, cluster.Options{Nodes: 1, Logf: func(f string, a ...any) { GinkgoWriter.Printf(f+"\n", a...) }})
	Expect(err).NotTo(HaveOccurred())
	restCfg = env.RESTConfig()
	restCfg.QPS, restCfg.Burst = 200, 400
	Expect(util.InstallCRDs(ctx, restCfg, filepath.Join(util.RepoRoot(), "config", "crd", "bases"))).To(Succeed())

	clientCfg := rest.CopyConfig(restCfg)
	clientCfg.WarningHandler = warnings
	k8s, err = client.New(clientCfg, client.Options{Scheme: util.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())

	// Install the webhook configurations as `kubectl apply -k config/webhook`
	// would: service references, no CA bundle yet.
	objs, err := renderKustomization(configWebhookDir())
	Expect(err).NotTo(HaveOccurred())
	Expect(objs).To(HaveLen(2))
	for _, o := range objs {
		Expect(k8s.Create(ctx, o)).To(Succeed())
	}

	startOperator()

	// Ready: certificates in place, webhook server started ...
	Eventually(func() error { return readyz(nil) }, timeout, interval).Should(Succeed())
	// ... and the API server reaches it (a dry-run create goes through both webhooks).
	Eventually(func() error {
		return k8s.Create(ctx, seedObject("PyTorchJob", "default"), client.DryRunAll)
	}, timeout, interval).Should(Succeed())
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	if stopMgr != nil {
		stopMgr()
		Eventually(mgrDone, timeout).Should(Receive(BeNil()))
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// startOperator runs a manager with the webhooks of every kind but
// disabledKind and the built-in certificates, serving on 127.0.0.1.
func startOperator() {
	port := freePort()
	enabled := []string{}
	for _, k := range kinds.Names() {
		if k != disabledKind {
			enabled = append(enabled, k)
		}
	}
	// The operator's wiring without its controllers.
	cfg := &configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults_Configuration(cfg)
	cfg.EnabledSchemes = enabled
	cfg.Webhook.Host, cfg.Webhook.Port, cfg.Webhook.CertDir = "127.0.0.1", ptr.To(int32(port)), GinkgoT().TempDir()
	cfg.Webhook.SecretName, cfg.Webhook.ServiceName = secretName, "training-operator"
	cfg.Webhook.ClientURL = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.Metrics.BindAddress, cfg.Health.ProbeBindAddress = "0", "0"
	cfg.LeaderElection.LeaderElect = false
	Expect(config.Validate(cfg)).To(BeEmpty())
	op, err := operator.New(restCfg, cfg, operator.Overrides{CertNamespace: operatorNamespace, NoControllers: true})
	Expect(err).NotTo(HaveOccurred())
	mgr := op.Manager
	readyz = op.WebhookReady
	Expect(readyz(nil)).To(MatchError(cert.NotReadyMessage))

	var ctx context.Context
	ctx, stopMgr = context.WithCancel(context.Background())
	mgrDone = make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		mgrDone <- mgr.Start(ctx)
	}()
}

func freePort() int {
	ports, err := childproc.FreePorts(1)
	Expect(err).NotTo(HaveOccurred())
	return ports[0]
}

// newNamespace creates a fresh namespace for one test.
func newNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "wh-" + rand.String(6)}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// webhookNames lists the webhooks of the two installed configurations.
func webhookNames(ctx context.Context) (mutating, validating []string) {
	var m admissionregistrationv1.MutatingWebhookConfiguration
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	Expect(k8s.Get(ctx, client.ObjectKey{Name: webhooks.MutatingWebhookConfigurationName}, &m)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKey{Name: webhooks.ValidatingWebhookConfigurationName}, &v)).To(Succeed())
	for _, w := range m.Webhooks {
		mutating = append(mutating, w.Name)
	}
	for _, w := range v.Webhooks {
		validating = append(validating, w.Name)
	}
	return mutating, validating
}

// warningRecorder collects the API server's warnings.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// since returns the warnings recorded after the first n.
func (w *warningRecorder) since(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs[n:]...)
}

func (w *warningRecorder) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.msgs)
}

// errorMessage is err's message, or "" for nil.
func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
