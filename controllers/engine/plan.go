package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// plan collects what one pass decided; apply writes the children, then the
// status once, then events, metrics and the pod writes that follow it.
type plan struct {
	// now is the pass's time, for every timestamp it writes.
	now    metav1.Time
	status kubeflowv1.JobStatus
	// listed are the children the pass read; children are its writes to
	// them before the status write.
	listed       children
	children     childWrites
	events       []event
	requeueAfter time.Duration
	retryDeletes []*corev1.Pod
	// forceDelete are old pods stuck terminating past the lost-pod
	// timeout: apply force-deletes those whose node is lost.
	forceDelete []*corev1.Pod
	jobDeleted  bool
	pods        podReport
	// vanished are the vanishedPods entries the pass dealt with, counted the
	// pods whose restart it counted: settled once the status is written.
	vanished, counted []types.UID
	// release are pods whose tracking finalizer goes once the status is
	// written (nothing left to count of them); track are live pods of a
	// tracked job that lack it (made before the job was tracked).
	release, track []*corev1.Pod
	// policyAction is the failure policy's decision in this pass, if any;
	// restartTook is how long a whole-job restart took, once its new
	// attempt runs.
	policyAction string
	restartTook  time.Duration
	// releasedOld says the pass releases the last held pods of an older
	// attempt, after which the new attempt may be created.
	releasedOld bool
	// stale says the job's status is older than its pods: nothing is done.
	stale bool
	// transitions, for metrics
	created, running, succeeded, failed, restarted bool
}

type event struct {
	eventType, reason, message string
}

func (p *plan) event(eventType, reason, format string, args ...any) {
	p.events = append(p.events, event{eventType, reason, fmt.Sprintf(format, args...)})
}

func (p *plan) requeue(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if p.requeueAfter == 0 || d < p.requeueAfter {
		p.requeueAfter = d
	}
}

