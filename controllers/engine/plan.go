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
	// releases are the pod writes that follow the status write.
	releases
	// afterWrites is what the pass records instead once every child write
	// succeeded (nil: nothing more): the success rule's verdict, or the
	// suspension, which hold only once the children are written.
	afterWrites *recorded
	// policyAction is the failure policy's decision in this pass, if any;
	// restartTook is how long a whole-job restart took, once its new
	// attempt runs.
	policyAction string
	restartTook  time.Duration
	// stale says the job's status is older than its pods: nothing is done.
	stale bool
	// transitions, for metrics
	created, running, succeeded, failed, restarted bool
}

// releases are the finalizer writes that follow a status write.
type releases struct {
	// release are pods whose tracking finalizer goes once the status is
	// written (nothing left to count of them); track are live pods of a
	// tracked job that lack it (made before the job was tracked).
	release, track []*corev1.Pod
	// releasedOld says the pass releases the last held pods of an older
	// attempt, after which the new attempt may be created.
	releasedOld bool
}

// recorded is a status a pass records once its child writes succeeded,
// with the events, transitions, requeue and releases that go with it.
type recorded struct {
	status             kubeflowv1.JobStatus
	events             []event
	running, succeeded bool
	restartTook        time.Duration
	requeueAfter       time.Duration
	releases
}

// ifWritten plans, on a copy of the status planned so far, what the pass
// records once every child write succeeded.
func (p *plan) ifWritten(record func(q *plan)) {
	q := &plan{now: p.now, status: *p.status.DeepCopy()}
	record(q)
	p.afterWrites = &recorded{status: q.status, events: q.events, running: q.running, succeeded: q.succeeded,
		restartTook: q.restartTook, requeueAfter: q.requeueAfter}
}

