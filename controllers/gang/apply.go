package gang

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

const (
	// missingRecheck is how long a missing API is believed missing before
	// discovery is asked again (the engine retries a held job every 10 s).
	missingRecheck = 5 * time.Second
	// readTimeout bounds cached reads, whose first use starts an informer
	// that might never sync (for example without RBAC on the PodGroup type).
	readTimeout = 30 * time.Second
)

// jobScope is one Sync or Delete call for one job.
type jobScope struct {
	m    *Manager
	g    engine.GangJob
	job  kubeflowv1.Job
	info kubeflowv1.KindInfo
}

func (m *Manager) scope(g engine.GangJob) *jobScope {
	return &jobScope{m: m, g: g, job: g.Job, info: g.Job.KindInfo()}
}

func (s *jobScope) key() client.ObjectKey {
	return client.ObjectKey{Namespace: s.job.GetNamespace(), Name: s.job.GetName()}
}

// ref names the job in the job memory.
func (s *jobScope) ref() engine.JobRef { return engine.JobRefOf(s.info.Kind, s.job) }

// controllerRef points a PodGroup at its job, like the job's pods.
func (s *jobScope) controllerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         kubeflowv1.GroupVersion.String(),
		Kind:               s.info.Kind,
		Name:               s.job.GetName(),
		UID:                s.job.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

func (s *jobScope) event(eventType, reason, msg string) {
	if s.m.opts.Recorder == nil {
		return
	}
	if rec := s.m.opts.Recorder(s.info.ControllerName); rec != nil {
		rec.Event(s.job, eventType, reason, msg)
	}
}

// warnOnce records a warning unless the job already shows the message (the
// engine puts a held job's message on its Created condition), so a job held
// for minutes does not emit an event every retry.
func (s *jobScope) warnOnce(reason, msg string) {
	for _, c := range s.job.JobStatus().Conditions {
		if c.Type == kubeflowv1.JobCreated && c.Message == msg {
			return
		}
	}
	s.event(corev1.EventTypeWarning, reason, msg)
}

// available tells whether the API of a kind is served, asking discovery (via
// the RESTMapper) at most every missingRecheck while it is missing.
func (m *Manager) available(gvk schema.GroupVersionKind) (bool, error) {
	now := m.opts.Clock.Now()
	m.mu.Lock()
	until, known := m.missing[gvk]
	m.mu.Unlock()
	if known && now.Before(until) {
		return false, nil
	}
	_, err := m.opts.RESTMapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		m.mu.Lock()
		delete(m.missing, gvk)
		m.mu.Unlock()
		return true, nil
	case meta.IsNoMatchError(err):
		m.markMissing(gvk)
		return false, nil
	default:
		return false, fmt.Errorf("discovering %s: %w", gvk, err)
	}
}

func (m *Manager) markMissing(gvk schema.GroupVersionKind) {
	m.mu.Lock()
	m.missing[gvk] = m.opts.Clock.Now().Add(missingRecheck)
	m.mu.Unlock()
}

// isMissingAPI reports an error meaning the resource type is not served (a
// RESTMapper miss). A 404 on a create means the same, since the job's
// namespace exists; on a read it means the object is absent.
func isMissingAPI(err error) bool {
	return meta.IsNoMatchError(err)
}

func missingMessage(k kindInfo, backendName string) string {
	return fmt.Sprintf("gang scheduling with %s needs the %s API, which the cluster does not serve (%s); "+
		"pods are not created until it is available", backendName, k, k.hint)
}