// planPass is the linear recipe of one pass over a job: it decides the
// job's status into p, with the child writes before the status write and
// the events, requeue and pod writes after it; apply carries them out. It
// reads the cache, and writes only what planning itself waits on: the
// gang's PodGroup (whose admission decides whether pods are made at all)
// and the framework's extra children (pods are never wired to a name
// another object holds).
func (r *Reconciler[J]) planPass(ctx context.Context, job J, p *plan) error {
	p.now = metav1.NewTime(r.clock.Now())
	now := p.now
	st := &p.status
	kind, name := r.fw.Kind(), job.GetName()
	specs := job.ReplicaSpecs()
	rp := r.fw.RunPolicy(job)

	if getCondition(st, kubeflowv1.JobCreated) == nil {
		setCondition(st, newCondition(kubeflowv1.JobCreated, corev1.ConditionTrue, kind+reasonCreated,
			createdMessage(kind, name), now))
		p.created = true
	}

	pods, svcs, err := r.listChildren(ctx, job)
	if err != nil {
		return err
	}
	ch := bucketChildren(specs, pods, svcs, func(rt kubeflowv1.ReplicaType, i int) string { return r.fw.childName(job, rt, i) })
	p.listed = ch
	st.CountedPods = stillPresent(st.CountedPods, pods)
	p.pods = r.planPodEvents(ctx, job, IsFinished(st), ch.allPods)

	// Set again below while a restart waits for stuck pods.
	st.TerminatingPods = 0
	if IsFinished(st) {
		r.finish(job, ch, p)
		return nil
	}
	if msg := runnable(specs, r.fw.ReplicaTypes(job)); msg != "" {
		r.fail(p, job, kind+"FailedValidation", msg, corev1.EventTypeWarning, now)
		return r.finishAfterWrite(p)
	}
	if rp.Suspend != nil && *rp.Suspend {
		r.suspend(job, ch, p, now)
		return nil
	}
	if hasCondition(st, kubeflowv1.JobSuspended) {
		msg := fmt.Sprintf("%s %s is resumed.", kind, name)
		setCondition(st, newCondition(kubeflowv1.JobSuspended, corev1.ConditionFalse, kind+reasonResumed, msg, now))
		// Set afresh below, once pods may be created again.
		st.StartTime = nil
		p.event(corev1.EventTypeNormal, kind+reasonResumed, "%s", msg)
	}
	// With a gang, startTime waits for its admission (below): as in v1, time
	// held by the gang backend does not count against activeDeadlineSeconds.
	if st.StartTime == nil && r.gang(job) == nil {
		st.StartTime = &now
	}
	// With a failure policy, pods of older attempts are being replaced:
	// only the current attempt's pods are judged, counted and evaluated.
	fp := rp.FailurePolicy
	cur, old := ch, []*corev1.Pod(nil)
	if fp != nil {
		if st.Restarts == nil {
			// Shown from the start: kubectl's Restarts column is blank
			// without it.
			st.Restarts = ptr.To(int32(0))
		}
		if n := newestAttempt(ch.allPods); n > st.Attempt() {
			// A pod of a later attempt than the job's status knows: the status
			// was written, this copy of the job is older (make chaos saw one
			// after an apiserver restart, and the pass took the new attempt for
			// an old one and replaced it). Never act on it.
			log.FromContext(ctx).Info("job status older than its pods' restart attempt, waiting for the cache", "restarts", st.Attempt(), "attempt", n)
			p.status, p.stale = *job.JobStatus().DeepCopy(), true
			p.requeue(staleRetry)
			return nil
		}
		cur, old = ch.ofAttempt(st.Attempt())
	}
	st.ReplicaStatuses = replicaStatuses(r.fw.ControllerName(), name, specs, cur.allPods)
	blockCreates := false
	if fp != nil {
		switch r.applyFailurePolicy(job, cur, specs, p, now) {
		case policyFailed:
			return r.finishAfterWrite(p)
		case policyRestarted:
			// Its status write comes first, then every pod goes (afterStatus);
			// nothing is created in this pass.
			p.retryDeletes = ch.allPods
			p.requeue(restartRecheck)
			return nil
		}
		// A restart in progress: old pods go (again, after a crash), and with
		// BlockingRecreate nothing new is made until all of them are gone.
		p.retryDeletes = append(p.retryDeletes, old...)
		blockCreates = len(old) > 0 && fp.RestartStrategy != kubeflowv1.RestartStrategyRecreate
		r.planRestartWait(job, fp, old, p)
		if wait := restartDelayLeft(fp, st, now.Time); wait > 0 && !blockCreates {
			blockCreates = true
			p.requeue(wait)
		}
	}

	a := r.assess(job, cur, r.vanished.pending(client.ObjectKeyFromObject(job), job.GetUID()), specs, now.Time)
	p.vanished, p.counted = a.vanished, a.counted
	if !r.failOnAssessment(p, job, a, now) {
		r.checkDeadline(p, job, rp, now)
	}
	if IsFinished(st) {
		return r.finishAfterWrite(p)
	}

	st.RestartCount += a.newlyCounted
	for _, c := range a.counted {
		st.CountedPods = append(st.CountedPods, string(c))
	}
	if len(a.retries) > 0 {
		p.retryDeletes = append(p.retryDeletes, a.retryPods...)
		msg := a.restartMessage(kind, name)
		if setCondition(st, newCondition(kubeflowv1.JobRestarting, corev1.ConditionTrue, kind+reasonRestarting, msg, now)) {
			p.event(corev1.EventTypeWarning, kind+reasonRestarting, "%s", msg)
			p.restarted = true
		}
	}

	// A conflict on a framework child (someone else, or our own write the
	// cache has not shown yet, changed it) is retried, but must not hold back
	// the job's pods: the child exists, and a deleted pod waits for nobody.
	extraConflicts, extraErr := r.reconcileExtraChildren(ctx, job, ch.allPods, true)
	if extraErr != nil && !apierrors.IsConflict(extraErr) {
		return extraErr
	}
	if len(extraConflicts) > 0 {
		// Never wire pods to a name someone else holds (a launcher would run
		// with a foreign ServiceAccount): wait until it is free.
		r.recordConflicts(job, p, extraConflicts, now)
		return extraErr
	}
	gang := r.gang(job)
	if gang != nil {
		ready, msg, err := gang.Sync(ctx, r.gangJob(job))
		if err != nil {
			return err
		}
		if !ready {
			// Pods wait for the gang; say so instead of sitting silently Pending.
			st.LastReconcileTime = &now
			if c := getCondition(st, kubeflowv1.JobCreated); c != nil && c.Message != msg {
				c.Message = msg
				c.LastUpdateTime = now
			}
			p.requeue(gangRetry)
			return extraErr
		}
		// Admitted: the Created condition says what v1 says again.
		if c := getCondition(st, kubeflowv1.JobCreated); c != nil && c.Message != createdMessage(kind, name) {
			c.Message = createdMessage(kind, name)
			c.LastUpdateTime = now
		}
		if st.StartTime == nil {
			st.StartTime = &now
			if r.checkDeadline(p, job, rp, now) {
				_ = r.finishAfterWrite(p)
				return extraErr
			}
		}
	}
	// The outcome is decided before any child is written: a pass that
	// finishes the job creates nothing (chaos saw a job completed and, in the
	// same pass, a deleted worker of it recreated).
	p.children.adopt = ch.unindexed
	v := r.fw.Evaluate(job, ReplicaView{Specs: specs, Statuses: st.ReplicaStatuses, Pods: cur.pods})
	if !v.Succeeded && !blockCreates {
		if err := r.planCreates(job, ch, specs, p, gang); err != nil {
			return errors.Join(err, extraErr)
		}
	}
	// What the evaluation says is recorded once the children are written:
	// a pass whose creates fail records neither success nor Running.
	p.children.then = func() { r.recordOutcome(p, job, specs, cur, v, len(a.retries) > 0) }
	return extraErr
}

