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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// job is the constraint of the generic webhook: a pointer to a job type.
type job interface {
	client.Object
	kubeflowv1.Job
}

// jobWebhook is the defaulter and validator of one job kind.
type jobWebhook[T job] struct {
	kind string
	// setDefaults fills in the kind's defaults in place.
	setDefaults func(T)
	// validate is the kind's ValidateXJob; old is nil on create.
	validate func(old, new T) (field.ErrorList, admission.Warnings)
	// ext are the extensions Setup was given.
	ext []Extension
}

var _ admission.Validator[*kubeflowv1.PyTorchJob] = (*jobWebhook[*kubeflowv1.PyTorchJob])(nil)

// setupJobWebhook registers the defaulting and validating webhooks of one
// kind at the v1 paths.
func setupJobWebhook[T job](mgr ctrl.Manager, obj T, wh *jobWebhook[T]) error {
	err := ctrl.NewWebhookManagedBy(mgr, obj).
		WithValidator(wh).
		WithValidatorCustomPath(ValidatingPath(wh.kind)).
		Complete()
	if err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(MutatingPath(wh.kind), mutatingWebhook(mgr.GetScheme(), obj, wh))
	return nil
}

// mutatingWebhook is the defaulting webhook of a kind (see defaulting).
func mutatingWebhook[T job](scheme *runtime.Scheme, obj T, wh *jobWebhook[T]) *admission.Webhook {
	return &admission.Webhook{Handler: &defaulting[T]{
		decoder:     admission.NewDecoder(scheme),
		newObj:      func() T { return obj.DeepCopyObject().(T) },
		setDefaults: wh.setDefaults,
		ext:         wh.ext,
	}}
}

// defaulting answers a create or update with the JSON patch from the
// request's object to the defaulted one. It decodes the request once (every
// job passes through it, so a second decode was a measurable part of the
// operator's CPU per job).
//
// An object that does not decode into the Go type (a string where an
// integer belongs, an integer beyond int32, ...) passes unchanged. Mutating
// webhooks run before the API server's schema validation, so rejecting it
// here would answer with a Go JSON error and no field path; passed on, the
// schema validation rejects it with one (spec.pytorchReplicaSpecs.Worker.replicas:
// Invalid value: "string": ... must be of type integer). The validating
// webhook, which runs after schema validation, still rejects whatever it
// cannot decode.
//
// The patch writes no nulls (see dropNulls) and, as controller-runtime's
// defaulting webhook, removes nothing only the Go type lacks (a field the
// API server prunes or keeps by its schema, not the webhook): a removal
// that decoding alone makes is dropped, one defaulting makes (TFJob's
// "worker" renamed "Worker") is kept.
type defaulting[T job] struct {
	decoder     admission.Decoder
	newObj      func() T
	setDefaults func(T)
	// ext default a job being created, after the kind's defaults.
	ext []Extension
}

func (h *defaulting[T]) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj := h.newObj()
	if err := h.decoder.Decode(req, obj); err != nil {
		return admission.Allowed("not decodable, left to the API server's schema validation: " + err.Error())
	}
	original := obj.DeepCopyObject()
	h.setDefaults(obj)
	if req.Operation == admissionv1.Create {
		for _, e := range h.ext {
			if err := e.Default(ctx, obj); err != nil {
				return admission.Errored(http.StatusInternalServerError, err)
			}
		}
	}
	if reflect.DeepEqual(original, obj) {
		return admission.Allowed("")
	}
	defaulted, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.PatchResponseFromRaw(req.Object.Raw, defaulted)
	if slices.ContainsFunc(resp.Patches, isRemove) {
		decoded, err := json.Marshal(original)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		byDecoding, err := jsonpatch.CreatePatch(req.Object.Raw, decoded)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		resp.Patches = slices.DeleteFunc(resp.Patches, func(op jsonpatch.JsonPatchOperation) bool {
			return isRemove(op) && slices.ContainsFunc(byDecoding, func(d jsonpatch.JsonPatchOperation) bool {
				return isRemove(d) && d.Path == op.Path
			})
		})
	}
	resp.Patches = dropNulls(resp.Patches)
	if len(resp.Patches) == 0 {
		resp.PatchType = nil
	}
	return resp
}

