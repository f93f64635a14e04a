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
	"sort"

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
)

// State is the oracle's prediction after a step.
type State struct {
	Phase Phase
	// Reason and Message of the terminal condition. For a pod failure,
	// Message is the v1 prefix and MessageParts must appear after it.
	Reason       string
	Message      string
	MessageParts []string
	RestartCount int32
	// Succeeded counts pods in phase Succeeded per replica type.
	Succeeded map[kubeflowv1.ReplicaType]int32
}

// StepResult is the oracle's reading of one step.
type StepResult struct {
	Effect Effect
	// Recreated reports that the step's pod gets a new incarnation.
	Recreated bool
	State     State
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

// Apply runs one step. Steps after the job finished, or on a pod that
// already succeeded, are not applicable; they report EffectNone.
func (o *Oracle) Apply(st Step) StepResult {
	ss := o.slots[Slot{st.Type, st.Index}]
	if o.Finished() || ss == nil || ss.succeeded {
		return StepResult{Effect: EffectNone, State: o.State()}
	}
	policy := o.s.Replica(st.Type).Policy
	outcome := st.Outcome
	if outcome == Succeed && policy == kubeflowv1.RestartPolicyAlways {
		// The kubelet restarts a clean exit under Always: an in-place restart.
		outcome = Crash
	}
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
