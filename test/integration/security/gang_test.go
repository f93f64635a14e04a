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

package security_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/gang"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// TestSecurityGangBackends installs the chart once per gang backend, with
// gangScheduling.podGroupAPIs naming only it (and it the default): the
// chart grants none of the other backends' objects; a job gang-scheduled
// by default and one whose templates name another backend's scheduler
// (which is not enabled, so it gets the default's objects too) run to
// success with every call granted, by name and scope, the backend's
// objects created and deleted, and no other backend's object touched.
func TestSecurityGangBackends(t *testing.T) {
	resources := gang.Resources()
	// The scheduler name a job's templates use to ask for another backend.
	otherScheduler := map[configv1alpha1.PodGroupAPI]string{
		configv1alpha1.PodGroupAPIVolcano:          configv1alpha1.DefaultSchedulerPluginsSchedulerName,
		configv1alpha1.PodGroupAPISchedulerPlugins: gang.VolcanoSchedulerName,
		configv1alpha1.PodGroupAPIKubernetes:       gang.VolcanoSchedulerName,
	}
	for _, api := range configv1alpha1.PodGroupAPIs() {
		t.Run(string(api), func(t *testing.T) {
			other, ok := otherScheduler[api]
			if !ok {
				t.Fatalf("no other backend's scheduler name for %s: add one", api)
			}
			s := startWith(t, configv1alpha1.CertManagementSelfSigned,
				"--set", "gangScheduling.podGroupAPI="+string(api), "--set", "gangScheduling.podGroupAPIs={"+string(api)+"}")
			if got := s.config.GangScheduling.PodGroupAPIs; !slices.Equal(got, []configv1alpha1.PodGroupAPI{api}) {
				t.Fatalf("the chart's configuration enables gang backends %v", got)
			}
			granted := map[apiCall]bool{}
			for _, g := range s.chartGrants(t) {
				maps.Copy(granted, g)
			}
			own := map[apiCall]bool{}
			for _, gr := range resources[api] {
				for _, verb := range []string{"create", "delete", "list", "watch"} {
					c := apiCall{gr.Group, gr.Resource, verb}
					own[c] = true
					if !allowedBy(granted, c) {
						t.Errorf("with gang backend %s enabled the chart does not grant %s", api, c)
					}
				}
			}
			othersObjects := map[schema.GroupResource]bool{}
			for b, grs := range resources {
				if b == api {
					continue
				}
				for _, gr := range grs {
					othersObjects[gr] = true
					if c := (apiCall{gr.Group, gr.Resource, "create"}); allowedBy(granted, c) {
						t.Errorf("with only gang backend %s enabled the chart grants %s (backend %s)", api, c, b)
					}
				}
			}

			s.startOperator(t, nil)
			s.waitWebhooksReachable(t, testjobs.MakePyTorchJob("probe", "default").Master(1).Obj())
			w := &workload{s: s, t: t, ctx: t.Context()}
			w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workloadNS}})
			byDefault := withExit(testjobs.MakePyTorchJob("gang-default", workloadNS).Master(1).Workers(1).Obj(), "0")
			asksOther := withExit(testjobs.MakePyTorchJob("gang-other", workloadNS).Master(1).Workers(1).Obj(), "0")
			for _, spec := range asksOther.Spec.PyTorchReplicaSpecs {
				spec.Template.Spec.SchedulerName = other
			}
			w.create(byDefault)
			w.create(asksOther)
			for _, gr := range resources[api] {
				w.until("both jobs' "+gr.String()+" created", func(context.Context) (bool, error) {
					return s.recorder.snapshot()[apiCall{gr.Group, gr.Resource, "create"}] >= 2, nil
				})
			}
			if api == configv1alpha1.PodGroupAPIVolcano {
				w.admitVolcanoPodGroups()
			}
			w.condition(kubeflowv1.PyTorchJobKind, byDefault.Name, string(kubeflowv1.JobSucceeded))
			w.condition(kubeflowv1.PyTorchJobKind, asksOther.Name, string(kubeflowv1.JobSucceeded))
			for _, gr := range resources[api] {
				w.until("both jobs' "+gr.String()+" deleted once they succeeded", func(context.Context) (bool, error) {
					return s.recorder.snapshot()[apiCall{gr.Group, gr.Resource, "delete"}] >= 2, nil
				})
			}

			for _, line := range strings.Split(s.logs.String(), "\n") {
				if strings.Contains(line, "is forbidden") {
					t.Errorf("the chart's RBAC refused an operator call: %.400s", line)
				}
			}
			observed := s.recorder.snapshot()
			var lines []string
			for _, c := range sortedCalls(observed) {
				lines = append(lines, c.String())
				if !allowedBy(granted, c) {
					t.Errorf("call not granted by the chart with only gang backend %s enabled: %s", api, c)
				}
				if othersObjects[schema.GroupResource{Group: c.group, Resource: c.resource}] {
					t.Errorf("with only gang backend %s enabled the operator called %s", api, c)
				}
			}
			for c := range own {
				if observed[c] == 0 {
					t.Errorf("the operator never called %s", c)
				}
			}
			t.Logf("observed API calls:\n  %s", strings.Join(lines, "\n  "))
			s.checkNamesAndScope(t, nil)
		})
	}
}

// admitVolcanoPodGroups stands in for Volcano's scheduler: every Volcano
// PodGroup of the workload namespace goes Inqueue, which lets the operator
// create the job's pods.
func (w *workload) admitVolcanoPodGroups() {
	w.t.Helper()
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroupList"})
	w.step("list Volcano PodGroups", w.s.k8s.List(w.ctx, &list, client.InNamespace(workloadNS)))
	for i := range list.Items {
		pg := &list.Items[i]
		w.change(pg, func() { _ = unstructured.SetNestedField(pg.Object, "Inqueue", "status", "phase") })
	}
}
