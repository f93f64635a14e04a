package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// apply carries out a planned pass over job (cached is the job as read):
// the child writes whose outcome the status records, then the status once;
// then the vanished pods it counted are settled, and afterStatus records
// events and metrics and runs the pod writes that had to wait for the
// write. planErr is the planning's error.
func (r *Reconciler[J]) apply(ctx context.Context, key types.NamespacedName, cached, job J, p *plan, planErr error) (ctrl.Result, error) {
	planErr = errors.Join(planErr, r.writeChildren(ctx, job, p))
	if !p.jobDeleted {
		delay, err := r.writeStatus(ctx, cached, &p.status)
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				// Someone else wrote the job meanwhile; its watch event brings us
				// back, and a short requeue covers a missed one.
				log.FromContext(ctx).V(2).Info("status write conflicted, requeueing", "err", err.Error())
				return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}
			return ctrl.Result{}, err
		}
		if delay > 0 {
			// Nothing was recorded, so this pass's transitions (if any) are
			// planned again by the pass that writes them; its pod writes rest
			// on what is written already.
			p.requeue(delay)
			if err := r.applyPodWrites(ctx, job, p); err != nil || planErr != nil {
				return ctrl.Result{}, errors.Join(planErr, err)
			}
			return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
		}
	}
	if rp := r.fw.RunPolicy(job); IsFinished(&p.status) || p.jobDeleted || (rp.Suspend != nil && *rp.Suspend) {
		// Pods leaving now are no restart.
		r.vanished.forget(key, job.GetUID())
	} else {
		r.vanished.settle(key, job.GetUID(), p.vanished, p.counted)
	}
	if err := r.afterStatus(ctx, job, p); err != nil || planErr != nil {
		// A failed retry deletion is retried with backoff (its Warning event
		// is recorded by deletePods).
		return ctrl.Result{}, errors.Join(planErr, err)
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// writeStatus patches the status subresource when it changed, or returns how
// long a change without news may wait (see statusDelay). The patch carries
// the resourceVersion so a stale cache can never overwrite newer status.
func (r *Reconciler[J]) writeStatus(ctx context.Context, cached J, st *kubeflowv1.JobStatus) (time.Duration, error) {
	cur := cached.JobStatus()
	if equality.Semantic.DeepEqual(cur, st) {
		r.holds.unhold(cached)
		return 0, nil
	}
	now := r.clock.Now()
	held := r.holds.hold(cached, now)
	if d := statusDelay(cur, st, held, now, r.opts.StatusBatchWindow); d > 0 {
		return d, nil
	}
	patch, stored, err := statusPatch(cached.GetResourceVersion(), cur, st)
	if err != nil {
		return 0, err
	}
	gvk, err := apiutil.GVKForObject(cached, r.client.Scheme())
	if err != nil {
		return 0, err
	}
	// The response is asked for as metadata only: the patch was locked to
	// cached's resourceVersion, so the job now is cached with the status
	// written and the response's metadata. Decoding the whole job would be
	// much of a status write's cost, and the apiserver would encode it for
	// nothing.
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	meta.SetNamespace(cached.GetNamespace())
	meta.SetName(cached.GetName())
	if err := r.client.Status().Patch(ctx, meta, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return 0, err
	}
	// The memory keeps only the written status and version: an empty job
	// with the cached one's identity carries them, not a copy of all of it.
	written := r.fw.NewJob()
	written.SetNamespace(cached.GetNamespace())
	written.SetName(cached.GetName())
	written.SetUID(cached.GetUID())
	if err := json.Unmarshal(stored, written.JobStatus()); err != nil {
		return 0, err
	}
	written.SetResourceVersion(meta.GetResourceVersion())
	written.SetGeneration(meta.GetGeneration())
	r.written.remember(cached.GetResourceVersion(), written)
	return 0, nil
}

// statusPatch is the JSON merge patch from status cur to next, locked to the
// resourceVersion both were computed over. client.MergeFrom built the same
// patch by copying the job, serialising it twice whole and diffing generic
// maps of both, which made building the patch most of a status write's
// CPU.
// It also returns next as stored (JSON: times in whole seconds).
func statusPatch(resourceVersion string, cur, next *kubeflowv1.JobStatus) (patch, stored []byte, err error) {
	from, err := json.Marshal(cur)
	if err != nil {
		return nil, nil, err
	}
	to, err := json.Marshal(next)
	if err != nil {
		return nil, nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, nil, err
	}
	var body statusPatchBody
	body.Metadata.ResourceVersion = resourceVersion
	body.Status = diff
	patch, err = json.Marshal(body)
	return patch, to, err
}

// statusPatchBody is a status merge patch with its optimistic lock.
type statusPatchBody struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Status json.RawMessage `json:"status"`
}

// afterStatus runs what must follow a durable status write: events for the
// transitions just recorded, metrics, and deleting pods whose retry was counted.
func (r *Reconciler[J]) afterStatus(ctx context.Context, job client.Object, p *plan) error {
	r.recordPodEvents(job, p.pods)
	for _, e := range p.events {
		r.recorder.Event(job, e.eventType, e.reason, e.message)
	}
	ns, fwLabel := job.GetNamespace(), r.fw.MetricsLabel()
	if p.created {
		jobsCreated.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.running {
		jobStartupSeconds.WithLabelValues(ns, fwLabel).Observe(r.clock.Since(job.GetCreationTimestamp().Time).Seconds())
	}
	if p.restarted {
		jobsRestarted.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.succeeded {
		jobsSuccessful.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.failed {
		jobsFailed.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.jobDeleted {
		jobsDeleted.WithLabelValues(ns, fwLabel).Inc()
	}
	if p.policyAction != "" {
		failurePolicyActions.WithLabelValues(fwLabel, p.policyAction).Inc()
	}
	if p.restartTook > 0 {
		jobRestartSeconds.WithLabelValues(fwLabel).Observe(p.restartTook.Seconds())
	}
	return r.applyPodWrites(ctx, job, p)
}

// applyPodWrites runs the pass's pod writes that must follow the status
// that counted them: finalizers released or added, pods deleted to be
// recreated (retries, and a whole-job restart's old attempt). When the
// status of a later pass is held (statusDelay: replica counts only), what
// they depend on is already written, so they run then too: holding them
// would keep a restarting job's old pods until the held status is written.
func (r *Reconciler[J]) applyPodWrites(ctx context.Context, job client.Object, p *plan) error {
	errs := []error{
		r.releasePods(ctx, job, p.release),
		patchPods(ctx, r.client, r.opts.Fanout, p.track, trackPatch, nil),
	}
	if len(p.retryDeletes) > 0 {
		errs = append(errs, r.deletePods(ctx, job, p.retryDeletes))
	}
	errs = append(errs, r.forceDeleteLost(ctx, job, p.forceDelete))
	if p.releasedOld {
		// The last pods of the old attempt go with their finalizers: look
		// again soon for the new attempt rather than wait for their delete
		// events' batching.
		p.requeue(restartRecheck)
	}
	return errors.Join(errs...)
}
