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

package gang

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	schedpluginsv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/scheduling/v1alpha1"
)

// entry registers one gang backend: a backend is one file implementing the
// backend interface plus its entry in backends (and its value of the
// Configuration's podGroupAPI). The Manager, the default's resolution, the
// per-job choice and the scheme read only this table.
type entry struct {
	api configv1alpha1.PodGroupAPI
	new func() backend
	// schedulerName is the schedulerName that selects the backend for a
	// job whose replica template names it, and that the backend's pods get
	// by default; nil for a backend chosen only as the operator default
	// (podGroupAPI), whose pods keep their scheduler.
	schedulerName func(configv1alpha1.GangScheduling) string
	// foldCase: a gangScheduling.schedulerName naming this backend in any
	// case selects it as the default (v1's --gang-scheduler-name=Volcano).
	foldCase bool
	// byAnyOtherName: a default scheduler name that no backend's
	// schedulerName is selects this backend (v1: any other
	// --gang-scheduler-name is a scheduler-plugins scheduler).
	byAnyOtherName bool
	// addToScheme registers the backend's types; nil when client-go's
	// scheme has them.
	addToScheme func(*runtime.Scheme) error
	// kind is one of the types addToScheme registers.
	kind schema.GroupVersionKind
}

// backends in the order a job's schedulerName and the default scheduler
// name are matched against theirs.
var backends = []entry{
	{
		api:           configv1alpha1.PodGroupAPIVolcano,
		new:           func() backend { return volcanoBackend{} },
		schedulerName: func(configv1alpha1.GangScheduling) string { return VolcanoSchedulerName },
		foldCase:      true,
		addToScheme:   volcanov1beta1.AddToScheme,
		kind:          volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup"),
	},
	{
		api:            configv1alpha1.PodGroupAPISchedulerPlugins,
		new:            func() backend { return pluginsBackend{} },
		schedulerName:  func(cfg configv1alpha1.GangScheduling) string { return cfg.SchedulerPluginsSchedulerName },
		byAnyOtherName: true,
		addToScheme:    schedpluginsv1alpha1.AddToScheme,
		kind:           schedpluginsv1alpha1.GroupVersion.WithKind("PodGroup"),
	},
	{
		api: configv1alpha1.PodGroupAPIKubernetes,
		new: func() backend { return nativeBackend{} },
	},
}

// AddToScheme registers every backend's types that client-go's scheme
// lacks.
func AddToScheme(s *runtime.Scheme) error {
	for _, e := range backends {
		if e.addToScheme == nil || s.Recognizes(e.kind) {
			continue
		}
		if err := e.addToScheme(s); err != nil {
			return err
		}
	}
	return nil
}

// enabled tells whether the configuration lets the operator use a backend.
func enabled(cfg configv1alpha1.GangScheduling, api configv1alpha1.PodGroupAPI) bool {
	return len(cfg.PodGroupAPIs) == 0 || slices.Contains(cfg.PodGroupAPIs, api)
}

// validate refuses a default backend the configuration does not enable.
func validate(cfg configv1alpha1.GangScheduling) error {
	api, _ := defaultBackend(cfg)
	if api == "" || enabled(cfg, api) {
		return nil
	}
	p := field.NewPath("gangScheduling", "podGroupAPIs")
	return field.ErrorList{field.Invalid(p, cfg.PodGroupAPIs,
		fmt.Sprintf("must include %q, the default gang scheduler's (gangScheduling.podGroupAPI or schedulerName)", api))}.ToAggregate()
}

// Resources are the API resources each backend creates, by its PodGroup
// API: the chart grants them only for the enabled backends.
func Resources() map[configv1alpha1.PodGroupAPI][]schema.GroupResource {
	out := map[configv1alpha1.PodGroupAPI][]schema.GroupResource{}
	for _, e := range backends {
		for _, k := range e.new().kinds() {
			out[e.api] = append(out[e.api], schema.GroupResource{Group: k.gvk.Group, Resource: k.resource})
		}
	}
	return out
}

func entryOf(api configv1alpha1.PodGroupAPI) (entry, bool) {
	for _, e := range backends {
		if e.api == api {
			return e, true
		}
	}
	return entry{}, false
}

// defaultBackend resolves the operator-wide default: the PodGroup API and the
// scheduler name given to pods whose template names none. An empty API means
// gang scheduling is off for jobs that do not select a gang scheduler.
func defaultBackend(cfg configv1alpha1.GangScheduling) (configv1alpha1.PodGroupAPI, string) {
	api, name := cfg.PodGroupAPI, cfg.SchedulerName
	if api == "" {
		if name == "" {
			return "", ""
		}
		api = backendNamed(cfg, name)
	}
	if name == "" {
		if e, ok := entryOf(api); ok && e.schedulerName != nil {
			name = e.schedulerName(cfg)
		}
	}
	return api, name
}

// backendNamed is the backend a default scheduler name selects.
func backendNamed(cfg configv1alpha1.GangScheduling, name string) configv1alpha1.PodGroupAPI {
	for _, e := range backends {
		if e.foldCase && e.schedulerName != nil && strings.EqualFold(name, e.schedulerName(cfg)) {
			return e.api
		}
	}
	for _, e := range backends {
		if e.byAnyOtherName {
			return e.api
		}
	}
	return ""
}
