package engine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// A job with runPolicy.failurePolicy runs in attempts: status.restarts is
// the current one, and every pod carries the attempt it was made for
// (kubeflowv1.RestartAttemptLabel). A whole-job restart raises
// status.restarts in one status write, then deletes every pod of an older
// attempt; the pods of the new attempt are created once their
// predecessors are gone (all of them, with BlockingRecreate). Only pods of
// the current attempt are judged, so a restart recorded before a crash is
// carried out, not judged again, by the next pass.

// attemptOf is the restart attempt a pod was made for; a pod without the
// label belongs to attempt 0.
func attemptOf(pod *corev1.Pod) int32 {
	n, err := strconv.ParseInt(pod.Labels[kubeflowv1.RestartAttemptLabel], 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// newestAttempt is the highest restart attempt among pods.
func newestAttempt(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		n = max(n, attemptOf(p))
	}
	return n
}

// staleRetry is how soon a pass that found its copy of the job older than
// the job's pods looks again (the watch brings the newer job sooner).
const staleRetry = time.Second

// jobFailure is a failure of a pod of the current attempt, as the failure
// policy judges it.
type jobFailure struct {
	podFailure
	pod *corev1.Pod
	// mainExit is the exit a rule without containerName reads (mainExit):
	// its container and termination; nil when there is none.
	mainExitName string
	mainExit     *corev1.ContainerStateTerminated
	// at is when the pod failed: its container's termination, its
	// disruption or its deletion, whichever came first.
	at time.Time
}

// failedAt estimates when pod failed, from what the pod records.
func failedAt(pod *corev1.Pod) time.Time {
	var at time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				earlier(t.FinishedAt.Time)
			}
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			earlier(c.LastTransitionTime.Time)
		}
	}
	if pod.DeletionTimestamp != nil {
		// The deletion timestamp is the deletion time plus the grace period.
		d := pod.DeletionTimestamp.Time
		if pod.DeletionGracePeriodSeconds != nil {
			d = d.Add(-time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
		}
		earlier(d)
	}
	if at.IsZero() {
		at = pod.CreationTimestamp.Time
	}
	return at
}

// mainContainerFailed reports whether the main container terminated
// non-zero while the pod still runs (a sidecar keeps it Running).
func mainContainerFailed(pod *corev1.Pod, main string) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == main && cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 {
			return true
		}
	}
	return false
}

// byTime orders failures earliest first (pod name breaks ties).
func byTime(fs []jobFailure) {
	sort.SliceStable(fs, func(i, j int) bool {
		if !fs[i].at.Equal(fs[j].at) {
			return fs[i].at.Before(fs[j].at)
		}
		return fs[i].Pod < fs[j].Pod
	})
}

// verdict is what the failure policy decided for a pass.
type verdict struct {
	// action is FailJob, RestartJob or RestartJobAndIgnoreMaxRestarts.
	action kubeflowv1.FailurePolicyAction
	// rule is the matching rule's name; "" when no rule matched.
	rule    string
	failure jobFailure
}

// judge applies the rules to the failures of the current attempt, earliest
// first: a failure a rule hands to the replica's restartPolicy is left to
// the per-pod handling (perPod); the first one that is not decides. The
// ranks that die afterwards of the first one's timeout are not judged.
func judge(fp *kubeflowv1.FailurePolicy, failures []jobFailure) (v *verdict, perPod []jobFailure) {
	byTime(failures)
	for _, f := range failures {
		rule := matchRule(fp, f)
		if rule != nil && rule.Action == kubeflowv1.UseReplicaRestartPolicyAction {
			perPod = append(perPod, f)
			continue
		}
		if rule == nil {
			return &verdict{action: kubeflowv1.RestartJobAction, failure: f}, perPod
		}
		if ec := rule.OnExitCodes; ec != nil {
			// The message names the container the rule read.
			f.Container, f.ExitCode = f.exit(ec.ContainerName)
		}
		return &verdict{action: rule.Action, rule: rule.Name, failure: f}, perPod
	}
	return nil, perPod
}