// ensureWatch makes the job's controller watch a kind it now uses, once.
func (s *jobScope) ensureWatch(ctx context.Context, k kindInfo) {
	m := s.m
	if m.opts.Cache == nil {
		return
	}
	name := s.info.ControllerName
	key := name + "/" + k.gvk.String()
	m.mu.Lock()
	reg, ok := m.controllers[name]
	if !ok || m.watched[key] {
		m.mu.Unlock()
		return
	}
	m.watched[key] = true
	m.mu.Unlock()

	h := handler.EnqueueRequestForOwner(m.opts.Scheme, m.opts.RESTMapper, reg.owner, handler.OnlyControllerOwner())
	if err := reg.ctrl.Watch(source.Kind(m.opts.Cache, k.new(), h)); err != nil {
		log.FromContext(ctx).Error(err, "watching PodGroups; relying on periodic retries", "kind", k.String())
		m.mu.Lock()
		delete(m.watched, key)
		m.mu.Unlock()
		return
	}
	log.FromContext(ctx).Info("watching gang-scheduling objects", "kind", k.String(), "controller", name)
}

// applied is what apply found and did.
type applied[T client.Object] struct {
	obj T
	// held is non-empty when the object could not be brought to the wanted
	// state for a reason the user must see (API missing, name taken, rejected).
	held string
}

// apply creates the job's object of kind k if absent (named after the job,
// controlled by it, with the job's annotations), or patches it when mutate
// changes it. mutate sets only the fields the operator owns, so a merge
// patch keeps what others set. created tells mutate whether it is building a
// new object (immutable fields are set only then).
func apply[T client.Object](ctx context.Context, s *jobScope, k kindInfo, backendName string,
	mutate func(obj T, created bool)) (applied[T], error) {
	var zero applied[T]
	ok, err := s.m.available(k.gvk)
	if err != nil {
		return zero, err
	}
	if !ok {
		msg := missingMessage(k, backendName)
		s.warnOnce(ReasonFailedCreatePodGroup, msg)
		return applied[T]{held: msg}, nil
	}
	s.ensureWatch(ctx, k)

	cur := k.new().(T)
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	err = s.m.opts.Client.Get(rctx, s.key(), cur)
	cancel()
	switch {
	case isMissingAPI(err):
		s.m.markMissing(k.gvk)
		msg := missingMessage(k, backendName)
		s.warnOnce(ReasonFailedCreatePodGroup, msg)
		return applied[T]{held: msg}, nil
	case apierrors.IsNotFound(err):
		return create(ctx, s, k, backendName, mutate)
	case err != nil:
		return zero, fmt.Errorf("reading %s %s: %w", k, s.key(), err)
	}
	return update(ctx, s, k, cur, mutate)
}

func create[T client.Object](ctx context.Context, s *jobScope, k kindInfo, backendName string, mutate func(T, bool)) (applied[T], error) {
	var zero applied[T]
	obj := k.new().(T)
	obj.SetName(s.job.GetName())
	obj.SetNamespace(s.job.GetNamespace())
	obj.SetLabels(engine.JobLabels(s.info.ControllerName, s.job.GetName()))
	if a := s.job.GetAnnotations(); len(a) > 0 {
		cp := make(map[string]string, len(a))
		for key, v := range a {
			cp[key] = v
		}
		obj.SetAnnotations(cp)
	}
	obj.SetOwnerReferences([]metav1.OwnerReference{s.controllerRef()})
	mutate(obj, true)

	err := s.m.opts.Client.Create(ctx, obj)
	switch {
	case err == nil:
		podGroupsCreated.Inc()
		s.event(corev1.EventTypeNormal, ReasonCreatePodGroup, fmt.Sprintf("Created %s: %s", k.gvk.Kind, obj.GetName()))
		return applied[T]{obj: obj}, nil
	case apierrors.IsAlreadyExists(err):
		// The cache lags our own create, or someone else holds the name.
		cur := k.new().(T)
		if gerr := s.m.opts.APIReader.Get(ctx, s.key(), cur); gerr != nil {
			return zero, fmt.Errorf("reading %s %s after AlreadyExists: %w", k, s.key(), gerr)
		}
		return update(ctx, s, k, cur, mutate)
	case isMissingAPI(err) || apierrors.IsNotFound(err):
		s.m.markMissing(k.gvk)
		msg := missingMessage(k, backendName)
		s.warnOnce(ReasonFailedCreatePodGroup, msg)
		return applied[T]{held: msg}, nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		msg := fmt.Sprintf("cannot create %s %s for gang scheduling with %s: %v", k, s.key().Name, backendName, err)
		s.warnOnce(ReasonFailedCreatePodGroup, msg)
		return applied[T]{held: msg}, nil
	default:
		return zero, fmt.Errorf("creating %s %s: %w", k, s.key(), err)
	}
}

