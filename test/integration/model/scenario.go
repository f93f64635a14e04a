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

// Package model is a randomized model test of the job engine's pod-failure
// handling: scenarios (kind, replicas, restart policies, backoffLimit, an
// optional failurePolicy and a script of per-pod-incarnation outcomes) are
// generated from a seed, run against the real control plane with the
// operator in-process, and the final job state is compared with a small
// oracle written from the spec (/work/shared/spec/kubeflow-v1.md Part A and
// Part B4, and the README's "Failure policy"), not from the engine.
package model

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	kindtable "github.com/seed-d8a409e9/training-operator/kinds"
)

// Outcome is what happens to one pod incarnation.
type Outcome string

const (
	// Crash is a kubelet restarting the container in place (restartCount+1,
	// lastState terminated with Code); only for Always/OnFailure replicas,
	// whose pods the kubelet restarts itself.
	Crash Outcome = "crash"
	// Fail ends the pod in phase Failed with the container's exit Code.
	Fail Outcome = "fail"
	// Evict is a kubelet eviction: phase Failed, reason Evicted, a
	// DisruptionTarget condition and the container killed with Code.
	Evict Outcome = "evict"
	// APIEvict goes through the Eviction API: the apiserver adds a
	// DisruptionTarget condition and deletes the pod gracefully. A non-zero
	// Code is the exit code of the killed container, which the kubelet
	// records as phase Failed before the pod goes; 0 means the pod goes while
	// still Running.
	APIEvict Outcome = "api-evict"
	// Delete is a user deleting the pod gracefully; Code as for APIEvict.
	Delete Outcome = "delete"
	// Succeed ends the container with exit code 0: phase Succeeded, except
	// under restartPolicy Always where the kubelet restarts it in place (a
	// job with a failure policy runs its pods with restartPolicy Never, so
	// there it always succeeds).
	Succeed Outcome = "succeed"
	// MainExit ends the default container with Code while the sidecar keeps
	// the pod Running: a failure only for a job with a failure policy (the
	// only scenarios whose pods have a sidecar).
	MainExit Outcome = "main-exit"
)

// failure reports an outcome that ends a pod's default container non-zero
// or takes the pod away: what a failure policy judges.
func (o Outcome) failure() bool {
	return o != Succeed && o != Crash
}

// clientTimed are the failures whose time the test writes itself (the
// container's finishedAt, the DisruptionTarget condition's time); a
// deletion's time is the apiserver's.
func (o Outcome) clientTimed() bool {
	return o == Fail || o == Evict || o == MainExit
}

// ReplicaSet is one replica type of a scenario's job.
type ReplicaSet struct {
	Type     kubeflowv1.ReplicaType
	Replicas int
	Policy   kubeflowv1.RestartPolicy
}

// Step applies one outcome to the current pod incarnation of (Type, Index).
type Step struct {
	Type    kubeflowv1.ReplicaType
	Index   int
	Outcome Outcome
	// Code is the container exit code of Crash, Fail, Evict and MainExit.
	Code int32
	// Delay is the pause before the step, once its pod is running.
	Delay time.Duration
	// Attempt is the whole-job restart attempt (status.restarts) whose pod
	// the step acts on: after a restart every pod is new, and a step must
	// not act on a pod of an attempt that is over. Always 0 without a
	// failure policy.
	Attempt int32
	// Burst: the step follows the previous one at once, without waiting for
	// the operator in between, on another pod of the same attempt and one
	// second later by the failure's recorded time. Steps of a burst are
	// applied in script order, which is also their time order, so whatever
	// the operator sees together, the earliest failure is the first step's.
	Burst bool
}

func (s Step) String() string {
	out := fmt.Sprintf("%s-%d %s", strings.ToLower(string(s.Type)), s.Index, s.Outcome)
	if s.Attempt > 0 {
		out = fmt.Sprintf("a%d:%s", s.Attempt, out)
	}
	if s.Burst {
		out = "+" + out
	}
	if s.Outcome != Succeed {
		out += fmt.Sprintf("(%d)", s.Code)
	}
	if s.Delay > 0 {
		out += fmt.Sprintf(" after %s", s.Delay)
	}
	return out
}

