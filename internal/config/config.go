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

// Package config loads, defaults, validates and completes the operator's
// Configuration (config.training-operator.io/v1alpha1) from a file and the
// v1-compatible command-line flags.
package config

import (
	"fmt"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

var (
	decodeScheme = runtime.NewScheme()
	decodeCodecs serializer.CodecFactory
)

func init() {
	if err := configv1alpha1.AddToScheme(decodeScheme); err != nil {
		panic(err)
	}
	decodeCodecs = serializer.NewCodecFactory(decodeScheme, serializer.EnableStrict)
}

// Load reads the Configuration file at path, applies defaults and validates
// the result. An empty path yields the defaults. Decoding is strict: unknown
// or duplicate fields, and an apiVersion/kind other than
// config.training-operator.io/v1alpha1 Configuration, are errors.
func Load(path string) (*configv1alpha1.Configuration, error) {
	return Build(path, nil, nil)
}

// Build is Load with command-line overrides: it reads the file at path (if
// any), applies defaults, then applies the flags in f that are listed in set
// (see Flags.Apply), validates the result and canonicalizes scheme names.
// The precedence is: flag given on the command line, then the
// KUBEFLOW_NAMESPACE environment variable (namespace only), then the file,
// then the defaults. f may be nil.
func Build(path string, f *Flags, set map[string]bool) (*configv1alpha1.Configuration, error) {
	cfg := &configv1alpha1.Configuration{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading configuration file: %w", err)
		}
		if cfg, err = Decode(data); err != nil {
			return nil, fmt.Errorf("decoding configuration file %s: %w", path, err)
		}
	}
	configv1alpha1.SetDefaults_Configuration(cfg)
	if f != nil {
		f.Apply(cfg, set)
	}
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration: %w", errs.ToAggregate())
	}
	canonicalize(cfg)
	return cfg, nil
}

// Decode strictly decodes a YAML or JSON Configuration document. It neither
// defaults nor validates. apiVersion must be config.training-operator.io/v1alpha1
// and kind Configuration; unknown and duplicate fields are errors that name
// the field.
func Decode(data []byte) (*configv1alpha1.Configuration, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		return nil, err
	}
	wantKind := "Configuration"
	switch {
	case tm.APIVersion == "":
		return nil, fmt.Errorf("apiVersion is required, want %q", configv1alpha1.GroupVersion.String())
	case tm.APIVersion != configv1alpha1.GroupVersion.String():
		return nil, fmt.Errorf("unsupported apiVersion %q, want %q", tm.APIVersion, configv1alpha1.GroupVersion.String())
	case tm.Kind == "":
		return nil, fmt.Errorf("kind is required, want %q", wantKind)
	case tm.Kind != wantKind:
		return nil, fmt.Errorf("unsupported kind %q, want %q", tm.Kind, wantKind)
	}
	obj, _, err := decodeCodecs.UniversalDeserializer().Decode(data, nil, &configv1alpha1.Configuration{})
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*configv1alpha1.Configuration)
	if !ok {
		return nil, fmt.Errorf("decoded %T, want *v1alpha1.Configuration", obj)
	}
	return cfg, nil
}

// canonicalize rewrites scheme names in enabledSchemes and the keys of
// controller.concurrency to their canonical spelling. It expects a
// configuration that passed Validate.
func canonicalize(cfg *configv1alpha1.Configuration) {
	for i, s := range cfg.EnabledSchemes {
		if c, ok := NormalizeScheme(s); ok {
			cfg.EnabledSchemes[i] = c
		}
	}
	if len(cfg.Controller.Concurrency) > 0 {
		m := make(map[string]int32, len(cfg.Controller.Concurrency))
		for k, v := range cfg.Controller.Concurrency {
			if c, ok := NormalizeScheme(k); ok {
				k = c
			}
			m[k] = v
		}
		cfg.Controller.Concurrency = m
	}
}

// NormalizeScheme returns the canonical name (as in AllSchemes, e.g.
// PyTorchJob) of a job kind matched case-insensitively, and whether the name
// is supported.
func NormalizeScheme(name string) (string, bool) {
	for _, s := range configv1alpha1.AllSchemes() {
		if strings.EqualFold(s, name) {
			return s, true
		}
	}
	return "", false
}

// SchemeEnabled reports whether the job kind is listed in cfg.EnabledSchemes
// (matched case-insensitively).
func SchemeEnabled(cfg *configv1alpha1.Configuration, kind string) bool {
	for _, s := range cfg.EnabledSchemes {
		if strings.EqualFold(s, kind) {
			return true
		}
	}
	return false
}

// Concurrency returns the number of concurrent reconciles for a job kind:
// its controller.concurrency entry if present (keys matched
// case-insensitively), else controller.defaultConcurrency, else the API
// default.
func Concurrency(cfg *configv1alpha1.Configuration, kind string) int {
	for k, v := range cfg.Controller.Concurrency {
		if strings.EqualFold(k, kind) {
			return int(v)
		}
	}
	if cfg.Controller.DefaultConcurrency != nil {
		return int(*cfg.Controller.DefaultConcurrency)
	}
	return int(configv1alpha1.DefaultConcurrency)
}
