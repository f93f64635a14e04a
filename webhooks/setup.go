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

// Package webhooks holds the admission webhooks of the six kubeflow.org/v1
// job kinds. Each kind has a mutating webhook that applies the kind's
// SetDefaults_<Kind> (so stored specs show their defaults) and a validating
// webhook that validates the defaulted object and answers with field paths,
// for example
//
//	spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1
//
// Webhook names and paths are those of the Kubeflow Training Operator v1:
// /validate-kubeflow-org-v1-<kind> served as
// validator.<kind>.training-operator.kubeflow.org, plus the new
// /mutate-kubeflow-org-v1-<kind> served as
// defaulter.<kind>.training-operator.kubeflow.org (kind in lower case).
//
// The kubebuilder markers in this package generate config/webhook/manifests.yaml
// (make manifests); WebhookConfigurations describes the same webhooks in
// code so that the operator can keep the installed configurations limited to
// the enabled kinds.
package webhooks

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

const (
	// ValidatingWebhookConfigurationName is the name of the
	// ValidatingWebhookConfiguration holding the validators (v1's name).
	ValidatingWebhookConfigurationName = "validator.training-operator.kubeflow.org"
	// MutatingWebhookConfigurationName is the name of the
	// MutatingWebhookConfiguration holding the defaulters.
	MutatingWebhookConfigurationName = "defaulter.training-operator.kubeflow.org"

	webhookNameSuffix = ".training-operator.kubeflow.org"
	pathGroupVersion  = "kubeflow-org-v1"
)

// Hooks are the defaulting and validating webhooks of one job kind; For
// builds them. Each kind of the operator's table (package kinds) holds its
// Hooks, and the table passes them to Setup and WebhookConfigurations.
type Hooks struct {
	info  kubeflowv1.KindInfo
	setup func(mgr ctrl.Manager, ext []Extension) error
}

// Extension is admission another part of the operator adds to every
// enabled kind's webhooks, seeing jobs through the kinds' common
// interface: the Kueue integration's queue defaulting and validation.
type Extension interface {
	// Default changes a job being created, after the kind's defaults.
	Default(ctx context.Context, job kubeflowv1.Job) error
	// Validate judges a defaulted job being created (old is nil) or
	// updated; its errors join the kind's own. An error is a failure to
	// judge (the request is refused with it).
	Validate(ctx context.Context, old, new kubeflowv1.Job) (field.ErrorList, error)
}

// Info is the constants of the job kind the hooks are of (kind name,
// plural resource), from its API type.
func (h Hooks) Info() kubeflowv1.KindInfo { return h.info }

// For is the webhooks of the job kind P: a defaulting webhook that applies
// the kind's defaults (kubeflowv1.Job.ApplyDefaults) and a validating
// webhook that judges the defaulted object with validate (old is nil on
// create), both at the v1 paths.
func For[J any, P interface {
	*J
	kubeflowv1.Job
}](validate func(old, new P) (field.ErrorList, admission.Warnings)) Hooks {
	info := P(new(J)).KindInfo()
	return Hooks{info: info, setup: func(mgr ctrl.Manager, ext []Extension) error {
		return setupJobWebhook(mgr, P(new(J)), &jobWebhook[P]{
			kind:        info.Kind,
			setDefaults: P.ApplyDefaults,
			validate:    validate,
			ext:         ext,
		})
	}}
}

// ValidatingPath is the URL path of a kind's validating webhook, e.g.
// /validate-kubeflow-org-v1-pytorchjob.
func ValidatingPath(kind string) string {
	return "/validate-" + pathGroupVersion + "-" + strings.ToLower(kind)
}

// MutatingPath is the URL path of a kind's defaulting webhook, e.g.
// /mutate-kubeflow-org-v1-pytorchjob.
func MutatingPath(kind string) string {
	return "/mutate-" + pathGroupVersion + "-" + strings.ToLower(kind)
}

// ValidatingWebhookName is the name of a kind's validating webhook, e.g.
// validator.pytorchjob.training-operator.kubeflow.org. The API server quotes
// it in rejections: admission webhook "<name>" denied the request: ...
func ValidatingWebhookName(kind string) string {
	return "validator." + strings.ToLower(kind) + webhookNameSuffix
}