// matchRule is the first rule matching f, or nil.
func matchRule(fp *kubeflowv1.FailurePolicy, f jobFailure) *kubeflowv1.FailurePolicyRule {
	for i := range fp.Rules {
		if ruleMatches(&fp.Rules[i], f) {
			return &fp.Rules[i]
		}
	}
	return nil
}

func ruleMatches(rule *kubeflowv1.FailurePolicyRule, f jobFailure) bool {
	if len(rule.TargetReplicaTypes) > 0 && !slices.Contains(rule.TargetReplicaTypes, f.RType) {
		return false
	}
	if ec := rule.OnExitCodes; ec != nil {
		name, code := f.exit(ec.ContainerName)
		if name == "" || code == 0 {
			return false
		}
		in := slices.Contains(ec.Values, code)
		return in == (ec.Operator == kubeflowv1.FailurePolicyOnExitCodesOpIn)
	}
	if len(rule.OnPodConditions) > 0 {
		return slices.ContainsFunc(rule.OnPodConditions, func(p kubeflowv1.FailurePolicyOnPodConditionsPattern) bool {
			status := p.Status
			if status == "" {
				status = corev1.ConditionTrue
			}
			return slices.ContainsFunc(f.pod.Status.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == p.Type && c.Status == status
			})
		})
	}
	return true
}

// exit is the container an onExitCodes rule naming container reads and
// its exit code: the container or init container of that name (as batch/v1
// reads any container), the failure's mainExit when container is "". The
// name is "" when that container has not terminated.
func (f *jobFailure) exit(container string) (string, int32) {
	if container == "" {
		if f.mainExit == nil {
			return "", 0
		}
		return f.mainExitName, f.mainExit.ExitCode
	}
	for _, statuses := range [][]corev1.ContainerStatus{f.pod.Status.ContainerStatuses, f.pod.Status.InitContainerStatuses} {
		if t := terminated(statuses, container); t != nil {
			return container, t.ExitCode
		}
	}
	return "", 0
}

// terminated is the last termination of the container named name.
func terminated(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStateTerminated {
	for _, cs := range statuses {
		if cs.Name != name {
			continue
		}
		if t := cs.State.Terminated; t != nil {
			return t
		}
		return cs.LastTerminationState.Terminated
	}
	return nil
}

// mainExit is the exit a rule without containerName reads: the main
// container's; before it ran, that of the init container that failed the
// pod (a data fetch, the MPI launcher's kubectl delivery). Native sidecars
// (init containers that restart) are never read by such a rule.
func mainExit(pod *corev1.Pod, main string, sidecars map[string]bool) (string, *corev1.ContainerStateTerminated) {
	if t := terminated(pod.Status.ContainerStatuses, main); t != nil {
		return main, t
	}
	for _, cs := range pod.Status.InitContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 && !sidecars[cs.Name] {
			return cs.Name, t
		}
	}
	return "", nil
}

// nativeSidecars are the init containers of a replica's template that
// restart (restartPolicy Always): sidecars, not steps of the pod's start.
func nativeSidecars(spec *kubeflowv1.ReplicaSpec) map[string]bool {
	if spec == nil {
		return nil
	}
	var out map[string]bool
	for _, c := range spec.Template.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			if out == nil {
				out = map[string]bool{}
			}
			out[c.Name] = true
		}
	}
	return out
}

// describe names the rule (or its absence), the failure and the budget
// for conditions and events.
func (v *verdict) describe(counted bool, restartsCounted, maxRestarts int32) string {
	var b strings.Builder
	if v.rule != "" {
		fmt.Fprintf(&b, "rule %q (%s) matched ", v.rule, v.action)
	} else {
		fmt.Fprintf(&b, "no rule matched (%s) ", v.action)
	}
	b.WriteString(v.failure.String())
	for _, c := range v.failure.pod.Status.Conditions {
		if c.Status == corev1.ConditionTrue && c.Type == corev1.DisruptionTarget {
			fmt.Fprintf(&b, ", condition %s", c.Type)
		}
	}
	if counted {
		fmt.Fprintf(&b, "; restarts counted %d/%d", restartsCounted, maxRestarts)
	}
	return b.String()
}

