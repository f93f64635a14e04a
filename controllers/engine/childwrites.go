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
}

// createBatch is children created together, and the template warnings to
// record once a pod of them is.
type createBatch struct {
	objs     []client.Object
	warnings []event
}

// writeChildren carries out p.children; once every write succeeded, the
// status planned for that (plan.afterWrites) becomes the pass's. The
// conflicts of its creates are recorded in the status either way, and
// their events at once (as v1 does).
func (r *Reconciler[J]) writeChildren(ctx context.Context, job J, p *plan) error {
	conflicts, created, err := r.runChildWrites(ctx, job, p)
	if err == nil {
		p.takeAfterWrites()
	}
	if created {
		r.recordConflicts(job, p, conflicts, p.now)
	}
	return err
}

// runChildWrites runs the planned child writes in order; created says the
// creates ran, with conflicts the names someone else holds.
func (r *Reconciler[J]) runChildWrites(ctx context.Context, job J, p *plan) (conflicts []string, created bool, err error) {
	w := &p.children
	for _, o := range w.adopt {
		if err := r.adopt(ctx, o, map[string]string{kubeflowv1.ReplicaIndexLabel: "0"}); err != nil {
			return nil, false, fmt.Errorf("adopting %s: %w", o.GetName(), err)
		}
	}
	if w.sync {
		created = true
		if conflicts, err = r.createBatches(ctx, job, p); err != nil {
			return conflicts, created, err
		}
	}
	pods, markErr := w.deletePods, error(nil)
	if w.suspending {
		pods, markErr = r.markSuspended(ctx, job, pods, p.now)
	}
	if err := errors.Join(markErr, r.deletePods(ctx, job, pods), r.deleteServices(ctx, job, w.deleteServices)); err != nil {
		return conflicts, created, err
	}
	if w.teardown {
		if g := r.gang(job); g != nil {
			if err := g.Delete(ctx, r.gangJob(job)); err != nil {
				return conflicts, created, err
			}
		}
		if _, err := r.reconcileExtraChildren(ctx, job, nil, false); err != nil {
			return conflicts, created, err
		}
	}
	if w.deleteJob {
		if err := r.deleteJob(ctx, job, p); err != nil {
			return conflicts, created, err
		}
	}
	return conflicts, created, nil
}

// createBatches creates the planned children batch by batch, with one event
// per kind of child per pass, not one per object: a 1000-worker job would
// otherwise spend as many requests on events as on pods.
func (r *Reconciler[J]) createBatches(ctx context.Context, job J, p *plan) ([]string, error) {
	var conflicts []string
	var created createdChildren
	defer created.emit(r.recorder, job)
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
			return conflicts, err
		}
	}
	return conflicts, nil
}
