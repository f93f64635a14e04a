package engine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// ControllerUIDIndex indexes pods and Services by their controller owner's
// UID, so a new job that reuses a deleted job's name never adopts its children.
const ControllerUIDIndex = ".metadata.controllerUID"

// SetupIndexes registers the engine's field indexes; call once per manager.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	index := func(o client.Object) []string {
		ref := metav1.GetControllerOf(o)
		if ref == nil || ref.APIVersion != kubeflowv1.GroupVersion.String() {
			return nil
		}
		return []string{string(ref.UID)}
	}
	for _, obj := range []client.Object{&corev1.Pod{}, NewServiceMeta()} {
		if err := indexer.IndexField(ctx, obj, ControllerUIDIndex, index); err != nil {
			return err
		}
	}
	return nil
}

// listChildren reads the job's pods and Services from the cache by owner UID.
// They are the cache's own objects, not copies (a 1000-replica job was
// deep-copied on every pass): the engine only reads them, and builds new
// objects for anything it writes.
func (r *Reconciler[J]) listChildren(ctx context.Context, job client.Object) ([]*corev1.Pod, []*metav1.PartialObjectMetadata, error) {
	opts := []client.ListOption{client.InNamespace(job.GetNamespace()), client.MatchingFields{ControllerUIDIndex: string(job.GetUID())},
		client.UnsafeDisableDeepCopy}
	var pl corev1.PodList
	if err := r.client.List(ctx, &pl, opts...); err != nil {
		return nil, nil, err
	}
	var sl metav1.PartialObjectMetadataList
	sl.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
	if err := r.client.List(ctx, &sl, opts...); err != nil {
		return nil, nil, err
	}
	pods := make([]*corev1.Pod, 0, len(pl.Items))
	for i := range pl.Items {
		pods = append(pods, &pl.Items[i])
	}
	svcs := make([]*metav1.PartialObjectMetadata, 0, len(sl.Items))
	for i := range sl.Items {
		svcs = append(svcs, &sl.Items[i])
	}
	return pods, svcs, nil
}

// planChildCreates plans the creation of missing pods and Services by index and
// the deletion of the ones past the spec (scale down): all of a job's
// missing children in one batch, or one batch per replica type in the
// framework's order for frameworks that need it (OrderedCreation). apply
// creates them in bounded parallel fan-out. A pod that cannot be built
// plans nothing: the pass fails and is retried.
func (r *Reconciler[J]) planChildCreates(job J, ch children, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, p *plan, gang GangScheduler) error {
	var creates []createBatch
	var batch createBatch
	for _, rt := range r.fw.ReplicaTypes(job) {
		objs, warnings, err := r.missingChildren(job, ch, rt, specs[rt], p, gang)
		if err != nil {
			return err
		}
		batch.objs = append(batch.objs, objs...)
		// The template is the same for every index: warned once per type and pass.
		batch.warnings = append(batch.warnings, warnings...)
		if r.fw.ordered && len(batch.objs) > 0 {
			creates = append(creates, batch)
			batch = createBatch{}
		}
	}
	if len(batch.objs) > 0 {
		creates = append(creates, batch)
	}
	w := &p.children
	w.sync, w.creates = true, creates
	w.deletePods, w.deleteServices = ch.strayPods, ch.strayServices
	return nil
}

// missingChildren builds the pods and Services of one replica type that
// neither exist nor are being created, and the template warnings to record
// once they are.
func (r *Reconciler[J]) missingChildren(job J, ch children, rt kubeflowv1.ReplicaType, spec *kubeflowv1.ReplicaSpec, p *plan, gang GangScheduler) ([]client.Object, []event, error) {
	j := r.jobRef(job)
	var creates []client.Object
	var restartWarning, schedulerWarning string
	for i := 0; i < int(spec.ReplicaCount()); i++ {
		name := r.fw.childName(job, rt, i)
		if r.fw.services {
			if _, ok := ch.services[rt][i]; ok {
				r.memory.Observed(j, "svc/"+name)
			} else if !r.memory.IsCreating(j, "svc/"+name) {
				creates = append(creates, r.fw.buildService(job, rt, i, spec))
			}
		}
		if _, ok := ch.pods[rt][i]; ok {
			r.memory.Observed(j, "pod/"+name)
			continue
		}
		if left, ok := r.memory.Creating(j, "pod/"+name); ok {
			// Created, not seen yet. A pod normally shows within moments; one
			// deleted before the cache ever showed it (its events lost while a
			// watch was broken: chaos had a job wait forever so) brings the job
			// back by no event: look again once the record expires.
			if left < inflightTTL-unseenCreate {
				p.requeue(left + time.Second)
			}
			continue
		}
		pod, ov, err := r.fw.buildPod(job, rt, i, spec)
		if err != nil {
			return nil, nil, fmt.Errorf("building pod %s: %w", name, err)
		}
		if ov {
			restartWarning = templateRestartWarning(r.fw.RunPolicy(job))
		}
		if gang != nil {
			if w := gang.DecoratePod(job, rt, pod); w != "" {
				schedulerWarning = w
			}
		}
		creates = append(creates, pod)
	}
	var warnings []event
	if restartWarning != "" {
		warnings = append(warnings, event{corev1.EventTypeWarning, "SetPodTemplateRestartPolicy", restartWarning})
	}
	if schedulerWarning != "" {
		warnings = append(warnings, event{corev1.EventTypeWarning, "SetPodTemplateSchedulerName", schedulerWarning})
	}
	return creates, warnings, nil
}

// unseenCreate is how long a created pod may stay unseen by the cache
// before its job looks again when the in-flight record expires.
const unseenCreate = 5 * time.Second

// adopt adds the labels want to a child the job controls that lacks some of
// them (made by v1), so the label-filtered cache holds it from then on and
// it is bucketed like the children we make.
func (r *Reconciler[J]) adopt(ctx context.Context, obj client.Object, want map[string]string) error {
	updated := obj.DeepCopyObject().(client.Object)
	if !addLabels(updated, want) {
		return nil
	}
	return client.IgnoreNotFound(r.client.Patch(ctx, updated, client.MergeFrom(obj)))
}

// templateRestartWarning says what replaces a pod template's restartPolicy:
// the replica spec's, as v1 said, or Never under a failure policy, which
// decides every restart itself.
func templateRestartWarning(rp *kubeflowv1.RunPolicy) string {
	if rp.FailurePolicy != nil {
		return "Restart policy in pod template will be overwritten by Never: with runPolicy.failurePolicy the operator decides every restart"
	}
	return "Restart policy in pod template will be overwritten by restart policy in replica spec"
}