// policyOutcome is what applyFailurePolicy did to the pass.
type policyOutcome int

const (
	policyNone policyOutcome = iota
	// policyFailed: the job fails (a FailJob rule, or maxRestarts spent).
	policyFailed
	// policyRestarted: a whole-job restart is recorded in the status.
	policyRestarted
)

// restartRecheck is how soon a restarting job looks again after a write
// that lets the restart move on (old pods deleted, the last ones
// released), instead of waiting for its pods' batched events: each wait
// would add a child-event delay to the restart.
const restartRecheck = 200 * time.Millisecond

// restartReason is the Restarting condition's reason for a whole-job
// restart: which rule's action (or none) decided it.
func (v *verdict) restartReason() string {
	switch {
	case v.rule == "":
		return kubeflowv1.FailurePolicyNoRuleMatchedReason
	case v.action == kubeflowv1.RestartJobAndIgnoreMaxRestartsAction:
		return kubeflowv1.FailurePolicyRestartJobAndIgnoreMaxRestartsReason
	}
	return kubeflowv1.FailurePolicyRestartJobReason
}

// wholeJobRestart reports a Restarting reason of the failure policy's, as
// opposed to v1's per-pod <Kind>Restarting.
func wholeJobRestart(reason string) bool {
	switch reason {
	case kubeflowv1.FailurePolicyRestartJobReason, kubeflowv1.FailurePolicyRestartJobAndIgnoreMaxRestartsReason,
		kubeflowv1.FailurePolicyNoRuleMatchedReason:
		return true
	}
	return false
}

// applyFailurePolicy judges the current attempt's failures and records the
// decision in the plan's status: Failed, or a restart (restarts raised,
// Restarting with the rule, pod and budget). Deletions follow the write.
func (r *Reconciler[J]) applyFailurePolicy(job J, cur children, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, p *plan, now metav1.Time) policyOutcome {
	st := &p.status
	fp := r.fw.RunPolicy(job).FailurePolicy
	kind, name := r.fw.Kind(), job.GetName()
	v, perPod := judge(fp, r.currentFailures(job, cur, specs))
	if v == nil {
		// Only failures for the per-pod rule, which the pass applies next.
		return policyNone
	}
	if len(perPod) > 0 {
		// Failures before the one judged were handed to the per-pod rule:
		// they come first. They may fail the job (v1's way), else their
		// retries are counted, and then the later failure decides.
		a := r.assess(job, cur.onlyPods(perPod), nil, specs, now.Time)
		if r.failOnAssessment(p, job, a, now) {
			return policyFailed
		}
		st.RestartCount += a.newlyCounted
		for _, c := range a.counted {
			st.CountedPods = append(st.CountedPods, string(c))
		}
	}
	switch {
	case v.action == kubeflowv1.FailJobAction:
		p.policyAction = string(kubeflowv1.FailJobAction)
		r.fail(p, job, kubeflowv1.FailurePolicyFailJobReason, fmt.Sprintf("%s %s has failed because the failure policy's %s.", kind, name, v.describe(false, 0, 0)),
			corev1.EventTypeWarning, now)
		return policyFailed
	case v.action == kubeflowv1.RestartJobAction && st.RestartsCountTowardsMax >= fp.MaxRestarts:
		p.policyAction = "MaxRestartsReached"
		r.fail(p, job, kubeflowv1.ReachedMaxRestartsReason, fmt.Sprintf("%s %s has failed because it has reached the failure policy's maxRestarts (%d): %s.",
			kind, name, fp.MaxRestarts, v.describe(false, 0, 0)), corev1.EventTypeWarning, now)
		return policyFailed
	case fp.MaxTotalRestarts != nil && st.Attempt() >= *fp.MaxTotalRestarts:
		p.policyAction = "MaxTotalRestartsReached"
		r.fail(p, job, kubeflowv1.ReachedMaxTotalRestartsReason, fmt.Sprintf("%s %s has failed because it has reached the failure policy's maxTotalRestarts (%d): %s.",
			kind, name, *fp.MaxTotalRestarts, v.describe(false, 0, 0)), corev1.EventTypeWarning, now)
		return policyFailed
	}
	counted := v.action == kubeflowv1.RestartJobAction
	st.Restarts = ptr.To(st.Attempt() + 1)
	if counted {
		st.RestartsCountTowardsMax++
	}
	msg := fmt.Sprintf("%s %s is restarting the whole job, attempt %d: %s.", kind, name, st.Attempt(),
		v.describe(counted, st.RestartsCountTowardsMax, fp.MaxRestarts))
	if d := restartDelay(fp, st.Attempt()); d > 0 {
		msg += fmt.Sprintf(" Its pods are created %s after this decision (failurePolicy.restartBackoff).", d)
	}
	reason := v.restartReason()
	if !setCondition(st, newCondition(kubeflowv1.JobRestarting, corev1.ConditionTrue, reason, msg, now)) {
		// Restarting again before the last attempt ran: the new decision's
		// message and time.
		if c := getCondition(st, kubeflowv1.JobRestarting); c != nil {
			c.Message, c.LastUpdateTime = msg, now
		}
	}
	p.event(corev1.EventTypeWarning, reason, "%s", msg)
	p.restarted = true
	p.policyAction = string(v.action)
	return policyRestarted
}

