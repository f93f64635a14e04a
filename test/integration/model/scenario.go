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
// handling: scenarios (kind, replicas, restart policies, backoffLimit and a
// script of per-pod-incarnation outcomes) are generated from a seed, run
// against the real control plane with the operator in-process, and the final
// job state is compared with a small oracle written from the spec
// (/work/shared/spec/kubeflow-v1.md Part A and Part B4), not from the engine.
package model

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
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
	// under restartPolicy Always where the kubelet restarts it in place.
	Succeed Outcome = "succeed"
)

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
	// Code is the container exit code of Crash, Fail and Evict.
	Code int32
	// Delay is the pause before the step, once its pod is running.
	Delay time.Duration
}

func (s Step) String() string {
	out := fmt.Sprintf("%s-%d %s", strings.ToLower(string(s.Type)), s.Index, s.Outcome)
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
	Steps      []Step
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

	// Steps are drawn against the oracle so that each one targets a pod that
	// still runs, and the script stops once the oracle says the job finished.
	o := NewOracle(&s)
	for n := 1 + r.IntN(7); n > 0 && !o.Finished(); n-- {
		live := o.LiveSlots()
		if len(live) == 0 {
			break
		}
		slot := live[r.IntN(len(live))]
		st := Step{Type: slot.Type, Index: slot.Index, Delay: delay(r)}
		st.Outcome, st.Code = outcome(r, s.Replica(slot.Type).Policy)
		s.Steps = append(s.Steps, st)
		o.Apply(st)
	}
	return s
}

// outcome draws what happens to a pod; the mix depends on the policy so
// that each policy sees its interesting cases.
func outcome(r *rand.Rand, p kubeflowv1.RestartPolicy) (Outcome, int32) {
	code := exitCodes[r.IntN(len(exitCodes))]
	x := r.IntN(100)
	if p == kubeflowv1.RestartPolicyAlways || p == kubeflowv1.RestartPolicyOnFailure {
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
		return APIEvict, killed(r)
	case x < 65:
		return Delete, killed(r)
	default:
		return Succeed, 0
	}
}

// killed is the exit code a deleted pod's container ends with (0: the pod
// goes before the kubelet records one).
func killed(r *rand.Rand) int32 {
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

func ptrTo[T any](v T) *T { return &v }