// takeAfterWrites makes the status planned for written children the
// pass's (apply, once every child write succeeded).
func (p *plan) takeAfterWrites() {
	a := p.afterWrites
	if a == nil {
		return
	}
	p.status = a.status
	p.events = append(p.events, a.events...)
	p.running = p.running || a.running
	p.succeeded = p.succeeded || a.succeeded
	if a.restartTook > 0 {
		p.restartTook = a.restartTook
	}
	if a.requeueAfter > 0 {
		p.requeue(a.requeueAfter)
	}
	p.releases = a.releases
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

// planPass decides one pass over a job into p: the child writes before the
// status write, the status (and what it becomes once those writes
// succeeded), and the events, requeue and pod writes after it, releases
// included; apply carries them out. It reads the cache and the job's
// memory (once, in planStart). The two writes planning itself makes are
// named in planAdmission: the framework's extra children and the gang's
// PodGroup, whose admission decides whether pods are made at all.
func (r *Reconciler[J]) planPass(ctx context.Context, job J, p *plan) error {
	err := r.planJob(ctx, job, p)
	r.planReleases(job, p)
	return err
}

// planJob is the linear recipe of a pass, step by step; a step that ends
// the pass says so (done).
func (r *Reconciler[J]) planJob(ctx context.Context, job J, p *plan) error {
	in, err := r.planStart(ctx, job, p)
	if err != nil {
		return err
	}
	if done, err := r.planLifecycle(job, in, p); done {
		return err
	}
	done, err := r.planAttempt(ctx, job, &in, p)
	if done {
		return err
	}
	if r.planAssessment(job, &in, p) {
		return nil
	}
	gang, done, extraErr := r.planAdmission(ctx, job, p, in.children)
	if done {
		return extraErr
	}
	return errors.Join(r.planCreates(job, in, gang, p), extraErr)
}

// passInput is what a pass reads once at its start (the cache's children,
// the job's memory) and what its steps derive from it.
type passInput struct {
	specs    map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec
	rp       *kubeflowv1.RunPolicy
	children children
	// cur are the current attempt's children (all of them without a
	// failure policy), old the older attempts' pods.
	cur children
	old []*corev1.Pod
	// vanished are the job's pods the memory saw go without a count yet.
	vanished []*corev1.Pod
	// blockCreates holds the pass's creates back (a restart waits).
	blockCreates bool
	// retrying says the pass restarts failed pods.
	retrying bool
}

// planStart records Created, reads the job's children and its memory (pod
// events, vanished pods) once for the pass.
func (r *Reconciler[J]) planStart(ctx context.Context, job J, p *plan) (passInput, error) {
	p.now = metav1.NewTime(r.clock.Now())
	st := &p.status
	kind, name := r.fw.Kind(), job.GetName()
	in := passInput{specs: job.ReplicaSpecs(), rp: r.fw.RunPolicy(job)}
	if getCondition(st, kubeflowv1.JobCreated) == nil {
		setCondition(st, newCondition(kubeflowv1.JobCreated, corev1.ConditionTrue, kind+reasonCreated,
			createdMessage(kind, name), p.now))
		p.created = true
	}
	pods, svcs, err := r.listChildren(ctx, job)
	if err != nil {
		return in, err
	}
	in.children = bucketChildren(in.specs, pods, svcs, func(rt kubeflowv1.ReplicaType, i int) string { return r.fw.childName(job, rt, i) })
	in.cur = in.children
	p.listed = in.children
	st.CountedPods = stillPresent(st.CountedPods, pods)
	p.pods = r.planPodEvents(ctx, job, IsFinished(st), in.children.allPods)
	in.vanished = r.vanished.pending(client.ObjectKeyFromObject(job), job.GetUID())
	// Set again below while a restart waits for stuck pods.
	st.TerminatingPods = 0
	return in, nil
}

// planLifecycle plans a finished, invalid or suspended job's pass (done),
// or a resumed one's, and the start time of a job without a gang.
func (r *Reconciler[J]) planLifecycle(job J, in passInput, p *plan) (done bool, err error) {
	st, now, kind := &p.status, p.now, r.fw.Kind()
	if IsFinished(st) {
		r.finish(job, in.children, p)
		return true, nil
	}
	if msg := runnable(in.specs, r.fw.ReplicaTypes(job)); msg != "" {
		r.fail(p, job, kind+"FailedValidation", msg, corev1.EventTypeWarning, now)
		return true, r.finishAfterWrite(p)
	}
	if in.rp.Suspend != nil && *in.rp.Suspend {
		r.suspend(job, in.children, p, now)
		return true, nil
	}
	if hasCondition(st, kubeflowv1.JobSuspended) {
		msg := fmt.Sprintf("%s %s is resumed.", kind, job.GetName())
		setCondition(st, newCondition(kubeflowv1.JobSuspended, corev1.ConditionFalse, kind+reasonResumed, msg, now))
		// Set afresh below, once pods may be created again.
		st.StartTime = nil
		p.event(corev1.EventTypeNormal, kind+reasonResumed, "%s", msg)
	}
	// With a gang, startTime waits for its admission (planAdmission): as in
	// v1, time held by the gang backend does not count against
	// activeDeadlineSeconds.
	if st.StartTime == nil && r.gang(job) == nil {
		st.StartTime = &now
	}
	return false, nil
}

// planAttempt applies the failure policy: with one, pods of older attempts
// are being replaced, and only the current attempt's pods are judged,
// counted and evaluated (in.cur); it may fail or restart the whole job
// (done), or hold creates back while a restart waits.
func (r *Reconciler[J]) planAttempt(ctx context.Context, job J, in *passInput, p *plan) (done bool, err error) {
	st, fp := &p.status, in.rp.FailurePolicy
	if fp != nil {
		if st.Restarts == nil {
			// Shown from the start: kubectl's Restarts column is blank
			// without it.
			st.Restarts = ptr.To(int32(0))
		}
		if n := newestAttempt(in.children.allPods); n > st.Attempt() {
			// A pod of a later attempt than the job's status knows: the status
			// was written, this copy of the job is older (make chaos saw one
			// after an apiserver restart, and the pass took the new attempt for
			// an old one and replaced it). Never act on it.
			log.FromContext(ctx).Info("job status older than its pods' restart attempt, waiting for the cache", "restarts", st.Attempt(), "attempt", n)
			p.status, p.stale = *job.JobStatus().DeepCopy(), true
			p.requeue(staleRetry)
			return true, nil
		}
		in.cur, in.old = in.children.ofAttempt(st.Attempt())
	}
	st.ReplicaStatuses = replicaStatuses(r.fw.ControllerName(), job.GetName(), in.specs, in.cur.allPods)
	if fp == nil {
		return false, nil
	}
	switch r.applyFailurePolicy(job, in.cur, in.specs, p, p.now) {
	case policyFailed:
		return true, r.finishAfterWrite(p)
	case policyRestarted:
		// Its status write comes first, then every pod goes (afterStatus);
		// nothing is created in this pass.
		p.retryDeletes = in.children.allPods
		p.requeue(restartRecheck)
		return true, nil
	}
	// A restart in progress: old pods go (again, after a crash), and with
	// BlockingRecreate nothing new is made until all of them are gone.
	p.retryDeletes = append(p.retryDeletes, in.old...)
	in.blockCreates = len(in.old) > 0 && fp.RestartStrategy != kubeflowv1.RestartStrategyRecreate
	r.planRestartWait(job, fp, in.old, p)
	if wait := restartDelayLeft(fp, st, p.now.Time); wait > 0 && !in.blockCreates {
		in.blockCreates = true
		p.requeue(wait)
	}
	return false, nil
}

// planAssessment judges the current attempt's pods by the per-pod rules:
// the job fails (done: backoff limit, a terminal failure, its deadline),
// or failed pods are counted and restarted.
func (r *Reconciler[J]) planAssessment(job J, in *passInput, p *plan) (done bool) {
	st, now, kind := &p.status, p.now, r.fw.Kind()
	a := r.assess(job, in.cur, in.vanished, in.specs, now.Time)
	p.vanished, p.counted = a.vanished, a.counted
	if !r.failOnAssessment(p, job, a, now) {
		r.checkDeadline(p, job, in.rp, now)
	}
	if IsFinished(st) {
		_ = r.finishAfterWrite(p)
		return true
	}
	st.RestartCount += a.newlyCounted
	for _, c := range a.counted {
		st.CountedPods = append(st.CountedPods, string(c))
	}
	in.retrying = len(a.retries) > 0
	if in.retrying {
		p.retryDeletes = append(p.retryDeletes, a.retryPods...)
		msg := a.restartMessage(kind, job.GetName())
		if setCondition(st, newCondition(kubeflowv1.JobRestarting, corev1.ConditionTrue, kind+reasonRestarting, msg, now)) {
			p.event(corev1.EventTypeWarning, kind+reasonRestarting, "%s", msg)
			p.restarted = true
		}
	}
	return false
}

// planAdmission makes the two writes planning waits on, and only these:
// the framework's extra children (pods are never wired to a name another
// object holds) and the gang's PodGroup (whose admission decides whether
// pods are made at all). Not admitted yet, or an extra child's name held
// by someone else, ends the pass (done). A conflict on an extra child
// (someone else, or our own write the cache has not shown yet, changed
// it) is returned as extraErr, retried, but does not hold the pods back.
func (r *Reconciler[J]) planAdmission(ctx context.Context, job J, p *plan, ch children) (gang GangScheduler, done bool, extraErr error) {
	st, now, kind, name := &p.status, p.now, r.fw.Kind(), job.GetName()
	extraConflicts, extraErr := r.reconcileExtraChildren(ctx, job, ch.allPods, true)
	if extraErr != nil && !apierrors.IsConflict(extraErr) {
		return nil, true, extraErr
	}
	if len(extraConflicts) > 0 {
		// A launcher would run with a foreign ServiceAccount: wait until
		// the name is free.
		r.recordConflicts(job, p, extraConflicts, now)
		return nil, true, extraErr
	}
	if gang = r.gang(job); gang == nil {
		return nil, false, extraErr
	}
	ready, msg, err := gang.Sync(ctx, r.gangJob(job))
	if err != nil {
		return nil, true, err
	}
	if !ready {
		// Pods wait for the gang; say so instead of sitting silently Pending.
		st.LastReconcileTime = &now
		if c := getCondition(st, kubeflowv1.JobCreated); c != nil && c.Message != msg {
			c.Message, c.LastUpdateTime = msg, now
		}
		p.requeue(gangRetry)
		return nil, true, extraErr
	}
	// Admitted: the Created condition says what v1 says again.
	if c := getCondition(st, kubeflowv1.JobCreated); c != nil && c.Message != createdMessage(kind, name) {
		c.Message, c.LastUpdateTime = createdMessage(kind, name), now
	}
	if st.StartTime == nil {
		st.StartTime = &now
		if r.checkDeadline(p, job, r.fw.RunPolicy(job), now) {
			_ = r.finishAfterWrite(p)
			return nil, true, extraErr
		}
	}
	return gang, false, extraErr
}

// planCreates decides the outcome before any child is written (a pass that
// finishes the job creates nothing: chaos saw a job completed and, in the
// same pass, a deleted worker of it recreated), plans the missing
// children, and what the success rule's verdict records once they are
// written (a pass whose creates fail records neither success nor Running).
func (r *Reconciler[J]) planCreates(job J, in passInput, gang GangScheduler, p *plan) error {
	p.children.adopt = in.children.unindexed
	v := r.fw.Evaluate(job, ReplicaView{Specs: in.specs, Statuses: p.status.ReplicaStatuses, Pods: in.cur.pods})
	if !v.Succeeded && !in.blockCreates {
		if err := r.planChildCreates(job, in.children, in.specs, p, gang); err != nil {
			return err
		}
	}
	p.ifWritten(func(q *plan) { r.recordOutcome(q, job, in.specs, in.cur, v, in.retrying) })
	return nil
}

// planReleases plans the finalizer writes that follow the status write,
// for the status as planned and as it is once the child writes succeeded.
func (r *Reconciler[J]) planReleases(job J, p *plan) {
	if p.stale {
		return
	}
	p.releases = r.releasable(job, &p.status, p.listed)
	if a := p.afterWrites; a != nil {
		a.releases = r.releasable(job, &a.status, p.listed)
	}
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
