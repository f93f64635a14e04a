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

// Package kueueproc runs Kueue (sigs.k8s.io/kueue) out of cluster next to
// the local control plane, for the e2e suite and the bench: its CRDs, its
// configuration for either integration of our kinds, the process, and its
// webhooks registered by URL. hack/controlplane.sh --with-kueue builds the
// binary into the control-plane folder as "kueue", with the CRDs and
// webhook manifests of its module in "kueue-manifests".
package kueueproc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

const (
	// Namespace is Kueue's own namespace.
	Namespace = "kueue-system"
	// MetricsCerts is fixed in Kueue v0.17 when its internal cert
	// management is off; it exits at start without a key pair there.
	MetricsCerts = "/etc/kueue/metrics/certs"
	// QueueLabel names a job's LocalQueue.
	QueueLabel = "kueue.x-k8s.io/queue-name"
)

// Group is Kueue's API group and version.
var Group = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// BuiltinFrameworks are Kueue's own integrations of our kinds; its
// kubeflow.org/mpijob is mpi-operator's v2beta1 MPIJob, not ours.
var BuiltinFrameworks = []string{
	"kubeflow.org/pytorchjob", "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
	"kubeflow.org/paddlejob", "kubeflow.org/jaxjob",
}

// ExternalFrameworks are our six kinds as Kueue external frameworks,
// managed by the operator's own integration.
var ExternalFrameworks = []string{
	"PyTorchJob.v1.kubeflow.org", "TFJob.v1.kubeflow.org", "MPIJob.v1.kubeflow.org",
	"XGBoostJob.v1.kubeflow.org", "PaddleJob.v1.kubeflow.org", "JAXJob.v1.kubeflow.org",
}

// Mode is who creates and manages the Workloads of queued jobs.
type Mode struct {
	// Operator: the operator's integration (--kueue-integration=operator,
	// Kueue lists our kinds in externalFrameworks); else Kueue's own.
	Operator bool
	// BuiltinToo also keeps Kueue's own kubeflow.org integrations in
	// operator mode: the misconfiguration the operator must report.
	BuiltinToo bool
}

var (
	Builtin  = Mode{}
	Operator = Mode{Operator: true}
)

func (m Mode) String() string {
	switch {
	case m.Operator && m.BuiltinToo:
		return "operator+builtin"
	case m.Operator:
		return "operator"
	}
	return "builtin"
}

// BuiltinOn reports whether Kueue's own kubeflow.org integrations run.
func (m Mode) BuiltinOn() bool { return !m.Operator || m.BuiltinToo }

// WaitForPodsReady is Kueue's waitForPodsReady configuration section.
type WaitForPodsReady struct {
	Timeout           string
	BackoffBaseSecs   int
	BackoffLimitCount int
}

// Binaries returns Kueue's binary and manifests folder in the control
// plane's folder dir ($KUBEBUILDER_ASSETS).
func Binaries(dir string) (bin, manifests string, err error) {
	if dir == "" {
		return "", "", fmt.Errorf("$KUBEBUILDER_ASSETS is not set")
	}
	bin, manifests = filepath.Join(dir, "kueue"), filepath.Join(dir, "kueue-manifests")
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Errorf("no Kueue binary in %s (make controlplane-kueue builds it)", dir)
	}
	if _, err := os.Stat(filepath.Join(manifests, "webhook.yaml")); err != nil {
		return "", "", fmt.Errorf("no Kueue manifests in %s (make controlplane-kueue builds them)", manifests)
	}
	return bin, manifests, nil
}

// Install installs Kueue's CRDs and namespace.
func Install(ctx context.Context, cfg *rest.Config, c client.Client, manifests string) error {
	if err := util.InstallCRDs(ctx, cfg, filepath.Join(manifests, "crd")); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	return client.IgnoreAlreadyExists(c.Create(ctx, ns))
}

// Addresses are where a Kueue process listens.
type Addresses struct {
	Health  string // host:port of /readyz
	Webhook string // host:port of the webhook server
	CertDir string // the webhook server's tls.crt and tls.key
}

// Config is Kueue's configuration for mode (plus waitForPodsReady when
// set): batch/job, and our kinds through its own integrations or as
// external frameworks. Its metrics server is off.
func Config(mode Mode, wfpr *WaitForPodsReady, addr Addresses) string {
	host, port, _ := net.SplitHostPort(addr.Webhook)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
manageJobsWithoutQueueName: false
internalCertManagement:
  enable: false
leaderElection:
  leaderElect: false
health:
  healthProbeBindAddress: %s
# "0" turns the metrics server off; its certificate is still read at start.
metrics:
  bindAddress: "0"
webhook:
  host: %s
  port: %s
  certDir: %s
integrations:
  frameworks:
  - batch/job
`, Namespace, addr.Health, host, port, addr.CertDir)
	if mode.BuiltinOn() {
		for _, f := range BuiltinFrameworks {
			fmt.Fprintf(&b, "  - %s\n", f)
		}
	}
	if mode.Operator {
		// Kueue refuses a kind listed both ways: with its own integrations
		// on, only MPIJob (which they never cover) is external.
		b.WriteString("  externalFrameworks:\n")
		for _, f := range ExternalFrameworks {
			if !mode.BuiltinOn() || strings.HasPrefix(f, kubeflowv1.MPIJobKind+".") {
				fmt.Fprintf(&b, "  - %s\n", f)
			}
		}
	}
	if wfpr != nil {
		fmt.Fprintf(&b, `waitForPodsReady:
  timeout: %s
  blockAdmission: false
  requeuingStrategy:
    timestamp: Eviction
    backoffBaseSeconds: %d
    backoffLimitCount: %d
`, wfpr.Timeout, wfpr.BackoffBaseSecs, wfpr.BackoffLimitCount)
	}
	return b.String()
}

// Start runs Kueue on its configuration file; the caller waits for
// http://<health>/readyz.
func Start(bin, configPath, kubeconfig, logPath string) (*childproc.Process, error) {
	return childproc.Start(childproc.Spec{
		Name: "Kueue",
		Bin:  bin,
		// VisibilityOnDemand serves an aggregated API, which needs in-cluster wiring.
		Args: []string{"--config", configPath, "--kubeconfig", kubeconfig,
			"--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2"},
		LogPath: logPath,
	})
}

// EnsureMetricsCerts writes a throwaway key pair where Kueue reads its
// metrics certificate, unless a valid one is there (machines running
// several suites share the path; the metrics server itself is off).
func EnsureMetricsCerts() error {
	crt, key := filepath.Join(MetricsCerts, "tls.crt"), filepath.Join(MetricsCerts, "tls.key")
	if _, err := tls.LoadX509KeyPair(crt, key); err == nil {
		return nil
	}
	if _, err := WriteServingCert(MetricsCerts); err != nil {
		return fmt.Errorf("a metrics key pair for Kueue in %s: %w", MetricsCerts, err)
	}
	return nil
}

// WriteServingCert writes tls.crt and tls.key for 127.0.0.1 signed by a new
// CA into dir and returns the CA certificate (the webhooks' caBundle).
func WriteServingCert(dir string) ([]byte, error) {
	ca, err := util.NewCA("e2e-kueue-ca")
	if err != nil {
		return nil, err
	}
	leaf, err := ca.ServingCert("kueue-webhook")
	if err != nil {
		return nil, err
	}
	if err := util.WriteTLSFiles(dir, leaf); err != nil {
		return nil, err
	}
	return ca.CertPEM, nil
}