func update[T client.Object](ctx context.Context, s *jobScope, k kindInfo, cur T, mutate func(T, bool)) (applied[T], error) {
	var zero applied[T]
	name := s.key().Name
	if cur.GetDeletionTimestamp() != nil {
		// Resumed or re-created while the previous group is still going away.
		return applied[T]{held: fmt.Sprintf("waiting for the previous %s %s to be deleted before creating pods", k, name)}, nil
	}
	ref := metav1.GetControllerOf(cur)
	if ref != nil && ref.UID != s.job.GetUID() {
		msg := fmt.Sprintf("%s %s is controlled by %s %s, not by this job; delete it or rename the job", k, name, ref.Kind, ref.Name)
		s.warnOnce(ReasonFailedCreatePodGroup, msg)
		return applied[T]{held: msg}, nil
	}
	want := cur.DeepCopyObject().(T)
	if ref == nil {
		// Created ahead of the job (by a user or a tool): adopt it.
		want.SetOwnerReferences(append(want.GetOwnerReferences(), s.controllerRef()))
	}
	mutate(want, false)
	if equality.Semantic.DeepEqual(cur, want) {
		return applied[T]{obj: cur}, nil
	}
	err := s.m.opts.Client.Patch(ctx, want, client.MergeFrom(cur))
	switch {
	case err == nil:
		return applied[T]{obj: want}, nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		msg := fmt.Sprintf("cannot update %s %s for gang scheduling: %v", k, name, err)
		s.warnOnce(ReasonFailedCreatePodGroup, msg)
		return applied[T]{held: msg}, nil
	default:
		return zero, fmt.Errorf("updating %s %s: %w", k, s.key(), err)
	}
}

// remove deletes the job's object of kind k if it exists and is controlled
// by the job. A missing API or object is not an error. terminated precedes
// the deletion's event with JobTerminated, as v1 did.
func (s *jobScope) remove(ctx context.Context, k kindInfo, terminated bool) error {
	ok, err := s.m.available(k.gvk)
	if err != nil || !ok {
		return err
	}
	obj := k.new()
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	err = s.m.opts.Client.Get(rctx, s.key(), obj)
	cancel()
	switch {
	case isMissingAPI(err):
		s.m.markMissing(k.gvk)
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s %s: %w", k, s.key(), err)
	}
	if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != s.job.GetUID() {
		return nil
	}
	uid := obj.GetUID()
	// A deleted UID is remembered so a lagging cache does not produce a
	// second delete event.
	if obj.GetDeletionTimestamp() != nil || (uid != "" && s.m.memory.IsDeleting(s.ref(), uid)) {
		return nil
	}
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground)}
	if uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	err = s.m.opts.Client.Delete(ctx, obj, opts...)
	switch {
	case err == nil:
		if uid != "" {
			s.m.memory.MarkDeleted(s.ref(), uid)
		}
		podGroupsDeleted.Inc()
		if terminated {
			s.event(corev1.EventTypeNormal, ReasonJobTerminated, jobTerminatedMessage)
		}
		s.event(corev1.EventTypeNormal, ReasonDeletePodGroup, fmt.Sprintf("Deleted %s: %s", k.gvk.Kind, obj.GetName()))
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || isMissingAPI(err):
		return nil
	default:
		s.event(corev1.EventTypeWarning, ReasonFailedDeletePodGroup, fmt.Sprintf("Error deleting %s %s: %v", k.gvk.Kind, obj.GetName(), err))
		return fmt.Errorf("deleting %s %s: %w", k, s.key(), err)
	}
}