// Scenario is one job and the script of its pods' outcomes.
type Scenario struct {
	Seed  uint64
	Index int
	// Kind is the job kind, e.g. kubeflowv1.PyTorchJobKind.
	Kind      string
	Namespace string
	Name      string
	// Replicas are in the order the job lists them.
	Replicas     []ReplicaSet
	BackoffLimit *int32
	// AllWorkers sets a TFJob's successPolicy to AllWorkers.
	AllWorkers bool
	// FailurePolicy is the job's runPolicy.failurePolicy; its pods get a
	// sidecar container (see MainExit).
	FailurePolicy *kubeflowv1.FailurePolicy
	// Naming is how an MPIJob names its containers (MPIJob containers may
	// have any name); "" for the other kinds.
	Naming Naming
	// NoHold: the test keeps no deleted pod visible with its own finalizer,
	// so that a pod of an untracked job (no backoffLimit, no failure
	// policy) vanishes at once and the operator learns of it only from its
	// delete event; a tracked job's pod stays by the operator's finalizer
	// alone. A deleted pod's containers then have no exit code (Code 0).
	NoHold bool
	Steps  []Step
}

// Naming is how an MPIJob scenario names its containers.
type Naming string

const (
	// NamedMPI: every container is "mpi", as in v1's examples.
	NamedMPI Naming = "mpi"
	// NamedByType: the launcher's container is "launcher", the workers'
	// "worker"; the first container is the main one.
	NamedByType Naming = "by-type"
	// NamedMain: spec.mainContainer names the container "trainer", which
	// comes after the sidecar when there is one.
	NamedMain Naming = "main"
)

var namings = []Naming{NamedMPI, NamedByType, NamedMain}

// trainer is the main container of NamedMain scenarios.
const trainer = "trainer"

// MainContainer is the container of a replica's pods that runs the
// program: the one whose exit code the steps set and a rule without
// containerName reads (README "Failure policy": the kind's default
// container; an MPIJob's spec.mainContainer, else its first container).
func (s *Scenario) MainContainer(rt kubeflowv1.ReplicaType) string {
	switch s.Naming {
	case NamedByType:
		return strings.ToLower(string(rt))
	case NamedMain:
		return trainer
	}
	return defaultContainer(s.Kind)
}

// sharedMainContainer is the main container of every replica type in
// targets (every type when empty), "" when they differ.
func (s *Scenario) sharedMainContainer(targets []kubeflowv1.ReplicaType) string {
	if len(targets) == 0 {
		for _, r := range s.Replicas {
			targets = append(targets, r.Type)
		}
	}
	name := s.MainContainer(targets[0])
	for _, rt := range targets[1:] {
		if s.MainContainer(rt) != name {
			return ""
		}
	}
	return name
}

// Tracked reports a job whose pods carry the operator's tracking finalizer
// (README "Failure accounting").
func (s *Scenario) Tracked() bool {
	return s.BackoffLimit != nil || s.FailurePolicy != nil
}

// Blocking reports a failure policy whose restarts create no pod of the new
// attempt while a pod of the old one exists (BlockingRecreate, the default).
func (s *Scenario) Blocking() bool {
	return s.FailurePolicy != nil && s.FailurePolicy.RestartStrategy != kubeflowv1.RestartStrategyRecreate
}

// Replica returns the replica set of a type, or nil.
func (s *Scenario) Replica(rt kubeflowv1.ReplicaType) *ReplicaSet {
	for i := range s.Replicas {
		if s.Replicas[i].Type == rt {
			return &s.Replicas[i]
		}
	}
	return nil
}

// PodName is the name of a replica's pod (B4 §4.3; MPI §4.5.6).
func (s *Scenario) PodName(rt kubeflowv1.ReplicaType, index int) string {
	if s.Kind == kubeflowv1.MPIJobKind && rt == kubeflowv1.MPIJobReplicaTypeLauncher {
		return s.Name + "-launcher"
	}
	return fmt.Sprintf("%s-%s-%d", s.Name, strings.ToLower(string(rt)), index)
}

