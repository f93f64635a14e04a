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
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

// kwokHookSucceeds makes KWOK end the uninstall hook's pod with exit code 0
// (the local cluster runs no containers), so that "helm uninstall" runs
// the hook to completion; checkUninstallHook runs what the container would.
var kwokHookSucceeds = []string{"--set-json", `uninstallHook={"podAnnotations":{"pod-exit.stage.kwok.x-k8s.io/exit-code":"0"}}`}

// checkUninstallHook runs what the chart's post-delete hook runs
// (engine.ReleaseAllPods, as "manager --release-pod-finalizers") under the
// hook's own installed RBAC, against pods in podNS: the operator's pods,
// live and terminating, lose the tracking finalizer; a pod the operator did
// not make keeps it.
func (c *liveCluster) checkUninstallHook(t *testing.T, release, ns, podNS, scope string) {
	t.Helper()
	ctx := t.Context()
	hooks, err := parseManifests(c.helm(t, "get", "hooks", release, "--namespace", ns))
	if err != nil {
		t.Fatal(err)
	}
	var sa string
	for _, o := range hooks {
		if o.GetKind() == "Job" {
			continue
		}
		o = o.DeepCopy()
		o.SetAnnotations(nil)
		if err := c.k8s.Create(ctx, o); err != nil {
			t.Fatalf("creating hook %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		t.Cleanup(func() { _ = c.k8s.Delete(ctx, o) })
		if o.GetKind() == "ServiceAccount" {
			sa = fmt.Sprintf("system:serviceaccount:%s:%s", o.GetNamespace(), o.GetName())
		}
	}
	if sa == "" {
		t.Fatalf("no hook ServiceAccount in %s", hooks.keys())
	}

	pod := func(name string, labeled bool) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: podNS, Name: name, Finalizers: []string{kubeflowv1.PodTrackingFinalizer}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if labeled {
			p.Labels = map[string]string{kubeflowv1.OperatorNameLabel: "pytorchjob-controller"}
		}
		if err := c.k8s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	suffix := rand.String(5)
	live, deleted, foreign := pod("live-"+suffix, true), pod("deleted-"+suffix, true), pod("foreign-"+suffix, false)
	t.Cleanup(func() {
		_ = c.k8s.Patch(ctx, foreign, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
		_ = c.k8s.Delete(ctx, foreign)
	})
	if err := c.k8s.Delete(ctx, deleted, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}

	cfg := rest.CopyConfig(c.admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: sa}
	hookClient, err := client.New(cfg, client.Options{Scheme: util.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	n, err := engine.ReleaseAllPods(ctx, hookClient, scope)
	if err != nil {
		t.Fatalf("the hook's RBAC does not suffice: %v", err)
	}
	if n < 2 {
		t.Errorf("released %d pods, want at least the 2 of this test", n)
	}
	var got corev1.Pod
	if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(live), &got); err != nil || slices.Contains(got.Finalizers, kubeflowv1.PodTrackingFinalizer) {
		t.Errorf("live pod: %v, finalizers %v", err, got.Finalizers)
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.k8s.Get(ctx, client.ObjectKeyFromObject(deleted), &corev1.Pod{})), nil
	}); err != nil {
		t.Errorf("the deleted pod is still there after its release: %v", err)
	}
	if err := c.k8s.Get(ctx, client.ObjectKeyFromObject(foreign), &got); err != nil || !slices.Contains(got.Finalizers, kubeflowv1.PodTrackingFinalizer) {
		t.Errorf("a pod the operator did not make: %v, finalizers %v", err, got.Finalizers)
	}
	_ = c.k8s.Delete(ctx, live)
}
