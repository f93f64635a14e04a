package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ExtraChildren is an optional capability of frameworks whose jobs own
// children besides pods and Services (MPI's ConfigMap and launcher RBAC).
// The framework only says what they should be; the engine creates, adopts,
// repairs and removes them the way it does pods and Services, so objects
// made by v1 (same names, other labels) are taken over, not fought.
type ExtraChildren[J Job[J]] interface {
	// ExtraTypes are the kinds of extra children; they are watched and
	// enqueued to their controlling job.
	ExtraTypes() []ExtraType
	// DesiredChildren are the extra children an active job should have now,
	// given its current pods (read-only).
	DesiredChildren(job J, pods []*corev1.Pod) []DesiredChild
}

// ExtraType is one kind of extra child.
type ExtraType struct {
	Object client.Object
	// KeepWhenInactive keeps the children of this kind while the job is
	// suspended or finished (MPI's, as v1 does: they hold no resources and
	// go with the job). Others are deleted then, like the elastic HPA.
	KeepWhenInactive bool
}

// DesiredChild is one extra child as the job wants it.
type DesiredChild struct {
	Object client.Object
	// UseExisting accepts a same-named object the job does not control as it
	// is (a ServiceAccount the user named in the launcher template) instead
	// of reporting a name conflict. It is never updated or deleted.
	UseExisting bool
}

// desiredExtraChildren is what an active job should have: the framework's
// children and, for an elastic job with metrics, its HPA.
func (fw *adapter[J]) desiredExtraChildren(job J, pods []*corev1.Pod) []DesiredChild {
	var out []DesiredChild
	if hpa := fw.desiredHPA(job); hpa != nil {
		out = append(out, DesiredChild{Object: hpa})
	}
	if fw.extra != nil {
		out = append(out, fw.extra.DesiredChildren(job, pods)...)
	}
	return out
}

// kindOf is a child's Go type name ("ConfigMap"): the in-flight key prefix
// and the noun of conflict messages.
func kindOf(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}

// emptyLike is a new empty object of obj's type: the API decodes into it
// without keeping anything of obj (a decode into a used object merges maps).
func emptyLike(obj client.Object) client.Object {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
}

func extraKey(obj client.Object) string { return strings.ToLower(kindOf(obj)) + "/" + obj.GetName() }

// reconcileExtraChildren brings the job's extra children to what it wants:
// while active, every desired child exists, is ours and matches; children
// of the job's extra kinds that are not desired are deleted, and so are all
// of the kinds not kept while the job is inactive. It returns the names
// held by objects the job does not control; pods must wait for those.
func (r *Reconciler[J]) reconcileExtraChildren(ctx context.Context, job J, pods []*corev1.Pod, active bool) ([]string, error) {
	types := r.fw.extraTypes
	if len(types) == 0 {
		return nil, nil
	}
	var desired []DesiredChild
	if active {
		desired = r.fw.desiredExtraChildren(job, pods)
	}
	var conflicts []string
	var errs []error
	wanted := map[string]bool{}
	for _, d := range desired {
		wanted[extraKey(d.Object)] = true
		conflict, err := r.syncExtraChild(ctx, job, d)
		if conflict != "" {
			conflicts = append(conflicts, conflict)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", kindOf(d.Object), d.Object.GetName(), err))
		}
	}
	for _, t := range types {
		if !active && t.KeepWhenInactive {
			continue
		}
		if err := r.pruneExtraChildren(ctx, job, t.Object, wanted); err != nil {
			errs = append(errs, err)
		}
	}
	return conflicts, errors.Join(errs...)
}

// syncExtraChild creates, adopts or repairs one desired child. The cache
// holds only labelled children; an object v1 made carries other labels, so
// the create meets AlreadyExists and the API says whose it is: controlled by
// this job, it is adopted (our labels added, so the cache sees it from then
// on) and brought to the desired content; else the name is a conflict.
func (r *Reconciler[J]) syncExtraChild(ctx context.Context, job client.Object, d DesiredChild) (conflict string, err error) {
	j, key := r.jobRef(job), extraKey(d.Object)
	existing := emptyLike(d.Object)
	err = r.client.Get(ctx, client.ObjectKeyFromObject(d.Object), existing)
	switch {
	case err == nil:
		r.memory.Observed(j, key)
		return r.repairExtraChild(ctx, job, d, existing)
	case !apierrors.IsNotFound(err):
		return "", err
	case r.memory.IsCreating(j, key):
		return "", nil // created or adopted by us; the cache has not caught up yet
	}
	err = r.client.Create(ctx, d.Object.DeepCopyObject().(client.Object))
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err == nil {
			r.memory.MarkCreated(j, key)
		}
		return "", err
	}
	existing = emptyLike(d.Object)
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(d.Object), existing); err != nil {
		return "", client.IgnoreNotFound(err) // deleted meanwhile: the next pass creates it
	}
	conflict, err = r.repairExtraChild(ctx, job, d, existing)
	if conflict == "" && err == nil {
		// Adopted, or someone else's that we use: do not ask the API again
		// until the cache shows it (or for a while).
		r.memory.MarkCreated(j, key)
	}
	return conflict, err
}