// recordOutcome records what the success rule says of the job: succeeded,
// or running (once a whole-job restart's new attempt runs).
func (r *Reconciler[J]) recordOutcome(p *plan, job J, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, cur children, v Verdict, retrying bool) {
	st, now, kind := &p.status, p.now, r.fw.Kind()
	switch {
	case v.Succeeded:
		if v.Running {
			// The rule saw the job run and finish in one pass (a rule may count
			// a finished replica as having run): record Running first, as v1 does.
			r.markRunning(p, v.RunningMessage, now)
		}
		if st.CompletionTime == nil {
			st.CompletionTime = &now
		}
		if setCondition(st, newCondition(kubeflowv1.JobSucceeded, corev1.ConditionTrue, kind+reasonSucceeded, v.SucceededMessage, now)) {
			p.event(corev1.EventTypeNormal, kind+reasonSucceeded, "%s", v.SucceededMessage)
			p.succeeded = true
		}
		_ = r.finishAfterWrite(p)
	case v.Running && !retrying:
		if r.restartDone(p, job, specs, cur, now) {
			r.markRunning(p, v.RunningMessage, now)
		}
	}
}

// failOnAssessment fails the job when the per-pod rule says so: the
// backoff limit reached, or a failure its restart policy does not retry.
func (r *Reconciler[J]) failOnAssessment(p *plan, job J, a assessment, now metav1.Time) bool {
	kind := r.fw.Kind()
	switch {
	case a.backoffExceeded(r.fw.RunPolicy(job).BackoffLimit, p.status.RestartCount):
		r.fail(p, job, kind+reasonFailed,
			fmt.Sprintf("Job %s has failed because it has reached the specified backoff limit", job.GetName()), corev1.EventTypeNormal, now)
	case len(a.terminal) > 0:
		r.fail(p, job, kind+reasonFailed, r.fw.failureMessage(job, a), corev1.EventTypeWarning, now)
	default:
		return false
	}
	return true
}

// markRunning records Running=True; the first one ever is the job's start
// for the startup metric.
func (r *Reconciler[J]) markRunning(p *plan, msg string, now metav1.Time) {
	first := getCondition(&p.status, kubeflowv1.JobRunning) == nil
	if setCondition(&p.status, newCondition(kubeflowv1.JobRunning, corev1.ConditionTrue, r.fw.Kind()+reasonRunning, msg, now)) && first {
		p.running = true
	}
}

// checkDeadline fails a job active longer than activeDeadlineSeconds, else
// asks to be woken at its deadline; it reports whether the job failed. A job
// without startTime has not started: its deadline does not run yet.
func (r *Reconciler[J]) checkDeadline(p *plan, job J, rp *kubeflowv1.RunPolicy, now metav1.Time) bool {
	st := &p.status
	if rp.ActiveDeadlineSeconds == nil || st.StartTime == nil {
		return false
	}
	// Saturate: beyond ~292 years seconds*time.Second wraps negative,
	// which failed the job at once (activeDeadlineSeconds is an int64).
	d := time.Duration(1<<63 - 1)
	if s := *rp.ActiveDeadlineSeconds; s <= int64(d/time.Second) {
		d = time.Duration(s) * time.Second
	}
	deadline := st.StartTime.Add(d)
	if now.Time.Before(deadline) {
		p.requeue(deadline.Sub(now.Time))
		return false
	}
	r.fail(p, job, r.fw.Kind()+reasonFailed,
		fmt.Sprintf("Job %s has failed because it was active longer than specified deadline", job.GetName()), corev1.EventTypeNormal, now)
	return true
}

// stillPresent keeps the counted pod UIDs whose pods the cache still holds
// (the cache is synced before the first pass, and a counted pod was in it).
func stillPresent(uids []string, pods []*corev1.Pod) []string {
	if len(uids) == 0 {
		return uids
	}
	present := make(map[string]bool, len(pods))
	for _, pod := range pods {
		present[string(pod.UID)] = true
	}
	kept := uids[:0:0]
	for _, u := range uids {
		if present[u] {
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

func createdMessage(kind, name string) string { return fmt.Sprintf("%s %s is created.", kind, name) }

// gangRetry is how often a job whose gang is not admitted looks again
// (PodGroup watches bring it back sooner).
const gangRetry = 10 * time.Second

func (r *Reconciler[J]) gang(job J) GangScheduler {
	if r.opts.Gang == nil {
		return nil
	}
	return r.opts.Gang(r.gangJob(job))
}

// gangJob is job as its gang scheduler reads it.
func (r *Reconciler[J]) gangJob(job J) GangJob {
	return GangJob{
		Job:          job,
		ReplicaTypes: r.fw.ReplicaTypes(job),
		BuildPod: func(rt kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) (*corev1.Pod, bool, error) {
			return r.fw.buildPod(job, rt, index, spec)
		},
	}
}

// runnable rejects specs the engine cannot build pods from (the webhook
// normally stops them first); "" means fine.
func runnable(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, order []kubeflowv1.ReplicaType) string {
	if len(specs) == 0 {
		return "the job has no replica specs"
	}
	for _, rt := range order {
		s := specs[rt]
		if s == nil || len(s.Template.Spec.Containers) == 0 {
			return fmt.Sprintf("replica spec %s has no containers", rt)
		}
	}
	return ""
}
