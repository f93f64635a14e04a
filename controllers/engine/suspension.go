package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// A suspended job's pods end because of the suspension, not of a failure.
// The in-memory record of our deletions lasts two minutes and dies with
// the process, while a pod with a long grace period (a checkpoint on
// SIGTERM) may still terminate after a resume or a failover. So, as the
// scheduler's preemption and the taint manager do, each pod is marked
// with a DisruptionTarget condition of our reason before it is deleted:
// the pod keeps it while it terminates, and any process can tell it was
// no failure (neither for the failure policy nor for backoffLimit).

// endedBySuspension reports a pod marked as deleted for its job's suspension.
func endedBySuspension(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget {
			return c.Status == corev1.ConditionTrue && c.Reason == kubeflowv1.SuspendedDisruptionReason
		}
	}
	return false
}

// needsSuspensionMark reports a pod the suspension is about to delete that
// does not carry the mark yet. A pod already terminating or finished ended
// for another reason, which the mark must not hide.
func needsSuspensionMark(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded &&
		pod.Status.Phase != corev1.PodFailed && !endedBySuspension(pod)
}

// suspensionMark is the status patch that marks pod (the UID in it is a
// precondition: a same-named successor is never marked).
func suspensionMark(pod *corev1.Pod, msg string, now metav1.Time) (client.Patch, error) {
	body := map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status": map[string]any{"conditions": []corev1.PodCondition{{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: kubeflowv1.SuspendedDisruptionReason,
			Message: msg, LastTransitionTime: now,
		}}},
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.StrategicMergePatchType, raw), nil
}

// markSuspended marks the pods a suspension deletes, in parallel; it
// returns the pods that may be deleted now (marked, or not to be marked).
// A pod whose mark failed is kept for the next pass.
func (r *Reconciler[J]) markSuspended(ctx context.Context, job client.Object, pods []*corev1.Pod, now metav1.Time) ([]*corev1.Pod, error) {
	msg := fmt.Sprintf("%s %s is suspended.", r.fw.Kind(), job.GetName())
	ok := make([]bool, len(pods))
	var mu sync.Mutex
	var errs []error
	workqueue.ParallelizeUntil(ctx, r.opts.Fanout, len(pods), func(i int) {
		pod := pods[i]
		if !needsSuspensionMark(pod) {
			ok[i] = true
			return
		}
		patch, err := suspensionMark(pod, msg, now)
		if err == nil {
			err = r.client.Status().Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}, patch)
		}
		switch {
		case err == nil:
			ok[i] = true
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone, or replaced by a successor: nothing to delete.
		case apierrors.IsForbidden(err):
			// RBAC from before pods/status: suspend as before rather than never.
			log.FromContext(ctx).Info("cannot mark a suspended job's pod, deleting it unmarked", "pod", pod.Name, "err", err.Error())
			ok[i] = true
		default:
			mu.Lock()
			errs = append(errs, fmt.Errorf("marking pod %s: %w", pod.Name, err))
			mu.Unlock()
		}
	})
	var out []*corev1.Pod
	for i, pod := range pods {
		if ok[i] {
			out = append(out, pod)
		}
	}
	return out, errors.Join(errs...)
}
