/*
Copyright 2026 The training-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package model

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// The oracle is written from the spec text (kubeflow-v1.md), never from the
// engine. Its rules, with the spec lines they come from:
//
//  R1 restart rule, one for all kinds (Part A "One restart engine", fixing
//     B8 #29/#30, so TF and XGBoost follow the policy too):
//     - Always/OnFailure retry every failed pod;
//     - ExitCode retries exit codes >= 128 and disruptions (a DisruptionTarget
//       condition: kubelet or API eviction) whatever the code, and fails on 1-127;
//     - Never fails on any failed pod, an evicted one included: Part A puts
//       "retryable whatever its code" inside the ExitCode clause and then
//       says "Never fails".
//  R2 a pod deleted by someone else (a user, or the Eviction API, which
//     deletes) is recreated under every policy and counted as a retry:
//     Part A "deleted by someone else is retryable"; v1 recreates a missing
//     pod whatever the policy (B4 §4.3 "An empty bucket → create a pod"), and
//     Part A does not change that for Never.
//  R3 in-place kubelet restarts (Always/OnFailure pods) are retries too and
//     count against backoffLimit while the pod lives (Part A "backoffLimit
//     bounds all retries (container restarts and pod recreations)").
//  R4 status.restartCount is "failed pods it recreated, pods deleted or
//     evicted by others, and in-place container restarts of pods it
//     replaced" (API doc of JobStatus.RestartCount): a recreation adds
//     1 + the replaced pod's in-place restarts; in-place restarts of a pod
//     that is still there are not in it yet.
//  R5 backoffLimit N allows N retries (like a batch Job): the job fails once
//     restartCount + in-place restarts of live pods + the retry at hand
//     exceeds N. The retry that would exceed it does not happen, so
//     restartCount keeps its value. Reason <Kind>Failed, message "Job <name>
//     has failed because it has reached the specified backoff limit" (B4 §4.2
//     step 7). The backoff check comes before the per-pod verdict (B4 §4.2
//     step 7 runs before the pods are reconciled), but a terminal failure
//     never adds a retry, so it cannot cross the limit itself.
//  R6 a terminal pod failure fails the job: reason <Kind>Failed, message
//     "<Kind> <name> is failed because 1 <Type> replica(s) failed." (TF:
//     "TFJob <ns>/<name> has failed because ...") (B4 §4.6 table) followed by details naming the pod and the exit code (Part A
//     "Failure messages name the replica, pod, container, exit code").
//  R7 success rules per kind (B4 §4.6 table, "expected = replicas - succeeded"):
//     PyTorch/Paddle: Master all succeeded if a Master exists, else all
//     Workers; JAX: all Workers; XGBoost: Master; MPI: Launcher; TF: Chief
//     (or Master) if present, else all Workers, or worker-0 succeeded with
//     exit 0 unless successPolicy is AllWorkers. Messages as in the table.
//  R8 terminal conditions are sticky (Part A): nothing after Succeeded/Failed
//     changes the outcome; the script stops there.
//  R9 a job that is neither Succeeded nor Failed ends Running=True (every
//     scenario has a pod of the deciding replica type running again once
//     retries are recreated) and never stays Restarting (Part A "A job never
//     hangs in Restarting"). A finished job has Running or Restarting False
//     (B4 §4.6: Succeeded/Failed flip Running to False; the e2e helper wants
//     Running/Restarting not True on success; we hold Failed to the same).
//
// With runPolicy.failurePolicy (README "Failure policy"):
//
//  P1 a failure is a pod of the current attempt ending Failed, deleted or
//     evicted by others, or its default container ending non-zero while a
//     sidecar keeps it running. Only the earliest failure of the attempt is
//     judged (by its recorded time); pods of older attempts never are.
//  P2 rules in order, the first match decides. A rule matches failures of
//     its targetReplicaTypes (all if empty) with onExitCodes (the default
//     container's code unless containerName says otherwise; In lists it,
//     NotIn: non-zero and not listed; a container without an exit code
//     matches neither) or onPodConditions (DisruptionTarget, status True
//     by default: kubelet and API evictions), or anything if neither. No
//     match: RestartJob.
//  P3 FailJob fails the job, naming the rule, the pod and the code (reason
//     FailurePolicyFailJob). RestartJob restarts the whole job and counts
//     toward maxRestarts; with restartsCountTowardsMax already at
//     maxRestarts the job fails instead, naming the limit (and the rule;
//     reason ReachedMaxRestarts). RestartJobAndIgnoreMaxRestarts restarts
//     without counting.
//  P4 a restart raises status.restarts (and restartsCountTowardsMax when
//     counted) and replaces every pod, succeeded ones too: the new attempt
//     starts with every pod running and nothing succeeded. It does not
//     change status.restartCount: pods a restart deletes are never counted
//     there.
//  P5 UseReplicaRestartPolicy hands the failure to R1-R6 (restartCount and
//     backoffLimit as without a policy); then the next failure of the
//     attempt, in time order, is judged.
//  P6 pods run with restartPolicy Never: no in-place restarts, and a pod
//     whose container exits 0 Succeeds whatever its replica's policy.

// Phase is a job's final state.
type Phase string

const (
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
)

// Slot is one replica index; its pod may be recreated many times.
type Slot struct {
	Type  kubeflowv1.ReplicaType
	Index int
}

// Effect is what one step does to the job, as far as its status shows.
type Effect string

const (
	// EffectNone changes nothing the job status shows (an in-place restart
	// under the limit): there is nothing to wait for.
	EffectNone      Effect = "none"
	EffectRetry     Effect = "retry"     // restartCount+1+restarts, pod recreated
	EffectSucceeded Effect = "succeeded" // the pod succeeded, the job not yet
	EffectFinished  Effect = "finished"  // the job is Succeeded or Failed now
	// EffectRestart is a whole-job restart (P4): restarts+1, every pod new.
	EffectRestart Effect = "restart"
)

// State is the oracle's prediction after a step.
type State struct {
	Phase Phase
	// Reason and Message of the terminal condition. For a pod failure,
	// Message is the v1 prefix and MessageParts must appear after it; for a
	// failure the failure policy decided, whose wording the README leaves
	// open, Message is empty and MessageParts name the pod, the rule, the
	// limit and the exit code.
	Reason       string
	Message      string
	MessageParts []string
	RestartCount int32
	// Restarts and RestartsCountTowardsMax are the failure policy's
	// whole-job restarts (P4); Restarts is also the current attempt.
	Restarts                int32
	RestartsCountTowardsMax int32
	// Succeeded counts pods in phase Succeeded per replica type, in the
	// current attempt.
	Succeeded map[kubeflowv1.ReplicaType]int32
}

// StepResult is the oracle's reading of one step.
type StepResult struct {
	Effect Effect
	// Recreated reports that the step's pod gets a new incarnation.
	Recreated bool
	// Moot reports a step on a pod whose attempt ended before it (a
	// burst's later step after a restart or the job's end): the pod may
	// already be gone, and nothing the step does is judged or counted.
	Moot bool
	// PerPod reports a failure the failure policy handed to R1-R6 (P5).
	PerPod bool
	State  State
}

type slotState struct {
	succeeded bool
	// restarts are in-place container restarts of the current incarnation.
	restarts int32
}

// Oracle replays a scenario's steps.
type Oracle struct {
	s     *Scenario
	slots map[Slot]*slotState
	state State
}

// NewOracle starts with every pod running and nothing counted.
func NewOracle(s *Scenario) *Oracle {
	o := &Oracle{s: s, slots: map[Slot]*slotState{}, state: State{Phase: PhaseRunning}}
	for _, r := range s.Replicas {
		for i := 0; i < r.Replicas; i++ {
			o.slots[Slot{r.Type, i}] = &slotState{}
		}
	}
	return o
}

// Finished reports a terminal job (R8).
func (o *Oracle) Finished() bool { return o.state.Phase != PhaseRunning }

// Attempt is the current whole-job restart attempt (P4).
func (o *Oracle) Attempt() int32 { return o.state.Restarts }

// State is the current prediction.
func (o *Oracle) State() State {
	st := o.state
	st.Succeeded = map[kubeflowv1.ReplicaType]int32{}
	for sl, ss := range o.slots {
		if ss.succeeded {
			st.Succeeded[sl.Type]++
		}
	}
	return st
}

// LiveSlots are the slots whose pod has not succeeded, in a stable order.
func (o *Oracle) LiveSlots() []Slot {
	var out []Slot
	for _, r := range o.s.Replicas {
		for i := 0; i < r.Replicas; i++ {
			if !o.slots[Slot{r.Type, i}].succeeded {
				out = append(out, Slot{r.Type, i})
			}
		}
	}
	return out
}

// Predict replays every step and returns the final state and each step's result.
func Predict(s *Scenario) (State, []StepResult) {
	o := NewOracle(s)
	results := make([]StepResult, 0, len(s.Steps))
	for _, st := range s.Steps {
		results = append(results, o.Apply(st))
	}
	return o.State(), results
}

// Apply runs one step. Steps after the job finished, on a pod that
// already succeeded or on a pod of an attempt that is over are not
// applicable; they report EffectNone, and all but the second Moot (the
// generator makes such steps only in bursts, after a step that ended the
// attempt).
func (o *Oracle) Apply(st Step) StepResult {
	ss := o.slots[Slot{st.Type, st.Index}]
	if o.Finished() || ss == nil || ss.succeeded || st.Attempt != o.state.Restarts {
		return StepResult{Effect: EffectNone, Moot: o.Finished() || st.Attempt != o.state.Restarts, State: o.State()}
	}
	policy := o.s.Replica(st.Type).Policy
	outcome := st.Outcome
	if outcome == Succeed && policy == kubeflowv1.RestartPolicyAlways && o.s.FailurePolicy == nil {
		// The kubelet restarts a clean exit under Always: an in-place restart
		// (P6: not with a failure policy, whose pods run with Never).
		outcome = Crash
	}
	if fp := o.s.FailurePolicy; fp != nil && outcome.failure() {
		// P1/P2: every step is judged when it happens, the earliest failure
		// first: a burst's steps come in their time order, and earlier
		// steps' failures were dealt with before.
		rule := o.matchRule(fp, st)
		action := kubeflowv1.RestartJobAction
		if rule != nil {
			action = rule.Action
		}
		switch action {
		case kubeflowv1.FailJobAction:
			return o.finish(o.policyFailure(rule, st, false))
		case kubeflowv1.RestartJobAction:
			if o.state.RestartsCountTowardsMax >= fp.MaxRestarts {
				return o.finish(o.policyFailure(rule, st, true))
			}
			return o.restart(true)
		case kubeflowv1.RestartJobAndIgnoreMaxRestartsAction:
			return o.restart(false)
		}
		// UseReplicaRestartPolicy: P5, on to R1-R6.
		res := o.applyPerPod(st, ss, policy, outcome)
		res.PerPod = true
		return res
	}
	return o.applyPerPod(st, ss, policy, outcome)
}

// applyPerPod is v1's per-pod handling of one step (R1-R8).
func (o *Oracle) applyPerPod(st Step, ss *slotState, policy kubeflowv1.RestartPolicy, outcome Outcome) StepResult {
	switch outcome {
	case Crash:
		ss.restarts++ // R3
		if o.backoffExceeded(0) {
			return o.finish(o.backoffFailure())
		}
		return StepResult{Effect: EffectNone, State: o.State()}
	case Succeed:
		ss.succeeded = true
		if ok, msg := o.succeeded(); ok { // R7
			return o.finish(State{Phase: PhaseSucceeded, Reason: o.s.Kind + "Succeeded", Message: msg})
		}
		return StepResult{Effect: EffectSucceeded, State: o.State()}
	}
	if !retryable(policy, outcome, st.Code) {
		return o.finish(o.podFailure(st)) // R6
	}
	// R2/R4/R5: the pod is recreated, unless that retry crosses the limit.
	if o.backoffExceeded(1) {
		return o.finish(o.backoffFailure())
	}
	o.state.RestartCount += 1 + ss.restarts
	ss.restarts = 0
	return StepResult{Effect: EffectRetry, Recreated: true, State: o.State()}
}

// handsBack reports a failure step that the failure policy hands to the
// per-pod rule (P5) when it is judged, whether or not it ever is.
func (o *Oracle) handsBack(st Step) bool {
	fp := o.s.FailurePolicy
	if fp == nil || !st.Outcome.failure() {
		return false
	}
	rule := o.matchRule(fp, st)
	return rule != nil && rule.Action == kubeflowv1.UseReplicaRestartPolicyAction
}

// restart is P4.
func (o *Oracle) restart(counted bool) StepResult {
	o.state.Restarts++
	if counted {
		o.state.RestartsCountTowardsMax++
	}
	for _, ss := range o.slots {
		*ss = slotState{}
	}
	return StepResult{Effect: EffectRestart, State: o.State()}
}

// matchRule is P2: the first rule matching the step's failure, or nil.
func (o *Oracle) matchRule(fp *kubeflowv1.FailurePolicy, st Step) *kubeflowv1.FailurePolicyRule {
	for i := range fp.Rules {
		rule := &fp.Rules[i]
		if len(rule.TargetReplicaTypes) > 0 && !slices.Contains(rule.TargetReplicaTypes, st.Type) {
			continue
		}
		if ec := rule.OnExitCodes; ec != nil {
			// Only the main container exits in these scenarios; a
			// deletion without a code leaves it without one.
			code, ok := exitCodeOf(st)
			if ec.ContainerName != "" && ec.ContainerName != o.s.MainContainer(st.Type) {
				ok = false
			}
			listed := slices.Contains(ec.Values, code)
			if ok && listed == (ec.Operator == kubeflowv1.FailurePolicyOnExitCodesOpIn) {
				return rule
			}
			continue
		}
		if len(rule.OnPodConditions) > 0 {
			for _, c := range rule.OnPodConditions {
				status := c.Status
				if status == "" {
					status = corev1.ConditionTrue
				}
				if c.Type == corev1.DisruptionTarget && status == corev1.ConditionTrue && disrupted(st.Outcome) {
					return rule
				}
			}
			continue
		}
		return rule
	}
	return nil
}

// exitCodeOf is the main container's exit code after a failure step,
// if it has one.
func exitCodeOf(st Step) (int32, bool) {
	switch st.Outcome {
	case Fail, Evict, MainExit:
		return st.Code, true
	case Delete, APIEvict:
		return st.Code, st.Code != 0
	}
	return 0, false
}

// disrupted reports an outcome whose pod carries DisruptionTarget=True: the
// kubelet's eviction and the Eviction API set it, a plain delete does not.
func disrupted(out Outcome) bool {
	return out == Evict || out == APIEvict
}

// policyFailure is P3's failure: a FailJob rule, or the budget spent.
func (o *Oracle) policyFailure(rule *kubeflowv1.FailurePolicyRule, st Step, budget bool) State {
	parts := []string{o.s.PodName(st.Type, st.Index)}
	if rule != nil {
		parts = append(parts, rule.Name)
	}
	if budget {
		parts = append(parts, "maxRestarts")
	}
	if code, ok := exitCodeOf(st); ok {
		parts = append(parts, o.s.MainContainer(st.Type), fmt.Sprintf("exited with code %d", code))
	}
	reason := kubeflowv1.FailurePolicyFailJobReason
	if budget {
		reason = kubeflowv1.ReachedMaxRestartsReason
	}
	return State{Phase: PhaseFailed, Reason: reason, MessageParts: parts}
}

// retryable is R1/R2.
func retryable(p kubeflowv1.RestartPolicy, out Outcome, code int32) bool {
	switch out {
	case Delete, APIEvict:
		return true
	case Evict:
		return p != kubeflowv1.RestartPolicyNever
	}
	switch p {
	case kubeflowv1.RestartPolicyAlways, kubeflowv1.RestartPolicyOnFailure:
		return true
	case kubeflowv1.RestartPolicyExitCode:
		return code >= 128
	}
	return false
}

// backoffExceeded is R5 with extra retries about to happen.
func (o *Oracle) backoffExceeded(extra int32) bool {
	if o.s.BackoffLimit == nil {
		return false
	}
	total := o.state.RestartCount + extra
	for _, ss := range o.slots {
		total += ss.restarts
	}
	return total > *o.s.BackoffLimit
}

func (o *Oracle) finish(st State) StepResult {
	st.RestartCount = o.state.RestartCount
	st.Restarts, st.RestartsCountTowardsMax = o.state.Restarts, o.state.RestartsCountTowardsMax
	o.state = st
	return StepResult{Effect: EffectFinished, State: o.State()}
}

func (o *Oracle) backoffFailure() State {
	return State{
		Phase:   PhaseFailed,
		Reason:  o.s.Kind + "Failed",
		Message: fmt.Sprintf("Job %s has failed because it has reached the specified backoff limit", o.s.Name),
	}
}

func (o *Oracle) podFailure(st Step) State {
	parts := []string{o.s.PodName(st.Type, st.Index), fmt.Sprintf("exited with code %d", st.Code)}
	if st.Outcome == Evict {
		parts = append(parts, "Evicted")
	}
	msg := fmt.Sprintf("%s %s is failed because 1 %s replica(s) failed.", o.s.Kind, o.s.Name, st.Type)
	if o.s.Kind == "TFJob" {
		msg = fmt.Sprintf("TFJob %s/%s has failed because 1 %s replica(s) failed.", o.s.Namespace, o.s.Name, st.Type)
	}
	return State{
		Phase:        PhaseFailed,
		Reason:       o.s.Kind + "Failed",
		Message:      msg,
		MessageParts: parts,
	}
}

// succeeded is R7.
func (o *Oracle) succeeded() (bool, string) {
	s := o.s
	all := func(rt kubeflowv1.ReplicaType) bool {
		r := s.Replica(rt)
		if r == nil {
			return false
		}
		for i := 0; i < r.Replicas; i++ {
			if !o.slots[Slot{rt, i}].succeeded {
				return false
			}
		}
		return true
	}
	has := func(rt kubeflowv1.ReplicaType) bool { return s.Replica(rt) != nil }
	nsName := s.Namespace + "/" + s.Name
	switch s.Kind {
	case kubeflowv1.PyTorchJobKind, kubeflowv1.PaddleJobKind:
		// Both kinds name their Master type "Master" and Worker type "Worker".
		if has(kubeflowv1.PyTorchJobReplicaTypeMaster) {
			return all(kubeflowv1.PyTorchJobReplicaTypeMaster), fmt.Sprintf("%s %s is successfully completed.", s.Kind, s.Name)
		}
		return all(kubeflowv1.PyTorchJobReplicaTypeWorker), fmt.Sprintf("%s %s successfully completed.", s.Kind, nsName)
	case kubeflowv1.JAXJobKind:
		return all(kubeflowv1.JAXJobReplicaTypeWorker), fmt.Sprintf("JAXJob %s successfully completed.", nsName)
	case kubeflowv1.XGBoostJobKind:
		return all(kubeflowv1.XGBoostJobReplicaTypeMaster), fmt.Sprintf("XGBoostJob %s is successfully completed.", s.Name)
	case kubeflowv1.MPIJobKind:
		return all(kubeflowv1.MPIJobReplicaTypeLauncher), fmt.Sprintf("MPIJob %s is successfully completed.", s.Name)
	case kubeflowv1.TFJobKind:
		msg := fmt.Sprintf("TFJob %s successfully completed.", nsName)
		if has(kubeflowv1.TFJobReplicaTypeChief) || has(kubeflowv1.TFJobReplicaTypeMaster) {
			return all(kubeflowv1.TFJobReplicaTypeChief) || all(kubeflowv1.TFJobReplicaTypeMaster), msg
		}
		worker0 := has(kubeflowv1.TFJobReplicaTypeWorker) && o.slots[Slot{kubeflowv1.TFJobReplicaTypeWorker, 0}].succeeded
		return all(kubeflowv1.TFJobReplicaTypeWorker) || (!s.AllWorkers && worker0), msg
	}
	return false, ""
}

// String renders a state for diffs.
func (st State) String() string {
	out := fmt.Sprintf("phase=%s restartCount=%d", st.Phase, st.RestartCount)
	if st.Restarts > 0 || st.RestartsCountTowardsMax > 0 {
		out += fmt.Sprintf(" restarts=%d restartsCountTowardsMax=%d", st.Restarts, st.RestartsCountTowardsMax)
	}
	if st.Reason != "" {
		out += fmt.Sprintf(" reason=%s message=%q", st.Reason, st.Message)
	}
	if len(st.MessageParts) > 0 {
		out += fmt.Sprintf(" messageParts=%q", st.MessageParts)
	}
	if len(st.Succeeded) > 0 {
		types := make([]string, 0, len(st.Succeeded))
		for rt, n := range st.Succeeded {
			types = append(types, fmt.Sprintf("%s=%d", rt, n))
		}
		sort.Strings(types)
		out += fmt.Sprintf(" succeeded=%v", types)
	}
	return out
}