// String is the one-line description printed with a mismatch.
func (s *Scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", s.Index, s.Kind, s.Name)
	for _, r := range s.Replicas {
		fmt.Fprintf(&b, " %s×%d/%s", r.Type, r.Replicas, r.Policy)
	}
	if s.BackoffLimit != nil {
		fmt.Fprintf(&b, " backoffLimit=%d", *s.BackoffLimit)
	} else {
		b.WriteString(" backoffLimit=nil")
	}
	if s.AllWorkers {
		b.WriteString(" successPolicy=AllWorkers")
	}
	if s.Naming != "" {
		fmt.Fprintf(&b, " containers=%s", s.Naming)
	}
	if fp := s.FailurePolicy; fp != nil {
		fmt.Fprintf(&b, " failurePolicy{maxRestarts=%d", fp.MaxRestarts)
		if fp.RestartStrategy != "" {
			fmt.Fprintf(&b, " %s", fp.RestartStrategy)
		}
		for _, r := range fp.Rules {
			b.WriteString(" " + ruleString(r))
		}
		b.WriteString("}")
	}
	if s.NoHold {
		b.WriteString(" noHold")
	}
	b.WriteString(" steps: [")
	for i, st := range s.Steps {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(st.String())
	}
	b.WriteString("]")
	return b.String()
}

// ruleString is a rule on one line: name:Action[targets](matcher).
func ruleString(r kubeflowv1.FailurePolicyRule) string {
	out := r.Name + ":" + string(r.Action)
	if len(r.TargetReplicaTypes) > 0 {
		out += fmt.Sprintf("%v", r.TargetReplicaTypes)
	}
	if ec := r.OnExitCodes; ec != nil {
		out += fmt.Sprintf("(%s %s %v)", ec.ContainerName, ec.Operator, ec.Values)
	}
	for _, c := range r.OnPodConditions {
		out += fmt.Sprintf("(%s=%s)", c.Type, c.Status)
	}
	return out
}

var policies = []kubeflowv1.RestartPolicy{
	kubeflowv1.RestartPolicyAlways, kubeflowv1.RestartPolicyOnFailure,
	kubeflowv1.RestartPolicyExitCode, kubeflowv1.RestartPolicyNever,
}

// exitCodes straddle ExitCode's 127/128 boundary.
var exitCodes = []int32{1, 2, 3, 42, 126, 127, 128, 129, 130, 137, 139, 143, 255}

var kinds = []string{
	kubeflowv1.PyTorchJobKind, kubeflowv1.TFJobKind, kubeflowv1.MPIJobKind,
	kubeflowv1.XGBoostJobKind, kubeflowv1.PaddleJobKind, kubeflowv1.JAXJobKind,
}

