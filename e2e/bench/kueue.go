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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/e2e/kueueproc"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
)

const (
	// kueueProcess names Kueue among the control plane's processes.
	kueueProcess = "kueue"
	// kueueScenarioPrefix begins the kueue scenarios' names:
	// kueue-<mode>-<jobs>.
	kueueScenarioPrefix = "kueue-"
	// kueueNSLabel scopes Kueue's webhooks on our kinds to the kueue
	// scenarios' namespaces.
	kueueNSLabel     = "bench.training-operator.kubeflow.org/kueue"
	kueueWebhookName = "bench-kueue"
	kueueLocalQueue  = "bench"
	kueueFlavor      = "bench"
	// kueuePodCPU is each pod's request, the resource the queue's quota
	// covers; the quota holds every job of the scenario at once, so the
	// figures are the integrations' and not the quota's.
	kueuePodCPU = "100m"
)

// Figures the kueue scenarios add after the measurement window, beside the
// operator's CPU per job that every job scenario reports.
const (
	kueueCPUMetric      = "Kueue CPU / job"
	kueueTotalCPUMetric = "operator + Kueue CPU / job"
)

// kueueRunner is Kueue as the kueue scenarios run it, out of cluster.
type kueueRunner struct {
	bin, manifests, dir string
	proc                *childproc.Process
	webhooks            kueueproc.Webhooks
	health              string
	configPath          string
}

// kueueBurst (kueue-<mode>-<n>) is the burst of n 1+3 PyTorchJobs through
// one LocalQueue with Kueue running and the given integration making their
// Workloads: Kueue's own (builtin) or the operator's. Kueue's CPU is
// measured with the control plane's processes; after the window the
// scenario adds the operator's and Kueue's CPU per job side by side.
func kueueBurst(mode kueueproc.Mode, n int) scenario {
	return scenario{
		name: fmt.Sprintf("%s%s-%d", kueueScenarioPrefix, mode, n),
		before: func(ctx context.Context, e *env, res *Result) error {
			return e.startKueue(ctx, mode, res.Scenario, n)
		},
		run: func(ctx context.Context, e *env, res *Result) error {
			return burstJobs(ctx, e, res, n, func(job *kubeflowv1.PyTorchJob) {
				job.Labels = map[string]string{kueueproc.QueueLabel: kueueLocalQueue}
				for _, rs := range job.Spec.PyTorchReplicaSpecs {
					for i := range rs.Template.Spec.Containers {
						rs.Template.Spec.Containers[i].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(kueuePodCPU)}
					}
				}
			})
		},
		after: func(ctx context.Context, e *env, res *Result) error {
			if res.Jobs > 0 && res.Error == "" {
				j := float64(res.Jobs)
				op, kq := res.Footprint.CPUSeconds, res.Footprint.ControlPlaneCPUSeconds[kueueProcess]
				res.Metrics = append(res.Metrics,
					Metric{kueueCPUMetric, 1000 * kq / j, "ms"},
					Metric{kueueTotalCPUMetric, 1000 * (op + kq) / j, "ms"})
			}
			return e.stopKueue(ctx, mode, res.Scenario)
		},
	}
}