// MutatingWebhookName is the name of a kind's defaulting webhook, e.g.
// defaulter.pytorchjob.training-operator.kubeflow.org.
func MutatingWebhookName(kind string) string {
	return "defaulter." + strings.ToLower(kind) + webhookNameSuffix
}

// Setup registers the defaulting and validating webhooks of the kinds of
// all that are enabled with the manager's webhook server, each with the
// extensions ext. Kind names are matched case-insensitively; a name not in
// all is an error. Kinds that are not enabled get no handler, and
// WebhookConfigurations leaves them out of the installed configurations.
func Setup(mgr ctrl.Manager, all []Hooks, enabledSchemes []string, ext ...Extension) error {
	enabled, err := enabledKinds(all, enabledSchemes)
	if err != nil {
		return err
	}
	for _, k := range enabled {
		if err := k.setup(mgr, ext); err != nil {
			return fmt.Errorf("setting up the %s webhooks: %w", k.info.Kind, err)
		}
	}
	return nil
}

// enabledKinds returns the kinds of all named in schemes, in the order of all.
func enabledKinds(all []Hooks, schemes []string) ([]Hooks, error) {
	want := map[string]bool{}
	for _, s := range schemes {
		found := false
		for _, k := range all {
			if strings.EqualFold(s, k.info.Kind) {
				want[k.info.Kind], found = true, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("scheme %s is not supported yet", strings.ToLower(s))
		}
	}
	var out []Hooks
	for _, k := range all {
		if want[k.info.Kind] {
			out = append(out, k)
		}
	}
	return out, nil
}

// Configurations describes the webhooks the installed mutating and
// validating webhook configurations should hold for a set of enabled kinds.
type Configurations struct {
	// MutatingName and ValidatingName are the names of the two configurations.
	MutatingName, ValidatingName string
	// Mutating and Validating are the webhooks of the enabled kinds. Their
	// clientConfig only carries the service path; whoever installs them
	// fills in the service (or URL) and CA bundle.
	Mutating   []admissionregistrationv1.MutatingWebhook
	Validating []admissionregistrationv1.ValidatingWebhook
	// Managed lists the names of the webhooks of every kind, enabled or
	// not: entries with these names that are not in Mutating or
	// Validating are to be removed from the configurations.
	Managed []string
}

// WebhookConfigurations returns the webhooks of the kinds of all that are
// enabled (an unknown name is an error, as in Setup), with the same settings as the kubebuilder markers that generate
// config/webhook/manifests.yaml: failurePolicy Fail, sideEffects None,
// admissionReviewVersions v1, operations CREATE and UPDATE on kubeflow.org/v1.
func WebhookConfigurations(all []Hooks, enabledSchemes []string) (*Configurations, error) {
	enabled, err := enabledKinds(all, enabledSchemes)
	if err != nil {
		return nil, err
	}
	out := &Configurations{MutatingName: MutatingWebhookConfigurationName, ValidatingName: ValidatingWebhookConfigurationName}
	for _, k := range all {
		out.Managed = append(out.Managed, MutatingWebhookName(k.info.Kind), ValidatingWebhookName(k.info.Kind))
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	for _, k := range enabled {
		rules := []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{kubeflowv1.GroupVersion.Group},
				APIVersions: []string{kubeflowv1.GroupVersion.Version},
				Resources:   []string{k.info.Plural},
			},
		}}
		mpath, vpath := MutatingPath(k.info.Kind), ValidatingPath(k.info.Kind)
		out.Mutating = append(out.Mutating, admissionregistrationv1.MutatingWebhook{
			Name:                    MutatingWebhookName(k.info.Kind),
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Path: &mpath}},
			Rules:                   rules,
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		})
		out.Validating = append(out.Validating, admissionregistrationv1.ValidatingWebhook{
			Name:                    ValidatingWebhookName(k.info.Kind),
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Path: &vpath}},
			Rules:                   rules,
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	return out, nil
}