// currentFailures are the failures of the current attempt's pods not
// counted or being deleted by us yet. Failures of replica types the
// framework tolerates (TF's dynamic workers) stay with the per-pod rule.
func (r *Reconciler[J]) currentFailures(job J, cur children, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec) []jobFailure {
	counted := countedSet(job.JobStatus().CountedPods)
	tolerance := r.fw.tolerance
	j := r.jobRef(job)
	var out []jobFailure
	for rt, byIndex := range cur.pods {
		if tolerance != nil && tolerance.ToleratesFailure(job, rt) {
			continue
		}
		main, sidecars := r.fw.mainContainer(job, specs[rt]), nativeSidecars(specs[rt])
		for _, pod := range byIndex {
			if counted[string(pod.UID)] || r.memory.IsDeleting(j, pod.UID) || endedBySuspension(pod) {
				continue
			}
			deleted := pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded
			if pod.Status.Phase != corev1.PodFailed && !deleted && !mainContainerFailed(pod, main) {
				continue
			}
			f := describeFailure(pod, rt, main)
			if deleted {
				f.Disrupted = true
				if f.Reason == "" {
					f.Reason = "Deleted"
				}
			}
			jf := jobFailure{podFailure: f, pod: pod, at: failedAt(pod)}
			jf.mainExitName, jf.mainExit = mainExit(pod, main, sidecars)
			if f.Container == "" && jf.mainExit != nil {
				// Failed before its containers ran: the init container's exit.
				jf.Container, jf.ExitCode = jf.mainExitName, jf.mainExit.ExitCode
				if jf.Reason == "" {
					jf.Reason = jf.mainExit.Reason
				}
			}
			out = append(out, jf)
		}
	}
	return out
}

// restartDone holds Running back after a whole-job restart until every
// pod of the new attempt runs (or has finished), then announces how long
// the restart took. Without such a restart it says go.
func (r *Reconciler[J]) restartDone(p *plan, job client.Object, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, cur children, now metav1.Time) bool {
	c := getCondition(&p.status, kubeflowv1.JobRestarting)
	if c == nil || c.Status != corev1.ConditionTrue || !wholeJobRestart(c.Reason) {
		return true
	}
	for rt, spec := range specs {
		for i := 0; i < int(spec.ReplicaCount()); i++ {
			pod := cur.pods[rt][i]
			if pod == nil || pod.DeletionTimestamp != nil ||
				(pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodSucceeded) {
				return false
			}
		}
	}
	took := now.Sub(c.LastUpdateTime.Time)
	p.restartTook = max(took, time.Nanosecond)
	p.event(corev1.EventTypeNormal, r.fw.Kind()+"RestartCompleted", "%s %s runs again: every pod of attempt %d is running, %s after the restart was decided.",
		r.fw.Kind(), job.GetName(), p.status.Attempt(), took.Round(time.Second))
	return true
}
