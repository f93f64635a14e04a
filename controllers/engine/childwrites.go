package engine

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// childWrites are the writes a pass planned for the job's children (and,
// past its TTL, the job itself) whose outcome its status records: apply runs
// them before the status write, in the order of the fields, and a failure
// stops the ones after it.
type childWrites struct {
	// adopt are children v1 made without the replica-index label (its MPI
	// launcher): the label is added so the cache buckets them.
	adopt []client.Object
	// sync says the pass creates missing children: their name conflicts,
	// or the end of them, are recorded in the status.
	sync bool
	// creates are the missing children in batches: one, or one per replica
	// type for a framework with OrderedCreation, where a failed batch holds
	// back the later ones (MPI's launcher needs its workers).
	creates []createBatch
	// deletePods and deleteServices are children past the spec (scale
	// down), or a finished or suspended job's, by its cleanPodPolicy.
	deletePods     []*corev1.Pod
	deleteServices []*metav1.PartialObjectMetadata
	// suspending marks deletePods as ended by the suspension before they
	// are deleted (suspension.go).
	suspending bool
	// teardown removes the gang and the framework's extra children.
	teardown bool
	// deleteJob deletes the job: its TTL after finishing has passed.
	deleteJob bool
	// then records in the status what holds only once all the writes above
	// are done (the job runs, succeeded, or is suspended).
	then func()
}

// createBatch is children created together, and the template warnings to
// record once a pod of them is.
type createBatch struct {
	objs     []client.Object
	warnings []event
}

// writeChildren carries out p.children, the conflicts of its creates
// recorded in p.status and its events recorded at once (as v1 does).
func (r *Reconciler[J]) writeChildren(ctx context.Context, job J, p *plan) error {
	w := &p.children
	for _, o := range w.adopt {
		if err := r.adopt(ctx, o, map[string]string{kubeflowv1.ReplicaIndexLabel: "0"}); err != nil {
			return fmt.Errorf("adopting %s: %w", o.GetName(), err)
		}
	}
	if w.sync {
		if err := r.createBatches(ctx, job, p); err != nil {
			return err
		}
	}
	pods, markErr := w.deletePods, error(nil)
	if w.suspending {
		pods, markErr = r.markSuspended(ctx, job, pods, p.now)
	}
	if err := errors.Join(markErr, r.deletePods(ctx, job, pods), r.deleteServices(ctx, job, w.deleteServices)); err != nil {
		return err
	}
	if w.teardown {
		if g := r.gang(job); g != nil {
			if err := g.Delete(ctx, r.gangJob(job)); err != nil {
				return err
			}
		}
		if _, err := r.reconcileExtraChildren(ctx, job, nil, false); err != nil {
			return err
		}
	}
	if w.deleteJob {
		if err := r.deleteJob(ctx, job, p); err != nil {
			return err
		}
	}
	if w.then != nil {
		w.then()
	}
	return nil
}

// createBatches creates the planned children batch by batch, with one event
// per kind of child per pass, not one per object: a 1000-worker job would
// otherwise spend as many requests on events as on pods.
func (r *Reconciler[J]) createBatches(ctx context.Context, job J, p *plan) error {
	var conflicts []string
	var created createdChildren
	defer created.emit(r.recorder, job)
	now := p.now
	for _, b := range p.children.creates {
		c, err := r.createChildren(ctx, job, b.objs, &created)
		if created.madePods {
			for _, w := range b.warnings {
				r.recorder.Event(job, w.eventType, w.reason, w.message)
			}
		}
		created.madePods = false
		conflicts = append(conflicts, c...)
		if err != nil {
			r.recordConflicts(job, p, conflicts, now)
			return err
		}
	}
	r.recordConflicts(job, p, conflicts, now)
	return nil
}