// ValidateCreate validates the defaulted object, so that a job that reaches
// this webhook without the defaulting webhook (e.g. with v1's manifests) is
// judged as it will be run.
func (w *jobWebhook[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	var none T
	d := w.defaulted(obj)
	errs, warnings := w.validate(none, d)
	for _, e := range w.ext {
		more, err := e.Validate(ctx, nil, d)
		if err != nil {
			return warnings, err
		}
		errs = append(errs, more...)
	}
	return warnings, w.toError(obj, errs)
}

// ValidateUpdate validates the defaulted new object against the old one.
func (w *jobWebhook[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	o, n := w.defaulted(oldObj), w.defaulted(newObj)
	errs, warnings := w.validate(o, n)
	for _, e := range w.ext {
		more, err := e.Validate(ctx, o, n)
		if err != nil {
			return warnings, err
		}
		errs = append(errs, more...)
	}
	return warnings, w.toError(newObj, errs)
}

// ValidateDelete allows every deletion.
func (w *jobWebhook[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

func (w *jobWebhook[T]) defaulted(obj T) T {
	c := obj.DeepCopyObject().(T)
	w.setDefaults(c)
	return c
}

// toError turns field errors into a 422 Invalid status with one cause per
// field error. Its message is the plain error list, as in v1, so that the
// API server's error reads
//
//	admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1
//
// and kubectl, which prints the causes of Invalid errors, shows
//
//	The PyTorchJob "x" is invalid: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1
func (w *jobWebhook[T]) toError(obj T, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	gk := schema.GroupKind{Group: kubeflowv1.GroupVersion.Group, Kind: w.kind}
	statusErr := apierrors.NewInvalid(gk, obj.GetName(), errs)
	statusErr.ErrStatus.Message = errs.ToAggregate().Error()
	return statusErr
}

func isRemove(op jsonpatch.JsonPatchOperation) bool { return op.Operation == "remove" }

// Paths shared by all kinds.
var (
	namePath      = field.NewPath("metadata", "name")
	specPath      = field.NewPath("spec")
	runPolicyPath = specPath.Child("runPolicy")
	managedByPath = runPolicyPath.Child("managedBy")
)

// maxChildNameLength is the longest name a pod hostname or Service name may
// have (a DNS-1035 label).
const maxChildNameLength = validation.DNS1035LabelMaxLength

// supportedManagedBy are the values runPolicy.managedBy may take.
var supportedManagedBy = []string{kubeflowv1.KubeflowJobsController, kubeflowv1.MultiKueueController}

// validateName checks that the job name is a DNS-1035 label (v1's message)
// and that the names of the job's pods and Services, given in children,
// are DNS-1035 labels too; the longest child is named in the error.
func validateName(name string, children []string) field.ErrorList {
	if name == "" {
		// The API server names every object before admission; a direct
		// caller without one gets the field it left out.
		return field.ErrorList{field.Required(namePath, "must be specified")}
	}
	if msgs := apimachineryvalidation.NameIsDNS1035Label(name, false); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(namePath, name, "should match: "+strings.Join(msgs, ","))}
	}
	longest := ""
	for _, c := range children {
		if len(c) > len(longest) {
			longest = c
		}
	}
	if over := len(longest) - maxChildNameLength; over > 0 {
		return field.ErrorList{field.Invalid(namePath, name, fmt.Sprintf(
			"must be no more than %d characters: the child name %q would be %d characters, more than the %d allowed for a pod hostname or Service name (DNS-1035 label)",
			len(name)-over, longest, len(longest), maxChildNameLength))}
	}
	return nil
}

// lastChildNames returns, for each replica type with at least one replica,
// the name of its highest-indexed pod. count gives the number of pods of a
// type (nil replicas count as defaultReplicas).
func lastChildNames(job string, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, count func(kubeflowv1.ReplicaType, *kubeflowv1.ReplicaSpec) int32) []string {
	var out []string
	for _, rtype := range sortedTypes(specs) {
		if n := count(rtype, specs[rtype]); n > 0 {
			out = append(out, kubeflowv1.ReplicaName(job, rtype, int(n-1)))
		}
	}
	return out
}

// replicasOrDefault returns *replicas, or def when the spec or its replicas is nil.
func replicasOrDefault(spec *kubeflowv1.ReplicaSpec, def int32) int32 {
	if spec == nil || spec.Replicas == nil {
		return def
	}
	return *spec.Replicas
}

// validateRunPolicy checks the run policy shared by all kinds: managedBy
// takes a supported value (the empty string is not one) and the counts and
// durations are not negative.
func validateRunPolicy(rp *kubeflowv1.RunPolicy) field.ErrorList {
	var errs field.ErrorList
	if rp.ManagedBy != nil && !slices.Contains(supportedManagedBy, *rp.ManagedBy) {
		errs = append(errs, field.NotSupported(managedByPath, *rp.ManagedBy, supportedManagedBy))
	}
	if rp.TTLSecondsAfterFinished != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*rp.TTLSecondsAfterFinished), runPolicyPath.Child("ttlSecondsAfterFinished"))...)
	}
	if rp.ActiveDeadlineSeconds != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(*rp.ActiveDeadlineSeconds, runPolicyPath.Child("activeDeadlineSeconds"))...)
	}
	if rp.BackoffLimit != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*rp.BackoffLimit), runPolicyPath.Child("backoffLimit"))...)
	}
	if sp := rp.SchedulingPolicy; sp != nil {
		spPath := runPolicyPath.Child("schedulingPolicy")
		if sp.MinAvailable != nil {
			errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*sp.MinAvailable), spPath.Child("minAvailable"))...)
		}
		if sp.ScheduleTimeoutSeconds != nil {
			errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*sp.ScheduleTimeoutSeconds), spPath.Child("scheduleTimeoutSeconds"))...)
		}
	}
	return errs
}

