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

package kueue

import (
	"fmt"
	"os"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kueueconfigv1beta1 "sigs.k8s.io/kueue/apis/config/v1beta1"
	kueueconfig "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// Settings are what the integration takes from Kueue's own configuration,
// so that queued jobs are handled as Kueue itself would handle them.
type Settings struct {
	ManageJobsWithoutQueueName   bool
	ManagedJobsNamespaceSelector labels.Selector
	// builtin are the kinds Kueue's configuration has Kueue's own
	// integration manage (integrations.frameworks kubeflow.org/<kind>).
	builtin map[string]bool
	// external are the kinds it lists in integrations.externalFrameworks.
	external map[string]bool
	cfg      kueueconfig.Configuration
	// path is the configuration file read; empty for Kueue's defaults.
	path string
}

// configured reports whether the settings come from a configuration file.
func (s *Settings) configured() bool { return s.path != "" }

// LoadSettings reads Kueue's Configuration file (empty: Kueue's defaults)
// as Kueue reads it (strict, either API version, defaulted), and sets
// Kueue's feature gates it names in this process, so that the operator
// builds Workloads with the features Kueue admits them with. Kueue's own
// validation of the file is left to Kueue: it checks integrations.frameworks
// against the integrations compiled into the process reading it, which in
// this one are none.
func LoadSettings(path string) (*Settings, error) {
	scheme := runtime.NewScheme()
	if err := kueueconfigv1beta1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueueconfig.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var cfg kueueconfig.Configuration
	if path == "" {
		scheme.Default(&cfg)
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading Kueue's configuration: %w", err)
		}
		codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
		if err := runtime.DecodeInto(codecs.UniversalDecoder(kueueconfig.GroupVersion), data, &cfg); err != nil {
			return nil, fmt.Errorf("the Kueue configuration %q: %w", path, err)
		}
	}
	if len(cfg.FeatureGates) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
			return nil, fmt.Errorf("the Kueue configuration %q: featureGates: %w", path, err)
		}
	}
	s := &Settings{cfg: cfg, path: path, builtin: map[string]bool{}, external: map[string]bool{}}
	s.ManageJobsWithoutQueueName = cfg.ManageJobsWithoutQueueName
	if cfg.ManagedJobsNamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("the Kueue configuration %q: managedJobsNamespaceSelector: %w", path, err)
		}
		s.ManagedJobsNamespaceSelector = sel
	}
	if in := cfg.Integrations; in != nil {
		for _, f := range in.Frameworks {
			if kind, ok := strings.CutPrefix(f, kubeflowv1.GroupVersion.Group+"/"); ok {
				s.builtin[strings.ToLower(kind)] = true
			}
		}
		for _, f := range in.ExternalFrameworks {
			s.external[strings.ToLower(f)] = true
		}
	}
	return s, nil
}

// BuiltinManages reports whether Kueue's configuration has Kueue's own
// integration manage kind too. Kueue's kubeflow.org/mpijob is
// mpi-operator's v2beta1 MPIJob, another resource than v1's: it never
// manages ours.
func (s *Settings) BuiltinManages(kind string) bool {
	return !strings.EqualFold(kind, kubeflowv1.MPIJobKind) && s.builtin[strings.ToLower(kind)]
}

// ListedExternal reports whether Kueue's configuration lists kind as an
// external framework (Kind.version.group).
func (s *Settings) ListedExternal(kind string) bool {
	return s.external[strings.ToLower(ExternalFramework(kind))]
}

// ExternalFramework is the integrations.externalFrameworks entry of a
// kind, e.g. PyTorchJob.v1.kubeflow.org.
func ExternalFramework(kind string) string {
	return kind + "." + kubeflowv1.GroupVersion.Version + "." + kubeflowv1.GroupVersion.Group
}

// options are jobframework's reconciler options from Kueue's configuration.
func (s *Settings) options() []jobframework.Option {
	var labelKeys []string
	if s.cfg.Integrations != nil {
		labelKeys = slices.Clone(s.cfg.Integrations.LabelKeysToCopy)
	}
	return []jobframework.Option{
		jobframework.WithManageJobsWithoutQueueName(s.ManageJobsWithoutQueueName),
		jobframework.WithManagedJobsNamespaceSelector(s.ManagedJobsNamespaceSelector),
		jobframework.WithWaitForPodsReady(s.cfg.WaitForPodsReady),
		jobframework.WithLabelKeysToCopy(labelKeys),
		jobframework.WithObjectRetentionPolicies(s.cfg.ObjectRetentionPolicies),
	}
}
