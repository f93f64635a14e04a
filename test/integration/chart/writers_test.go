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

package chart_test

import (
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/seed-d8a409e9/training-operator/test/util"
)

// TestBuiltInCertificatesOneWriter: two replicas with different settings
// (as in a rolling upgrade: another client URL, other enabled kinds) run
// side by side; only the leader writes the certificate Secret and the
// webhook configurations, so they do not undo each other's writes, and the
// other replica serves the leader's certificates.
func TestBuiltInCertificatesOneWriter(t *testing.T) {
	c := startCluster(t)
	ctx := t.Context()
	if err := util.InstallCRDs(ctx, c.admin, filepath.Join(util.RepoRoot(), "config", "crd", "bases")); err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	// Each replica checks its certificates every resync, reading the Secret
	// from the API server: the recorded reads show both replicas at work in
	// the observation window.
	const resync = 2 * time.Second
	cfgA, logA := util.RecordRequests(c.admin, ns)
	cfgB, logB := util.RecordRequests(c.admin, ns)
	a, err := util.StartFullOperator(ctx, util.FullOperatorOptions{RESTConfig: cfgA, Namespace: ns, LeaderElection: true, CertResyncPeriod: resync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop() })
	other := util.DefaultConfiguration()
	other.EnabledSchemes = []string{"PyTorchJob"}
	b, err := util.StartFullOperator(ctx, util.FullOperatorOptions{RESTConfig: cfgB, Namespace: ns, LeaderElection: true, Config: other, CertResyncPeriod: resync})
	if err != nil {
		t.Fatalf("the second replica never served the leader's certificates: %v", err)
	}
	t.Cleanup(func() { _ = b.Stop() })

	cs, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		t.Fatal(err)
	}
	// Both replicas are ready (the second one from the leader's Secret):
	// count the writes from here on.
	writes := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	watchers := []watch.Interface{}
	for name, start := range map[string]func() (watch.Interface, error){
		"ValidatingWebhookConfiguration": func() (watch.Interface, error) {
			return cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Watch(ctx, metav1.ListOptions{})
		},
		"MutatingWebhookConfiguration": func() (watch.Interface, error) {
			return cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Watch(ctx, metav1.ListOptions{})
		},
		"Secret": func() (watch.Interface, error) {
			return cs.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{})
		},
	} {
		w, err := start()
		if err != nil {
			t.Fatal(err)
		}
		watchers = append(watchers, w)
		wg.Go(func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Modified || ev.Type == watch.Added {
					switch o := ev.Object.(type) {
					case *admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfiguration, *corev1.Secret:
						mu.Lock()
						writes[name+"/"+o.(metav1.Object).GetName()]++
						mu.Unlock()
					}
				}
			}
		})
	}
	// The window ends once each replica has checked its certificates three
	// more times, each check a chance to undo the other's writes.
	secretReads := func(r util.Request) bool {
		return r.Method == http.MethodGet && r.Resource() == "secrets/training-operator-webhook-cert" && r.Code == http.StatusOK
	}
	fromA, fromB := logA.Count(secretReads), logB.Count(secretReads)
	deadline := time.Now().Add(time.Minute)
	for logA.Count(secretReads) < fromA+3 || logB.Count(secretReads) < fromB+3 {
		if time.Now().After(deadline) {
			t.Fatalf("replicas read the certificate Secret %d and %d times in a minute, want 3 each every %s",
				logA.Count(secretReads)-fromA, logB.Count(secretReads)-fromB, resync)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range watchers {
		w.Stop()
	}
	wg.Wait()
	// A watch starts with one ADDED event per existing object; none may
	// follow it.
	want := map[string]int{
		"Secret/training-operator-webhook-cert":                                   1,
		"ValidatingWebhookConfiguration/validator.training-operator.kubeflow.org": 1,
		"MutatingWebhookConfiguration/defaulter.training-operator.kubeflow.org":   1,
	}
	if diff := cmp.Diff(want, writes); diff != "" {
		t.Errorf("events per object while both replicas checked their certificates 3 times (-want +got; beyond the first, writes: the replicas undo each other's):\n%s", diff)
	}
}