// validateManagedByUpdate rejects any change of runPolicy.managedBy,
// including setting or clearing it.
func validateManagedByUpdate(oldRP, newRP *kubeflowv1.RunPolicy) field.ErrorList {
	if reflect.DeepEqual(oldRP.ManagedBy, newRP.ManagedBy) {
		return nil
	}
	var v any
	if newRP.ManagedBy != nil {
		v = *newRP.ManagedBy
	}
	return field.ErrorList{field.Invalid(managedByPath, v, apimachineryvalidation.FieldImmutableErrorMsg)}
}

// validateElasticReplicas checks the bounds the user set: minReplicas <=
// maxReplicas when both are set, and each against MaxReplicas (the HPA
// scales up to them). Defaulting does not store the unset ones, which
// follow the other bound or Worker.replicas (already checked) when used.
func validateElasticReplicas(p *field.Path, minR, maxR *int32) field.ErrorList {
	if minR != nil && maxR != nil && *minR > *maxR {
		return field.ErrorList{field.Invalid(p.Child("minReplicas"), *minR, "must be less than or equal to maxReplicas")}
	}
	return append(maxReplicas(minR, p.Child("minReplicas")), maxReplicas(maxR, p.Child("maxReplicas"))...)
}

// replicaRules are the replica-spec rules of one kind.
type replicaRules struct {
	// path is spec.<x>ReplicaSpecs.
	path *field.Path
	// types are the allowed replica types (canonical spelling).
	types []kubeflowv1.ReplicaType
	// container is the container name each replica must have ("" for none)
	// and containerMsg the detail of the error when it is missing.
	container, containerMsg string
	// replicas checks a replica type's replicas; nil means "not negative".
	replicas func(rtype kubeflowv1.ReplicaType, replicas *int32, p *field.Path) field.ErrorList
}

// mustHaveContainer is v1's detail for a missing default container.
func mustHaveContainer(name string) string {
	return "must have at least one container with name " + name
}

// validate checks the replica specs of a defaulted job: the map is not
// empty, every key is an allowed type (keys left non-canonical after
// defaulting are reported), every spec is non-nil with at least one
// container, every container has a name and an image, the default container
// exists and replicas are valid. Keys are visited in sorted order.
func (r replicaRules) validate(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) field.ErrorList {
	if len(specs) == 0 {
		return field.ErrorList{field.Required(r.path, "must be required")}
	}
	var errs field.ErrorList
	for _, rtype := range sortedTypes(specs) {
		rolePath := r.path.Key(string(rtype))
		if !slices.Contains(r.types, rtype) {
			errs = append(errs, field.NotSupported(rolePath, rtype, r.types))
			continue
		}
		spec := specs[rtype]
		containersPath := rolePath.Child("template", "spec", "containers")
		if spec == nil {
			// Named at the null entry, the deepest field that exists.
			errs = append(errs, field.Required(rolePath, "must be specified"))
			continue
		}
		if len(spec.Template.Spec.Containers) == 0 {
			errs = append(errs, field.Required(containersPath, "must be specified"))
			continue
		}
		hasDefault := r.container == ""
		for i, c := range spec.Template.Spec.Containers {
			if c.Image == "" {
				errs = append(errs, field.Required(containersPath.Index(i).Child("image"), "must be required"))
			}
			if c.Name == r.container {
				hasDefault = true
			}
			if c.Name == "" { // defaulting names containers, so only without defaults
				errs = append(errs, field.Required(containersPath.Index(i).Child("name"), "must be required"))
			}
		}
		if !hasDefault {
			errs = append(errs, field.Required(containersPath, r.containerMsg))
		}
		check := r.replicas
		if check == nil {
			check = nonNegativeReplicas
		}
		errs = append(errs, check(rtype, spec.Replicas, rolePath.Child("replicas"))...)
		errs = append(errs, maxReplicas(spec.Replicas, rolePath.Child("replicas"))...)
		errs = append(errs, validatePodTemplate(&spec.Template, rolePath.Child("template"))...)
	}
	return errs
}