// startKueue installs Kueue's API (once), starts Kueue in mode with its
// webhooks, restarts the operator with its integration in operator mode,
// and makes the scenario's namespace with one LocalQueue on a ClusterQueue
// with quota for n jobs. It returns once a queued job's create comes back
// suspended.
func (e *env) startKueue(ctx context.Context, mode kueueproc.Mode, ns string, n int) error {
	if e.kueue == nil {
		bin, manifests, err := kueueproc.Binaries(os.Getenv("KUBEBUILDER_ASSETS"))
		if err != nil {
			return err
		}
		if err := kueueproc.EnsureMetricsCerts(); err != nil {
			return err
		}
		if err := kueueproc.Install(ctx, e.cluster.RESTConfig(), e.client, manifests); err != nil {
			return err
		}
		dir := filepath.Join(filepath.Dir(e.operator.logPath), "kueue")
		ca, err := kueueproc.WriteServingCert(filepath.Join(dir, "certs"))
		if err != nil {
			return err
		}
		ports, err := childproc.FreePorts(2)
		if err != nil {
			return err
		}
		e.kueue = &kueueRunner{bin: bin, manifests: manifests, dir: dir,
			health: fmt.Sprintf("127.0.0.1:%d", ports[1]),
			webhooks: kueueproc.Webhooks{Name: kueueWebhookName, Manifests: manifests, CA: ca,
				Addr:  fmt.Sprintf("127.0.0.1:%d", ports[0]),
				Scope: &metav1.LabelSelector{MatchLabels: map[string]string{kueueNSLabel: "true"}}},
		}
	}
	k := e.kueue
	k.configPath = filepath.Join(k.dir, fmt.Sprintf("config-%s.yaml", mode))
	config := kueueproc.Config(mode, nil, kueueproc.Addresses{Health: k.health, Webhook: k.webhooks.Addr, CertDir: filepath.Join(k.dir, "certs")})
	if err := os.WriteFile(k.configPath, []byte(config), 0o644); err != nil {
		return err
	}
	if mode.Operator {
		if err := e.operator.restartWith(ctx, "--kueue-integration=operator", "--kueue-config="+k.configPath); err != nil {
			return fmt.Errorf("operator with its Kueue integration: %w", err)
		}
	}
	proc, err := kueueproc.Start(k.bin, k.configPath, e.cluster.KubeconfigPath(), filepath.Join(k.dir, fmt.Sprintf("kueue-%s.log", ns)))
	if err != nil {
		return err
	}
	k.proc = proc
	if err := proc.WaitReady(ctx, "http://"+k.health+"/readyz", 2*time.Minute, 200*time.Millisecond); err != nil {
		return err
	}
	if err := k.webhooks.Register(ctx, e.client, mode); err != nil {
		return err
	}
	if err := e.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{kueueNSLabel: "true"}}}); err != nil {
		return err
	}
	quota := resource.MustParse(kueuePodCPU)
	quota.Mul(int64(4 * n))
	objs := []*unstructured.Unstructured{
		kueueproc.Object("ResourceFlavor", "", kueueFlavor, map[string]any{}),
		kueueproc.Object("ClusterQueue", "", ns, map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{string(corev1.ResourceCPU)},
				"flavors": []any{map[string]any{
					"name":      kueueFlavor,
					"resources": []any{map[string]any{"name": string(corev1.ResourceCPU), "nominalQuota": quota.String()}},
				}},
			}},
		}),
		kueueproc.Object("LocalQueue", ns, kueueLocalQueue, map[string]any{"clusterQueue": ns}),
	}
	for _, o := range objs {
		if err := client.IgnoreAlreadyExists(e.client.Create(ctx, o)); err != nil {
			return err
		}
	}
	// Jobs created before Kueue knows the queue would sit inadmissible, and
	// created before its webhooks answer, would start unqueued.
	return waitFor(ctx, 2*time.Minute, "Kueue's queues active and its admission up", func() (bool, string) {
		for _, o := range objs[1:] {
			if err := e.client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return false, err.Error()
			}
			if status, _ := kueueproc.Condition(o, "Active"); status != string(metav1.ConditionTrue) {
				return false, o.GetKind() + " not active"
			}
		}
		if err := kueueproc.AdmissionReady(ctx, e.client, ns, kueueLocalQueue); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// stopKueue clears the scenario's namespace and queues while Kueue and the
// integration still run (their finalizers need them), stops Kueue and
// brings the operator back to its arguments.
func (e *env) stopKueue(ctx context.Context, mode kueueproc.Mode, ns string) error {
	k := e.kueue
	if k == nil || k.proc == nil {
		return nil
	}
	err := e.clear(ctx, ns)
	for _, o := range []*unstructured.Unstructured{kueueproc.Object("ClusterQueue", "", ns, nil), kueueproc.Object("ResourceFlavor", "", kueueFlavor, nil)} {
		if derr := client.IgnoreNotFound(e.client.Delete(ctx, o)); derr != nil {
			err = errors.Join(err, derr)
			continue
		}
		err = errors.Join(err, waitFor(ctx, 2*time.Minute, o.GetKind()+" deleted", func() (bool, string) {
			gerr := e.client.Get(ctx, client.ObjectKeyFromObject(o), o)
			return apierrors.IsNotFound(gerr), fmt.Sprintf("get: %v", gerr)
		}))
	}
	err = errors.Join(err, k.webhooks.Unregister(ctx, e.client))
	k.proc.Stop(30 * time.Second)
	k.proc = nil
	if mode.Operator {
		err = errors.Join(err, e.operator.restartWith(ctx))
	}
	return err
}

// kueueTargets compare the operator's integration with Kueue's own in the
// same repetition: operator + Kueue CPU per job, and create → Running p99.
func kueueTargets(res *Result, byName map[string]*Result) []Target {
	var n int
	name := res.Scenario
	if _, err := fmt.Sscanf(name, kueueScenarioPrefix+kueueproc.Operator.String()+"-%d", &n); err != nil {
		return nil
	}
	base := fmt.Sprintf("%s%s-%d", kueueScenarioPrefix, kueueproc.Operator, n)
	suffix := name[len(base):]
	builtin := byName[fmt.Sprintf("%s%s-%d", kueueScenarioPrefix, kueueproc.Builtin, n)+suffix]
	if builtin == nil || builtin.Error != "" {
		return nil
	}
	var out []Target
	if op, b := metric(res, kueueTotalCPUMetric), metric(builtin, kueueTotalCPUMetric); op > 0 && b > 0 {
		out = append(out, Target{
			Figure: fmt.Sprintf("%s: %s vs %s (%.1f ms vs %.1f ms)", name, kueueTotalCPUMetric, builtin.Scenario, op, b),
			Value:  op / b, Goal: fmt.Sprintf("<= %.2f", kueueCPURatioGoal), Met: op/b <= kueueCPURatioGoal,
		})
	}
	const p99 = "create→Running p99"
	if op, b := metric(res, p99), metric(builtin, p99); op > 0 && b > 0 {
		out = append(out, Target{
			Figure: fmt.Sprintf("%s: %s vs %s (%.1f s vs %.1f s)", name, p99, builtin.Scenario, op, b),
			Value:  op / b, Goal: "<= 1.00", Met: op <= b,
		})
	}
	return out
}
