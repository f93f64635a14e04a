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

package webhooks

import (
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

var failurePolicyPath = runPolicyPath.Child("failurePolicy")

// MaxFailurePolicyRules is the most rules a failure policy may have.
const MaxFailurePolicyRules = 20

var (
	failurePolicyActions = []string{string(kubeflowv1.FailJobAction), string(kubeflowv1.RestartJobAction),
		string(kubeflowv1.RestartJobAndIgnoreMaxRestartsAction), string(kubeflowv1.UseReplicaRestartPolicyAction)}
	restartStrategies = []string{string(kubeflowv1.RestartStrategyBlockingRecreate), string(kubeflowv1.RestartStrategyRecreate)}
	exitCodeOperators = []string{string(kubeflowv1.FailurePolicyOnExitCodesOpIn), string(kubeflowv1.FailurePolicyOnExitCodesOpNotIn)}
	conditionStatuses = []string{string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown)}
)

// validateFailurePolicy checks a defaulted job's runPolicy.failurePolicy:
// known action and strategy, maxRestarts not negative, unique rule names,
// at most one of onExitCodes and onPodConditions per rule, exit codes 1-255
// and unique, containerName a container or init container of every
// targeted template, and target replica types the job has.
func validateFailurePolicy(job kubeflowv1.Job) field.ErrorList {
	fp := job.RunPolicy().FailurePolicy
	if fp == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(fp.MaxRestarts), failurePolicyPath.Child("maxRestarts"))...)
	if fp.MaxTotalRestarts != nil && *fp.MaxTotalRestarts < fp.MaxRestarts {
		errs = append(errs, field.Invalid(failurePolicyPath.Child("maxTotalRestarts"), *fp.MaxTotalRestarts,
			fmt.Sprintf("must be at least maxRestarts (%d): it bounds every restart, the counted ones included", fp.MaxRestarts)))
	}
	if fp.LostPodTimeoutSeconds != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*fp.LostPodTimeoutSeconds), failurePolicyPath.Child("lostPodTimeoutSeconds"))...)
	}
	if b := fp.RestartBackoff; b != nil {
		backoffPath := failurePolicyPath.Child("restartBackoff")
		if b.InitialDelaySeconds < 1 {
			errs = append(errs, field.Invalid(backoffPath.Child("initialDelaySeconds"), b.InitialDelaySeconds, "must be at least 1"))
		}
		if b.MaxDelaySeconds != nil && *b.MaxDelaySeconds < b.InitialDelaySeconds {
			errs = append(errs, field.Invalid(backoffPath.Child("maxDelaySeconds"), *b.MaxDelaySeconds,
				fmt.Sprintf("must be at least initialDelaySeconds (%d)", b.InitialDelaySeconds)))
		}
	}
	if fp.RestartStrategy != "" && !slices.Contains(restartStrategies, string(fp.RestartStrategy)) {
		errs = append(errs, field.NotSupported(failurePolicyPath.Child("restartStrategy"), fp.RestartStrategy, restartStrategies))
	}
	rulesPath := failurePolicyPath.Child("rules")
	if len(fp.Rules) > MaxFailurePolicyRules {
		errs = append(errs, field.TooMany(rulesPath, len(fp.Rules), MaxFailurePolicyRules))
	}
	specs := job.ReplicaSpecs()
	names := map[string]bool{}
	for i, rule := range fp.Rules {
		rp := rulesPath.Index(i)
		switch {
		case rule.Name == "":
			errs = append(errs, field.Required(rp.Child("name"), "must name the rule"))
		case names[rule.Name]:
			errs = append(errs, field.Duplicate(rp.Child("name"), rule.Name))
		}
		names[rule.Name] = true
		if !slices.Contains(failurePolicyActions, string(rule.Action)) {
			errs = append(errs, field.NotSupported(rp.Child("action"), rule.Action, failurePolicyActions))
		}
		targets := rule.TargetReplicaTypes
		for j, rt := range targets {
			if _, ok := specs[rt]; !ok {
				errs = append(errs, field.NotSupported(rp.Child("targetReplicaTypes").Index(j), rt, typeNames(specs)))
			}
		}
		if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
			errs = append(errs, field.Forbidden(rp, "must not set both onExitCodes and onPodConditions"))
		}
		if ec := rule.OnExitCodes; ec != nil {
			errs = append(errs, validateOnExitCodes(job, ec, rp.Child("onExitCodes"), targets)...)
		}
		for j, c := range rule.OnPodConditions {
			cp := rp.Child("onPodConditions").Index(j)
			if c.Type == "" {
				errs = append(errs, field.Required(cp.Child("type"), "must name a pod condition type"))
			}
			if c.Status != "" && !slices.Contains(conditionStatuses, string(c.Status)) {
				errs = append(errs, field.NotSupported(cp.Child("status"), c.Status, conditionStatuses))
			}
		}
	}
	return errs
}

