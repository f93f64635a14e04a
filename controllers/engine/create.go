package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createdChildren collects what one pass created, for its events.
type createdChildren struct {
	mu       sync.Mutex
	pods     []string
	services []string
	// madePods says the last batch created at least one pod.
	madePods bool
}

func (c *createdChildren) add(obj client.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, isPod := obj.(*corev1.Pod); isPod {
		c.pods = append(c.pods, obj.GetName())
		c.madePods = true
		return
	}
	c.services = append(c.services, obj.GetName())
}

// emit records v1's SuccessfulCreatePod/SuccessfulCreateService reasons with
// v1's message for a single object ("Created pod: x") and the list otherwise.
func (c *createdChildren) emit(rec EventRecorder, job client.Object) {
	for _, e := range []struct {
		reason, noun string
		names        []string
	}{{"SuccessfulCreatePod", "pod", c.pods}, {"SuccessfulCreateService", "service", c.services}} {
		switch len(e.names) {
		case 0:
		case 1:
			rec.Event(job, corev1.EventTypeNormal, e.reason, fmt.Sprintf("Created %s: %s", e.noun, e.names[0]))
		default:
			sort.Strings(e.names)
			rec.Event(job, corev1.EventTypeNormal, e.reason, fmt.Sprintf("Created %d %ss: %s", len(e.names), e.noun, joinNames(e.names)))
		}
	}
}

// joinNames lists names, eliding the middle of very long lists so the event
// stays readable (and under the API's message size limit).
func joinNames(names []string) string {
	const keep = 10
	if len(names) <= 2*keep {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, ... (%d more), %s", strings.Join(names[:keep], ", "), len(names)-2*keep, strings.Join(names[len(names)-keep:], ", "))
}

// createChildren creates objects in parallel. It returns the names held by
// objects this job does not own, and the other creation errors joined.
func (r *Reconciler[J]) createChildren(ctx context.Context, job client.Object, objs []client.Object, created *createdChildren) ([]string, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	var mu sync.Mutex
	var conflicts []string
	var errs []error
	failed, failedCount := map[string]error{}, map[string]int{}
	workqueue.ParallelizeUntil(ctx, r.opts.Fanout, len(objs), func(i int) {
		obj := objs[i]
		_, isPod := obj.(*corev1.Pod)
		what, prefix := "Service", "svc/"
		if isPod {
			what, prefix = "Pod", "pod/"
		}
		err := r.client.Create(ctx, obj)
		switch {
		case err == nil:
			r.memory.MarkCreated(r.jobRef(job), prefix+obj.GetName())
			created.add(obj)
		case apierrors.IsAlreadyExists(err):
			// The cache lags, or the name belongs to someone else: ask the API.
			existing := emptyLike(obj)
			if gerr := r.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); gerr != nil {
				// Deleted meanwhile: the next pass creates it. Anything else
				// must fail the pass, so it is retried with backoff.
				if !apierrors.IsNotFound(gerr) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("reading %s %s after AlreadyExists: %w", lower(what), obj.GetName(), gerr))
					mu.Unlock()
				}
				return
			}
			if ref := metav1.GetControllerOf(existing); ref != nil && ref.UID == job.GetUID() {
				// Ours: either the cache lags our create, or it is the previous
				// incarnation still terminating (its deletion event brings us
				// back), or it was made without the labels our cache selects
				// on, and adopting it lets the cache see it.
				if existing.GetDeletionTimestamp() == nil {
					if err := r.adopt(ctx, existing, obj.GetLabels()); err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("adopting %s %s: %w", lower(what), obj.GetName(), err))
						mu.Unlock()
						return
					}
					r.memory.MarkCreated(r.jobRef(job), prefix+obj.GetName())
				}
				return
			}
			mu.Lock()
			conflicts = append(conflicts, fmt.Sprintf("%s %s", lower(what), obj.GetName()))
			mu.Unlock()
		default:
			if isPod {
				countPodCreateFailure(r.fw.MetricsLabel(), err)
			}
			mu.Lock()
			if failed[what] == nil {
				failed[what] = err
			}
			failedCount[what]++
			errs = append(errs, fmt.Errorf("creating %s %s: %w", lower(what), obj.GetName(), err))
			mu.Unlock()
		}
	})
	// A quota or admission denial fails every object alike: one event each way.
	for _, what := range []string{"Pod", "Service"} {
		if err := failed[what]; err != nil {
			msg := "Error creating: " + err.Error()
			if n := failedCount[what]; n > 1 {
				msg = fmt.Sprintf("Error creating %d %ss, first: %v", n, lower(what), err)
			}
			r.recorder.Event(job, corev1.EventTypeWarning, "FailedCreate"+what, msg)
		}
	}
	return conflicts, errors.Join(errs...)
}

func lower(s string) string {
	if s == "Pod" {
		return "pod"
	}
	return "service"
}

// recordConflicts turns child-name collisions into a condition and an event
// and a slow requeue, never a hot loop; the condition goes once resolved.
func (r *Reconciler[J]) recordConflicts(job client.Object, p *plan, conflicts []string, now metav1.Time) {
	st := &p.status
	if len(conflicts) == 0 {
		removeCondition(st, ConditionChildConflict)
		return
	}
	msg := fmt.Sprintf("%s %s cannot create its children: %v already exist and are owned by another object; delete them or rename the job",
		r.fw.Kind(), job.GetName(), conflicts)
	cur := getCondition(st, ConditionChildConflict)
	if cur == nil || cur.Status != corev1.ConditionTrue {
		p.event(corev1.EventTypeWarning, "ErrResourceExists", "%s", msg)
	}
	if cur != nil && cur.Status == corev1.ConditionTrue {
		cur.Message = msg
	} else {
		setCondition(st, newCondition(ConditionChildConflict, corev1.ConditionTrue, "ChildNameConflict", msg, now))
	}
	p.requeue(conflictRetry)
}