// Generate builds scenario index of a seed. Every scenario has its own
// random stream, so one scenario replays alone (MODEL_ONLY) exactly as it
// ran among the others.
func Generate(seed uint64, index int, namespace string) Scenario {
	r := rand.New(rand.NewPCG(seed, uint64(index)))
	s := Scenario{
		Seed:      seed,
		Index:     index,
		Kind:      kinds[r.IntN(len(kinds))],
		Namespace: namespace,
		Name:      fmt.Sprintf("s%d", index),
	}
	policy := func() kubeflowv1.RestartPolicy { return policies[r.IntN(len(policies))] }
	add := func(rt kubeflowv1.ReplicaType, n int) {
		if n > 0 {
			s.Replicas = append(s.Replicas, ReplicaSet{Type: rt, Replicas: n, Policy: policy()})
		}
	}
	switch s.Kind {
	case kubeflowv1.PyTorchJobKind:
		if r.IntN(3) > 0 {
			add(kubeflowv1.PyTorchJobReplicaTypeMaster, 1)
			add(kubeflowv1.PyTorchJobReplicaTypeWorker, r.IntN(3))
		} else {
			add(kubeflowv1.PyTorchJobReplicaTypeWorker, 1+r.IntN(2))
		}
	case kubeflowv1.TFJobKind:
		if r.IntN(2) == 0 {
			add(kubeflowv1.TFJobReplicaTypeChief, 1)
			add(kubeflowv1.TFJobReplicaTypeWorker, r.IntN(3))
		} else {
			add(kubeflowv1.TFJobReplicaTypeWorker, 1+r.IntN(2))
		}
		add(kubeflowv1.TFJobReplicaTypePS, r.IntN(2))
		add(kubeflowv1.TFJobReplicaTypeEval, r.IntN(4)/3)
		s.AllWorkers = r.IntN(3) == 0
	case kubeflowv1.MPIJobKind:
		add(kubeflowv1.MPIJobReplicaTypeLauncher, 1)
		add(kubeflowv1.MPIJobReplicaTypeWorker, 1+r.IntN(2))
		// From a stream of its own, so that a seed's scenarios are otherwise
		// the ones they were before the naming was drawn.
		names := rand.New(rand.NewPCG(seed, uint64(index)|1<<63))
		s.Naming = namings[names.IntN(len(namings))]
	case kubeflowv1.XGBoostJobKind:
		add(kubeflowv1.XGBoostJobReplicaTypeMaster, 1)
		add(kubeflowv1.XGBoostJobReplicaTypeWorker, r.IntN(3))
	case kubeflowv1.PaddleJobKind:
		if r.IntN(2) == 0 {
			add(kubeflowv1.PaddleJobReplicaTypeMaster, 1)
		}
		add(kubeflowv1.PaddleJobReplicaTypeWorker, 1+r.IntN(2))
	case kubeflowv1.JAXJobKind:
		add(kubeflowv1.JAXJobReplicaTypeWorker, 1+r.IntN(3))
	}
	if r.IntN(4) > 0 {
		s.BackoffLimit = ptrTo(int32(r.IntN(5)))
	}
	if r.IntN(4) == 0 {
		s.FailurePolicy = failurePolicy(r, &s)
	}
	s.NoHold = r.IntN(3) == 0

	// Steps are drawn against the oracle so that each one targets a pod of
	// the current attempt that still runs, and the script stops once the
	// oracle says the job finished.
	o := NewOracle(&s)
	for n := 1 + r.IntN(7); n > 0 && !o.Finished(); n-- {
		live := o.LiveSlots()
		if len(live) == 0 {
			break
		}
		r.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		size := 1
		if s.FailurePolicy != nil && len(live) > 1 && r.IntN(4) == 0 {
			size = 2 + r.IntN(min(2, len(live)-1))
		}
		attempt, perPod := o.Attempt(), false
	burst:
		for k := 0; k < size; k++ {
			slot := live[k]
			st := Step{Type: slot.Type, Index: slot.Index, Attempt: attempt, Burst: k > 0}
			if k == 0 {
				st.Delay = delay(r)
			}
			if size == 1 {
				st.Outcome, st.Code = outcome(r, &s, s.Replica(slot.Type).Policy)
			}
			// A burst hands at most one failure to the per-pod rule, which
			// deals with all it sees in one pass together, as v1 does (the
			// backoff check first, nothing counted when the pass fails the
			// job): with two, the outcome would depend on whether the
			// operator saw them apart. That holds for a later step the
			// oracle finds moot too: the operator may see it in the same pass.
			for try := 0; size > 1; try++ {
				st.Outcome, st.Code = burstOutcome(r, &s, k == size-1)
				if !perPod || !o.handsBack(st) {
					break
				}
				if try == 4 {
					break burst
				}
			}
			s.Steps = append(s.Steps, st)
			perPod = perPod || o.handsBack(st)
			o.Apply(st)
		}
	}
	return s
}

// failurePolicy draws a policy for s: maxRestarts 0-2, a strategy (unset
// half the time: the default), and 0-3 rules of any action matching exit
// codes, the DisruptionTarget condition or anything, some of them only for
// one replica type.
func failurePolicy(r *rand.Rand, s *Scenario) *kubeflowv1.FailurePolicy {
	fp := &kubeflowv1.FailurePolicy{MaxRestarts: int32(r.IntN(3))}
	switch r.IntN(4) {
	case 0:
		fp.RestartStrategy = kubeflowv1.RestartStrategyBlockingRecreate
	case 1:
		fp.RestartStrategy = kubeflowv1.RestartStrategyRecreate
	}
	actions := []kubeflowv1.FailurePolicyAction{
		kubeflowv1.FailJobAction, kubeflowv1.RestartJobAction,
		kubeflowv1.RestartJobAndIgnoreMaxRestartsAction, kubeflowv1.UseReplicaRestartPolicyAction,
	}
	// Short names that no message contains by accident.
	short := map[kubeflowv1.FailurePolicyAction]string{
		kubeflowv1.FailJobAction: "fail", kubeflowv1.RestartJobAction: "restart",
		kubeflowv1.RestartJobAndIgnoreMaxRestartsAction: "ignore", kubeflowv1.UseReplicaRestartPolicyAction: "per-pod",
	}
	for i, n := 0, r.IntN(4); i < n; i++ {
		action := actions[r.IntN(len(actions))]
		rule := kubeflowv1.FailurePolicyRule{Name: fmt.Sprintf("rule%d-%s", i, short[action]), Action: action}
		if r.IntN(3) == 0 {
			rule.TargetReplicaTypes = []kubeflowv1.ReplicaType{s.Replicas[r.IntN(len(s.Replicas))].Type}
		}
		switch r.IntN(3) {
		case 0:
			ec := &kubeflowv1.FailurePolicyOnExitCodesRequirement{Operator: kubeflowv1.FailurePolicyOnExitCodesOpIn}
			if r.IntN(4) == 0 {
				ec.Operator = kubeflowv1.FailurePolicyOnExitCodesOpNotIn
			}
			if r.IntN(2) == 0 {
				// Named when the targeted types share their main container.
				ec.ContainerName = s.sharedMainContainer(rule.TargetReplicaTypes)
			}
			for _, k := range r.Perm(len(exitCodes))[:1+r.IntN(3)] {
				ec.Values = append(ec.Values, exitCodes[k])
			}
			rule.OnExitCodes = ec
		case 1:
			c := kubeflowv1.FailurePolicyOnPodConditionsPattern{Type: corev1.DisruptionTarget}
			if r.IntN(2) == 0 {
				c.Status = corev1.ConditionTrue // else the default, True
			}
			rule.OnPodConditions = []kubeflowv1.FailurePolicyOnPodConditionsPattern{c}
		}
		fp.Rules = append(fp.Rules, rule)
	}
	return fp
}