func validateOnExitCodes(job kubeflowv1.Job, ec *kubeflowv1.FailurePolicyOnExitCodesRequirement, p *field.Path, targets []kubeflowv1.ReplicaType) field.ErrorList {
	var errs field.ErrorList
	if !slices.Contains(exitCodeOperators, string(ec.Operator)) {
		errs = append(errs, field.NotSupported(p.Child("operator"), ec.Operator, exitCodeOperators))
	}
	if len(ec.Values) == 0 {
		errs = append(errs, field.Required(p.Child("values"), "must list at least one exit code"))
	}
	seen := map[int32]bool{}
	for k, v := range ec.Values {
		vp := p.Child("values").Index(k)
		if v < 1 || v > 255 {
			errs = append(errs, field.Invalid(vp, v, "must be between 1 and 255"))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(vp, v))
		}
		seen[v] = true
	}
	if ec.ContainerName == "" {
		// The main container, which every replica has.
		return errs
	}
	specs := job.ReplicaSpecs()
	if len(targets) == 0 {
		targets = sortedTypes(specs)
	}
	for _, rt := range targets {
		spec := specs[rt]
		if spec == nil {
			continue
		}
		tmpl := &spec.Template.Spec
		if ec.ContainerName == kubeflowv1.MainContainerName(job, tmpl) {
			// The kind's default container is required by its replica
			// rules (MPIJob's main container is one of the template's).
			continue
		}
		named := func(c corev1.Container) bool { return c.Name == ec.ContainerName }
		if !slices.ContainsFunc(tmpl.Containers, named) && !slices.ContainsFunc(tmpl.InitContainers, named) {
			errs = append(errs, field.Invalid(p.Child("containerName"), ec.ContainerName,
				fmt.Sprintf("must name a container or init container of every targeted replica type; replica type %s has none of that name", rt)))
		}
	}
	return errs
}

// failurePolicyWarnings name the replica restart policies a failure policy
// leaves unused: its pods run with restartPolicy Never and every failure
// goes to the policy, which hands it back to the replica's restartPolicy
// only through a UseReplicaRestartPolicy rule covering that replica type.
func failurePolicyWarnings(job kubeflowv1.Job) admission.Warnings {
	fp := job.RunPolicy().FailurePolicy
	if fp == nil {
		return nil
	}
	handedBack := func(rt kubeflowv1.ReplicaType) bool {
		return slices.ContainsFunc(fp.Rules, func(r kubeflowv1.FailurePolicyRule) bool {
			return r.Action == kubeflowv1.UseReplicaRestartPolicyAction &&
				(len(r.TargetReplicaTypes) == 0 || slices.Contains(r.TargetReplicaTypes, rt))
		})
	}
	specs := job.ReplicaSpecs()
	var out admission.Warnings
	for _, rt := range sortedTypes(specs) {
		spec := specs[rt]
		if spec == nil || spec.RestartPolicy == "" || spec.RestartPolicy == kubeflowv1.RestartPolicyNever || handedBack(rt) {
			continue
		}
		p := specPath.Child(job.KindInfo().ReplicaSpecsField).Key(string(rt)).Child("restartPolicy")
		out = append(out, fmt.Sprintf("%s: %s is not applied: with runPolicy.failurePolicy the pods run with restartPolicy Never "+
			"and the failure policy decides every restart; add a rule with action %s for %s to hand its failures back to it",
			p, spec.RestartPolicy, kubeflowv1.UseReplicaRestartPolicyAction, rt))
	}
	return out
}

// validateFailurePolicyUpdate rejects any change of the failure policy,
// including setting or removing it (the CRD's CEL rule says the same for
// clients that bypass the webhook).
func validateFailurePolicyUpdate(oldRP, newRP *kubeflowv1.RunPolicy) field.ErrorList {
	if reflect.DeepEqual(oldRP.FailurePolicy, newRP.FailurePolicy) {
		return nil
	}
	return field.ErrorList{field.Invalid(failurePolicyPath, "", apimachineryvalidation.FieldImmutableErrorMsg)}
}

// forbidFailurePolicyWithElastic rejects a failure policy on an elastic job:
// torchrun (and Paddle's elastic launcher) restart their workers themselves.
func forbidFailurePolicyWithElastic(rp *kubeflowv1.RunPolicy, elastic bool) field.ErrorList {
	if rp.FailurePolicy == nil || !elastic {
		return nil
	}
	return field.ErrorList{field.Forbidden(failurePolicyPath, "must not be set together with spec.elasticPolicy: the elastic launcher restarts workers itself")}
}

func typeNames(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) []string {
	var out []string
	for _, rt := range sortedTypes(specs) {
		out = append(out, string(rt))
	}
	return out
}
