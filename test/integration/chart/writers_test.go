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
	"path/filepath"
	"sync"
	"testing"
	"time"

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
	a, err := util.StartFullOperator(ctx, util.FullOperatorOptions{RESTConfig: c.admin, Namespace: ns, LeaderElection: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop() })
	other := util.DefaultConfiguration()
	other.EnabledSchemes = []string{"PyTorchJob"}
	b, err := util.StartFullOperator(ctx, util.FullOperatorOptions{RESTConfig: c.admin, Namespace: ns, LeaderElection: true, Config: other})
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
	const period = time.Minute
	time.Sleep(period) // the observation window: writes are counted, the operator is not awaited
	for _, w := range watchers {
		w.Stop()
	}
	wg.Wait()
	total := 0
	for _, n := range writes {
		total += n
	}
	// A watch starts with one ADDED event per existing object.
	t.Logf("%v in %s with two replicas of different settings (each object's first event is the watch's initial listing)", writes, period)
	if total > 2*len(writes)+2 {
		t.Errorf("%d writes in %s: the replicas undo each other's writes: %v", total, period, writes)
	}
}