// outcome draws what happens to a pod; the mix depends on the policy so
// that each policy sees its interesting cases.
func outcome(r *rand.Rand, s *Scenario, p kubeflowv1.RestartPolicy) (Outcome, int32) {
	code := exitCodes[r.IntN(len(exitCodes))]
	x := r.IntN(100)
	if s.FailurePolicy != nil {
		// Pods run with restartPolicy Never: no in-place restarts; the
		// sidecar makes MainExit possible.
		if x < 12 {
			return MainExit, code
		}
		x = r.IntN(100)
	} else if p == kubeflowv1.RestartPolicyAlways || p == kubeflowv1.RestartPolicyOnFailure {
		if x < 30 {
			if p == kubeflowv1.RestartPolicyAlways && r.IntN(4) == 0 {
				code = 0 // Always restarts clean exits too
			}
			return Crash, code
		}
		x = r.IntN(100)
	}
	switch {
	case x < 40:
		return Fail, code
	case x < 50:
		// Evicted pods are killed; "whatever its code" (Part A) is exercised
		// by permanent codes too.
		return Evict, []int32{137, 143, 1, 2}[r.IntN(4)]
	case x < 57:
		return APIEvict, killed(r, s)
	case x < 65:
		return Delete, killed(r, s)
	default:
		return Succeed, 0
	}
}

// burstOutcome draws a failure of a burst: one whose time the test writes,
// so that the burst's time order is its script order; the last step may also
// be a deletion, whose time, the apiserver's, is the latest.
func burstOutcome(r *rand.Rand, s *Scenario, last bool) (Outcome, int32) {
	code := exitCodes[r.IntN(len(exitCodes))]
	n := 3
	if last {
		n = 5
	}
	switch r.IntN(n) {
	case 0:
		return Fail, code
	case 1:
		return Evict, []int32{137, 143, 1, 2}[r.IntN(4)]
	case 2:
		return MainExit, code
	case 3:
		return APIEvict, killed(r, s)
	default:
		return Delete, killed(r, s)
	}
}

// killed is the exit code a deleted pod's container ends with (0: the pod
// goes before the kubelet records one). Without the test's hold the pod
// may be gone before a code could be written; with a failure policy the
// code would come after the deletion the operator judges, and whether an
// exit-code rule matches would depend on timing: both delete at code 0.
func killed(r *rand.Rand, s *Scenario) int32 {
	if s.NoHold || s.FailurePolicy != nil {
		return 0
	}
	return []int32{0, 1, 137, 143}[r.IntN(4)]
}

func delay(r *rand.Rand) time.Duration {
	switch x := r.IntN(100); {
	case x < 70:
		return 0
	case x < 92:
		return time.Duration(r.IntN(300)) * time.Millisecond
	default:
		return time.Duration(300+r.IntN(1700)) * time.Millisecond
	}
}

// defaultContainer is the kind's default container (B1 §1.4), from the
// kinds table.
func defaultContainer(kind string) string {
	for _, k := range kindtable.All() {
		if k.Info.Kind == kind {
			return k.Info.DefaultContainerName
		}
	}
	return ""
}

func ptrTo[T any](v T) *T { return &v }