// MaxReplicas is the most replicas one replica type (or an elastic
// maxReplicas) may ask for. v1 has no bound, so a typo such as 1000000, or
// a hostile 2147483647, made the operator build that many pods and
// Services in memory and flood the API server; no real training job runs
// anywhere near this many pods of one type.
const MaxReplicas = 10000

// maxReplicas rejects replica counts above MaxReplicas.
func maxReplicas(replicas *int32, p *field.Path) field.ErrorList {
	if replicas != nil && *replicas > MaxReplicas {
		return field.ErrorList{field.Invalid(p, *replicas, fmt.Sprintf("must be less than or equal to %d", MaxReplicas))}
	}
	return nil
}

// validatePodTemplate checks the parts of a replica's pod template that
// would make every pod creation fail, so that the job is rejected with a
// field path instead of being accepted and then stuck retrying
// FailedCreatePod: template labels and annotations, duplicate container
// names, and container ports (number ranges, IANA_SVC_NAME port names, port
// names unique within the pod). The full pod validation stays with the API
// server.
func validatePodTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	meta := p.Child("metadata")
	errs := metav1validation.ValidateLabels(t.Labels, meta.Child("labels"))
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(t.Annotations, meta.Child("annotations"))...)
	containersPath := p.Child("spec", "containers")
	names := map[string]bool{}
	portNames := map[string]bool{}
	for i, c := range t.Spec.Containers {
		cp := containersPath.Index(i)
		if c.Name != "" && names[c.Name] {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names[c.Name] = true
		for j, port := range c.Ports {
			pp := cp.Child("ports").Index(j)
			if port.Name != "" {
				for _, msg := range validation.IsValidPortName(port.Name) {
					errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
				}
				if portNames[port.Name] {
					errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
				}
				portNames[port.Name] = true
			}
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
			}
			if port.HostPort != 0 {
				for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
					errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
				}
			}
		}
	}
	return errs
}

// nonNegativeReplicas is the default replicas rule.
func nonNegativeReplicas(_ kubeflowv1.ReplicaType, replicas *int32, p *field.Path) field.ErrorList {
	if replicas != nil && *replicas < 0 {
		return apimachineryvalidation.ValidateNonnegativeField(int64(*replicas), p)
	}
	return nil
}

// exactlyOneReplica is v1's Master rule: replicas must be set (defaulting
// sets it) and equal to 1.
func exactlyOneReplica(p *field.Path, replicas *int32) field.ErrorList {
	if replicas == nil || *replicas != 1 {
		return field.ErrorList{field.Forbidden(p, "must be 1")}
	}
	return nil
}

// sortedTypes returns the keys of a replica spec map in sorted order.
func sortedTypes(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) []kubeflowv1.ReplicaType {
	keys := make([]kubeflowv1.ReplicaType, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ratchet drops from errs the errors that the old object has too, so that
// an update of a job admitted under older, laxer rules (for example by v1)
// is not rejected for a problem it did not introduce. An error counts as
// the same when its type, field, value and detail are equal.
func ratchet(errs, oldErrs field.ErrorList) field.ErrorList {
	if len(errs) == 0 || len(oldErrs) == 0 {
		return errs
	}
	var out field.ErrorList
	for _, e := range errs {
		if !slices.ContainsFunc(oldErrs, func(o *field.Error) bool {
			return o.Type == e.Type && o.Field == e.Field && o.Detail == e.Detail && reflect.DeepEqual(o.BadValue, e.BadValue)
		}) {
			out = append(out, e)
		}
	}
	return out
}

// validateJob is the part of every ValidateXJob that handles updates: on
// update (old != nil) the spec errors the old object has as well are
// ratcheted away and managedBy must not change.
func validateJob[J any, P interface {
	*J
	kubeflowv1.Job
}](old, new P, validate func(P) (field.ErrorList, admission.Warnings)) (field.ErrorList, admission.Warnings) {
	errs, warnings := validate(new)
	errs = append(errs, validateFailurePolicy(new)...)
	warnings = append(warnings, failurePolicyWarnings(new)...)
	if old == nil {
		return errs, warnings
	}
	oldErrs, _ := validate(old)
	oldErrs = append(oldErrs, validateFailurePolicy(old)...)
	errs = ratchet(errs, oldErrs)
	errs = append(errs, validateManagedByUpdate(old.RunPolicy(), new.RunPolicy())...)
	errs = append(errs, validateFailurePolicyUpdate(old.RunPolicy(), new.RunPolicy())...)
	return errs, warnings
}
