package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// cleanup is what a cleanPodPolicy deletes. While the job is not finished
// (suspend) every pod and Service goes, whatever the policy.
func cleanup(ch children, policy kubeflowv1.CleanPodPolicy, finished bool) ([]*corev1.Pod, []*metav1.PartialObjectMetadata) {
	if finished && (policy == kubeflowv1.CleanPodPolicyNone || policy == kubeflowv1.CleanPodPolicyUndefined) {
		return nil, nil
	}
	var pods []*corev1.Pod
	names := map[string]bool{}
	for _, pod := range ch.allPods {
		if finished && policy == kubeflowv1.CleanPodPolicyRunning &&
			pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodPending {
			continue
		}
		pods = append(pods, pod)
		names[pod.Name] = true
	}
	var svcs []*metav1.PartialObjectMetadata
	for _, s := range ch.allServices {
		if !finished || policy == kubeflowv1.CleanPodPolicyAll || names[s.Name] {
			svcs = append(svcs, s)
		}
	}
	return pods, svcs
}

func (r *Reconciler[J]) deletePods(ctx context.Context, job client.Object, pods []*corev1.Pod) error {
	objs := make([]client.Object, 0, len(pods))
	for _, p := range pods {
		objs = append(objs, p)
	}
	return r.deleteChildren(ctx, job, objs, "Pod")
}

func (r *Reconciler[J]) deleteServices(ctx context.Context, job client.Object, svcs []*metav1.PartialObjectMetadata) error {
	objs := make([]client.Object, 0, len(svcs))
	for _, s := range svcs {
		objs = append(objs, s)
	}
	return r.deleteChildren(ctx, job, objs, "Service")
}

// deleteChildren deletes in parallel, skipping what is already going away.
// The UID precondition protects a same-named replacement.
func (r *Reconciler[J]) deleteChildren(ctx context.Context, job client.Object, objs []client.Object, what string) error {
	todo := objs[:0:0]
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil || r.memory.IsDeleting(r.jobRef(job), o.GetUID()) {
			continue
		}
		todo = append(todo, o)
	}
	if len(todo) == 0 {
		return nil
	}
	var mu sync.Mutex
	var errs []error
	var deleted []string
	workqueue.ParallelizeUntil(ctx, r.opts.Fanout, len(todo), func(i int) {
		o := todo[i]
		uid := o.GetUID()
		err := r.client.Delete(ctx, o, client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		r.memory.MarkDeleted(r.jobRef(job), uid)
		if err == nil {
			mu.Lock()
			deleted = append(deleted, o.GetName())
			mu.Unlock()
		}
	})
	// One event per outcome and call, as for creates.
	switch noun := lower(what); len(deleted) {
	case 0:
	case 1:
		r.recorder.Event(job, corev1.EventTypeNormal, "SuccessfulDelete"+what, fmt.Sprintf("Deleted %s: %s", noun, deleted[0]))
	default:
		sort.Strings(deleted)
		r.recorder.Event(job, corev1.EventTypeNormal, "SuccessfulDelete"+what, fmt.Sprintf("Deleted %d %ss: %s", len(deleted), noun, joinNames(deleted)))
	}
	if err := errors.Join(errs...); err != nil {
		r.recorder.Event(job, corev1.EventTypeWarning, "FailedDelete"+what, err.Error())
		return err
	}
	return nil
}
