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

// Package hostile_test sends malformed and hostile jobs through a real API
// server (harness/cluster) to the operator running in-process with its webhooks
// and controllers, and checks that each is either rejected with a field
// path or accepted and handled (a condition, an event, or a running job),
// while the operator never panics nor hot-loops, measured on
// controller-runtime's own reconcile metrics.
package hostile_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/kinds"
	"github.com/seed-d8a409e9/training-operator/test/util"
)

const (
	timeout = 60 * time.Second
	poll    = 200 * time.Millisecond
	// operatorNamespace holds the certificate Secret.
	operatorNamespace = "kubeflow"
)

// suite is one local cluster with the whole operator running in-process.
type suite struct {
	env      *cluster.Cluster
	k8s      client.Client
	ns       string
	operator *util.FullOperator
	warnings *warningLog
}

func start(t *testing.T) *suite {
	t.Helper()
	env := util.StartTestCluster(t, cluster.Options{Nodes: 2})
	util.CaptureOperatorLogs(t, 300)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	admin := env.RESTConfig()
	admin.QPS, admin.Burst = 200, 400
	s := &suite{env: env, warnings: &warningLog{}}
	clientCfg := env.RESTConfig()
	clientCfg.QPS, clientCfg.Burst = 200, 400
	clientCfg.WarningHandler = s.warnings
	var err error
	if s.k8s, err = client.New(clientCfg, client.Options{Scheme: util.Scheme()}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{operatorNamespace, "hostile"} {
		if err := s.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	s.ns = "hostile"
	// The operator creates the webhook configurations (pointing at
	// 127.0.0.1, see webhook.clientURL) with its CA bundle.
	if s.operator, err = util.StartFullOperator(ctx, util.FullOperatorOptions{RESTConfig: admin, Namespace: operatorNamespace}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.operator.Stop(); err != nil {
			t.Errorf("stopping the operator: %v", err)
		}
	})
	// The API server reaches both webhooks once the CA bundle is in place.
	probe := pytorch("probe").Obj()
	probe.Namespace = s.ns
	if err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		return s.k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll) == nil, nil
	}); err != nil {
		t.Fatalf("webhooks not reachable: %v", err)
	}
	return s
}

// warningLog keeps the API server's warnings (e.g. pruned unknown fields).
type warningLog struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// reconcileMetrics are controller-runtime's per-controller counters, read
// from the in-process registry the operator's manager registers them in.
type reconcileMetrics struct {
	total, errors, panics map[string]float64 // by controller
	webhookPanics         float64
}

func readMetrics(t *testing.T) reconcileMetrics {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := reconcileMetrics{total: map[string]float64{}, errors: map[string]float64{}, panics: map[string]float64{}}
	byController := func(mf *dto.MetricFamily, into map[string]float64) {
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "controller" {
					into[l.GetValue()] += s.GetCounter().GetValue()
				}
			}
		}
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "controller_runtime_reconcile_total":
			byController(mf, m.total)
		case "controller_runtime_reconcile_errors_total":
			byController(mf, m.errors)
		case "controller_runtime_reconcile_panics_total":
			byController(mf, m.panics)
		case "controller_runtime_webhook_panics_total":
			for _, s := range mf.GetMetric() {
				m.webhookPanics += s.GetCounter().GetValue()
			}
		}
	}
	return m
}

// delta is after - before, per controller.
func delta(after, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

func sum(m map[string]float64) float64 {
	var total float64
	for _, v := range m {
		total += v
	}
	return total
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// toUnstructured turns a typed job into a map that can carry what the Go
// types cannot express (nulls, wrong types, unknown fields).
func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// setField sets a value at a path in an unstructured object, creating maps on the way.
func setField(t *testing.T, u *unstructured.Unstructured, value any, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
		t.Fatalf("setting %v: %v", path, err)
	}
}

// conditions returns a job's conditions as Type=Status plus the reason of
// each True one, read through unstructured so every kind works.
func (s *suite) conditions(ctx context.Context, obj client.Object) (map[string]string, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kubeflowv1.GroupVersion.WithKind(kindOf(obj)))
	if err := s.k8s.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: obj.GetName()}, u); err != nil {
		return nil, err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := map[string]string{}
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["status"] == "True" {
			out[fmt.Sprint(cm["type"])] = fmt.Sprintf("%v: %v", cm["reason"], cm["message"])
		}
	}
	return out, nil
}

func kindOf(obj client.Object) string { return util.KindOf(obj) }

// waitCondition waits until one of the condition types is True and returns it.
func (s *suite) waitCondition(ctx context.Context, obj client.Object, types ...kubeflowv1.JobConditionType) (string, error) {
	var got map[string]string
	var found string
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if got, err = s.conditions(ctx, obj); err != nil {
			return false, nil
		}
		for _, ct := range types {
			if msg, ok := got[string(ct)]; ok {
				found = string(ct) + " (" + msg + ")"
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("none of %v became True: %v; conditions %v", types, err, got)
	}
	return found, nil
}

// waitEvent waits for an event with the reason on the object and returns its message.
func (s *suite) waitEvent(ctx context.Context, obj client.Object, reason string) (string, error) {
	var msg string
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		var el corev1.EventList
		if err := s.k8s.List(ctx, &el, client.InNamespace(s.ns)); err != nil {
			return false, nil
		}
		for _, e := range el.Items {
			if e.InvolvedObject.Name == obj.GetName() && e.Reason == reason {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("no %s event on %s: %v", reason, obj.GetName(), err)
	}
	return msg, nil
}

// jobPods lists the pods of a job.
func (s *suite) jobPods(ctx context.Context, job string) ([]corev1.Pod, error) {
	var pl corev1.PodList
	err := s.k8s.List(ctx, &pl, client.InNamespace(s.ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job})
	return pl.Items, err
}

// fieldPaths are the fields named by an Invalid error's causes.
func fieldPaths(err error) []string {
	var out []string
	if se, ok := err.(apierrors.APIStatus); ok && se.Status().Details != nil {
		for _, c := range se.Status().Details.Causes {
			out = append(out, c.Field)
		}
	}
	return out
}

// jobsPerController counts the jobs of each kind in the namespace, keyed
// by controller name (<kind>-controller).
func (s *suite) jobsPerController(ctx context.Context, t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, kind := range kinds.Names() {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(kubeflowv1.GroupVersion.WithKind(kind + "List"))
		if err := s.k8s.List(ctx, l, client.InNamespace(s.ns)); err != nil {
			t.Fatal(err)
		}
		out[strings.ToLower(kind)+"-controller"] = len(l.Items)
	}
	return out
}