// repairExtraChild brings an existing object to the desired labels and
// content, if the job controls it.
func (r *Reconciler[J]) repairExtraChild(ctx context.Context, job client.Object, d DesiredChild, existing client.Object) (conflict string, err error) {
	if ref := metav1.GetControllerOfNoCopy(existing); ref == nil || ref.UID != job.GetUID() {
		if d.UseExisting {
			return "", nil
		}
		return fmt.Sprintf("%s %s", strings.ToLower(kindOf(existing)), existing.GetName()), nil
	}
	if existing.GetDeletionTimestamp() != nil {
		return "", nil // its deletion event brings the job back to create it anew
	}
	if immutableDiffers(existing, d.Object) {
		uid := existing.GetUID()
		return "", client.IgnoreNotFound(r.client.Delete(ctx, existing, client.Preconditions{UID: &uid}))
	}
	updated := existing.DeepCopyObject().(client.Object)
	changed := addLabels(updated, d.Object.GetLabels())
	changed = copyContent(updated, d.Object) || changed
	if !changed {
		return "", nil
	}
	// A merge patch without a resourceVersion: these fields are the job's
	// alone, and an update from a cache that lags our own previous write
	// would conflict and wait behind the retry backoff.
	return "", r.client.Patch(ctx, updated, client.MergeFrom(existing))
}

// addLabels adds want's labels to obj; it reports whether any was missing.
func addLabels(obj client.Object, want map[string]string) bool {
	labels := obj.GetLabels()
	changed := false
	for k, v := range want {
		if cur, ok := labels[k]; ok && cur == v {
			continue
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[k] = v
		changed = true
	}
	if changed {
		obj.SetLabels(labels)
	}
	return changed
}

// copyContent copies the fields the job owns from desired into obj (same
// type) and reports whether they differed. A ServiceAccount has none.
func copyContent(obj, desired client.Object) bool {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return set(&o.Data, desired.(*corev1.ConfigMap).Data)
	case *rbacv1.Role:
		return set(&o.Rules, desired.(*rbacv1.Role).Rules)
	case *rbacv1.RoleBinding:
		return set(&o.Subjects, desired.(*rbacv1.RoleBinding).Subjects)
	case *autoscalingv2.HorizontalPodAutoscaler:
		return set(&o.Spec, desired.(*autoscalingv2.HorizontalPodAutoscaler).Spec)
	}
	return false
}

// set assigns want to *field when they differ semantically.
func set[T any](field *T, want T) bool {
	if equality.Semantic.DeepEqual(*field, want) {
		return false
	}
	*field = want
	return true
}

// immutableDiffers reports a difference the API cannot patch (a
// RoleBinding's roleRef): such a child is replaced.
func immutableDiffers(obj, desired client.Object) bool {
	if rb, ok := obj.(*rbacv1.RoleBinding); ok {
		return rb.RoleRef != desired.(*rbacv1.RoleBinding).RoleRef
	}
	return false
}

// pruneExtraChildren deletes the job's children of one kind that are not
// wanted. It reads the cache, which holds the labelled ones: ours, and v1's
// once adopted.
func (r *Reconciler[J]) pruneExtraChildren(ctx context.Context, job client.Object, kind client.Object, wanted map[string]bool) error {
	list, err := r.listOf(kind)
	if err != nil {
		return err
	}
	if err := r.client.List(ctx, list, client.InNamespace(job.GetNamespace()),
		client.MatchingLabels(JobLabels(r.fw.ControllerName(), job.GetName())), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	var errs []error
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok || !metav1.IsControlledBy(obj, job) || wanted[extraKey(obj)] || obj.GetDeletionTimestamp() != nil ||
			r.memory.IsDeleting(r.jobRef(job), obj.GetUID()) {
			continue
		}
		uid := obj.GetUID()
		if err := r.client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", kindOf(obj), obj.GetName(), err))
			continue
		}
		r.memory.MarkDeleted(r.jobRef(job), uid)
	}
	return errors.Join(errs...)
}

// listOf is an empty list of obj's kind.
func (r *Reconciler[J]) listOf(obj client.Object) (client.ObjectList, error) {
	gvk, err := apiutil.GVKForObject(obj, r.client.Scheme())
	if err != nil {
		return nil, err
	}
	o, err := r.client.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	list, ok := o.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", gvk.Kind+"List")
	}
	return list, nil
}
