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
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const (
	always    = kubeflowv1.RestartPolicyAlways
	onFailure = kubeflowv1.RestartPolicyOnFailure
	exitCode  = kubeflowv1.RestartPolicyExitCode
	never     = kubeflowv1.RestartPolicyNever
)

func rs(rt kubeflowv1.ReplicaType, n int, p kubeflowv1.RestartPolicy) ReplicaSet {
	return ReplicaSet{Type: rt, Replicas: n, Policy: p}
}

func step(rt kubeflowv1.ReplicaType, i int, out Outcome, code int32) Step {
	return Step{Type: rt, Index: i, Outcome: out, Code: code}
}

const (
	master   = kubeflowv1.ReplicaType("Master")
	worker   = kubeflowv1.ReplicaType("Worker")
	chief    = kubeflowv1.TFJobReplicaTypeChief
	ps       = kubeflowv1.TFJobReplicaTypePS
	launcher = kubeflowv1.MPIJobReplicaTypeLauncher
)

func TestOracle(t *testing.T) {
	backoff := func(n int32) *int32 { return &n }
	cases := []struct {
		name    string
		s       Scenario
		want    State
		effects []Effect
	}{
		{
			name: "OnFailure worker retried, then the master succeeds",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(master, 1, onFailure), rs(worker, 1, onFailure)},
				Steps: []Step{step(worker, 0, Fail, 1), step(master, 0, Succeed, 0)}},
			want: State{Phase: PhaseSucceeded, Reason: "PyTorchJobSucceeded", Message: "PyTorchJob j is successfully completed.", RestartCount: 1,
				Succeeded: map[kubeflowv1.ReplicaType]int32{master: 1}},
			effects: []Effect{EffectRetry, EffectFinished},
		},
		{
			name: "ExitCode fails on 127 and names the pod and code",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(master, 1, exitCode), rs(worker, 2, exitCode)},
				Steps: []Step{step(worker, 1, Fail, 127)}},
			want: State{Phase: PhaseFailed, Reason: "PyTorchJobFailed", Message: "PyTorchJob j is failed because 1 Worker replica(s) failed.",
				MessageParts: []string{"j-worker-1", "exited with code 127"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "ExitCode retries 128 and evictions whatever their code",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 2, exitCode)},
				Steps: []Step{step(worker, 0, Fail, 128), step(worker, 1, Evict, 1), step(worker, 0, APIEvict, 0), step(worker, 0, Delete, 0)}},
			want:    State{Phase: PhaseRunning, RestartCount: 4},
			effects: []Effect{EffectRetry, EffectRetry, EffectRetry, EffectRetry},
		},
		{
			name: "Never fails on an eviction by the kubelet",
			s: Scenario{Kind: kubeflowv1.XGBoostJobKind, Replicas: []ReplicaSet{rs(master, 1, never), rs(worker, 1, never)},
				Steps: []Step{step(worker, 0, Evict, 137)}},
			want: State{Phase: PhaseFailed, Reason: "XGBoostJobFailed", Message: "XGBoostJob j is failed because 1 Worker replica(s) failed.",
				MessageParts: []string{"j-worker-0", "exited with code 137", "Evicted"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "Never recreates and counts pods deleted by others",
			s: Scenario{Kind: kubeflowv1.XGBoostJobKind, Replicas: []ReplicaSet{rs(master, 1, never)},
				Steps: []Step{step(master, 0, Delete, 0), step(master, 0, APIEvict, 0)}},
			want:    State{Phase: PhaseRunning, RestartCount: 2},
			effects: []Effect{EffectRetry, EffectRetry},
		},
		{
			name: "XGBoost OnFailure retries a failed master (B8 #29 fixed)",
			s: Scenario{Kind: kubeflowv1.XGBoostJobKind, Replicas: []ReplicaSet{rs(master, 1, onFailure)},
				Steps: []Step{step(master, 0, Fail, 1)}},
			want:    State{Phase: PhaseRunning, RestartCount: 1},
			effects: []Effect{EffectRetry},
		},
		{
			name: "TF OnFailure retries a failed worker (B8 #30 fixed)",
			s: Scenario{Kind: kubeflowv1.TFJobKind, Replicas: []ReplicaSet{rs(chief, 1, never), rs(worker, 1, onFailure)},
				Steps: []Step{step(worker, 0, Fail, 3)}},
			want:    State{Phase: PhaseRunning, RestartCount: 1},
			effects: []Effect{EffectRetry},
		},
		{
			name: "backoffLimit 1 allows one retry; the second fails and is not counted",
			s: Scenario{Kind: kubeflowv1.PaddleJobKind, Replicas: []ReplicaSet{rs(worker, 2, onFailure)}, BackoffLimit: backoff(1),
				Steps: []Step{step(worker, 0, Fail, 1), step(worker, 1, Delete, 0)}},
			want: State{Phase: PhaseFailed, Reason: "PaddleJobFailed", RestartCount: 1,
				Message: "Job j has failed because it has reached the specified backoff limit"},
			effects: []Effect{EffectRetry, EffectFinished},
		},
		{
			name: "backoffLimit 0 fails on the first in-place restart",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(worker, 1, always)}, BackoffLimit: backoff(0),
				Steps: []Step{step(worker, 0, Crash, 137)}},
			want: State{Phase: PhaseFailed, Reason: "PyTorchJobFailed",
				Message: "Job j has failed because it has reached the specified backoff limit"},
			effects: []Effect{EffectFinished},
		},
		{
			name: "in-place restarts count while the pod lives and fold in when it is replaced",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(master, 1, onFailure), rs(worker, 1, onFailure)}, BackoffLimit: backoff(3),
				Steps: []Step{step(worker, 0, Crash, 1), step(worker, 0, Crash, 2), step(worker, 0, Delete, 0), step(master, 0, Crash, 1)}},
			want: State{Phase: PhaseFailed, Reason: "PyTorchJobFailed", RestartCount: 3,
				Message: "Job j has failed because it has reached the specified backoff limit"},
			effects: []Effect{EffectNone, EffectNone, EffectRetry, EffectFinished},
		},
		{
			name: "a failure of a pod with in-place restarts crosses the limit with them",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 1, onFailure)}, BackoffLimit: backoff(2),
				Steps: []Step{step(worker, 0, Crash, 1), step(worker, 0, Crash, 1), step(worker, 0, Evict, 137)}},
			want: State{Phase: PhaseFailed, Reason: "JAXJobFailed",
				Message: "Job j has failed because it has reached the specified backoff limit"},
			effects: []Effect{EffectNone, EffectNone, EffectFinished},
		},
		{
			name: "a succeeded pod's in-place restarts still count",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(master, 1, onFailure), rs(worker, 1, onFailure)}, BackoffLimit: backoff(1),
				Steps: []Step{step(worker, 0, Crash, 1), step(worker, 0, Succeed, 0), step(master, 0, Crash, 1)}},
			want: State{Phase: PhaseFailed, Reason: "PyTorchJobFailed", Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 1},
				Message: "Job j has failed because it has reached the specified backoff limit"},
			effects: []Effect{EffectNone, EffectSucceeded, EffectFinished},
		},
		{
			name: "Always restarts clean exits in place: the job keeps running",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(worker, 1, always)},
				Steps: []Step{step(worker, 0, Succeed, 0), step(worker, 0, Succeed, 0)}},
			want:    State{Phase: PhaseRunning},
			effects: []Effect{EffectNone, EffectNone},
		},
		{
			name: "TF without chief succeeds on worker 0",
			s: Scenario{Kind: kubeflowv1.TFJobKind, Namespace: "ns", Replicas: []ReplicaSet{rs(worker, 2, never), rs(ps, 1, never)},
				Steps: []Step{step(worker, 1, Succeed, 0), step(worker, 0, Succeed, 0)}},
			want:    State{Phase: PhaseSucceeded, Reason: "TFJobSucceeded", Message: "TFJob ns/j successfully completed.", Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 2}},
			effects: []Effect{EffectSucceeded, EffectFinished},
		},
		{
			name: "TF AllWorkers waits for every worker",
			s: Scenario{Kind: kubeflowv1.TFJobKind, Namespace: "ns", AllWorkers: true, Replicas: []ReplicaSet{rs(worker, 2, never)},
				Steps: []Step{step(worker, 0, Succeed, 0)}},
			want:    State{Phase: PhaseRunning, Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 1}},
			effects: []Effect{EffectSucceeded},
		},
		{
			name: "TF with a chief ignores worker 0",
			s: Scenario{Kind: kubeflowv1.TFJobKind, Namespace: "ns", Replicas: []ReplicaSet{rs(chief, 1, never), rs(worker, 1, never)},
				Steps: []Step{step(worker, 0, Succeed, 0), step(chief, 0, Succeed, 0)}},
			want:    State{Phase: PhaseSucceeded, Reason: "TFJobSucceeded", Message: "TFJob ns/j successfully completed.", Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 1, chief: 1}},
			effects: []Effect{EffectSucceeded, EffectFinished},
		},
		{
			name: "MPI succeeds with the launcher",
			s: Scenario{Kind: kubeflowv1.MPIJobKind, Replicas: []ReplicaSet{rs(launcher, 1, never), rs(worker, 2, exitCode)},
				Steps: []Step{step(worker, 1, Fail, 137), step(launcher, 0, Succeed, 0)}},
			want: State{Phase: PhaseSucceeded, Reason: "MPIJobSucceeded", Message: "MPIJob j is successfully completed.", RestartCount: 1,
				Succeeded: map[kubeflowv1.ReplicaType]int32{launcher: 1}},
			effects: []Effect{EffectRetry, EffectFinished},
		},
		{
			name: "MPI fails on the launcher with its pod name",
			s: Scenario{Kind: kubeflowv1.MPIJobKind, Replicas: []ReplicaSet{rs(launcher, 1, never), rs(worker, 1, never)},
				Steps: []Step{step(launcher, 0, Fail, 2)}},
			want: State{Phase: PhaseFailed, Reason: "MPIJobFailed", Message: "MPIJob j is failed because 1 Launcher replica(s) failed.",
				MessageParts: []string{"j-launcher", "exited with code 2"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "Paddle and PyTorch without a master use the namespaced message",
			s: Scenario{Kind: kubeflowv1.PaddleJobKind, Namespace: "ns", Replicas: []ReplicaSet{rs(worker, 1, exitCode)},
				Steps: []Step{step(worker, 0, Succeed, 0)}},
			want:    State{Phase: PhaseSucceeded, Reason: "PaddleJobSucceeded", Message: "PaddleJob ns/j successfully completed.", Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 1}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "TF keeps v1's own failure wording",
			s: Scenario{Kind: kubeflowv1.TFJobKind, Namespace: "ns", Replicas: []ReplicaSet{rs(worker, 2, never)},
				Steps: []Step{step(worker, 1, Fail, 3)}},
			want: State{Phase: PhaseFailed, Reason: "TFJobFailed", Message: "TFJob ns/j has failed because 1 Worker replica(s) failed.",
				MessageParts: []string{"j-worker-1", "exited with code 3"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "terminal conditions are sticky: later steps change nothing",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Namespace: "ns", Replicas: []ReplicaSet{rs(worker, 2, never)},
				Steps: []Step{step(worker, 0, Fail, 1), step(worker, 1, Delete, 0), step(worker, 1, Succeed, 0)}},
			want: State{Phase: PhaseFailed, Reason: "JAXJobFailed", Message: "JAXJob j is failed because 1 Worker replica(s) failed.",
				MessageParts: []string{"j-worker-0", "exited with code 1"}},
			effects: []Effect{EffectFinished, EffectNone, EffectNone},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkPrediction(t, tc.s, tc.want, tc.effects, false, nil) })
	}
}

// checkPrediction runs the oracle on s (job "j") and compares its final
// state, each step's effect and, with checkMoot, the steps it found moot.
func checkPrediction(t *testing.T, s Scenario, want State, wantEffects []Effect, checkMoot bool, wantMoot []int) {
	t.Helper()
	s.Name = "j"
	got, results := Predict(&s)
	if want.Succeeded == nil {
		want.Succeeded = map[kubeflowv1.ReplicaType]int32{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("final state\n got: %s\nwant: %s", got, want)
	}
	var effects []Effect
	var moot []int
	for i, r := range results {
		effects = append(effects, r.Effect)
		if r.Moot {
			moot = append(moot, i)
		}
	}
	if !reflect.DeepEqual(effects, wantEffects) {
		t.Errorf("effects: got %v, want %v", effects, wantEffects)
	}
	if checkMoot && !reflect.DeepEqual(moot, wantMoot) {
		t.Errorf("moot steps: got %v, want %v", moot, wantMoot)
	}
}

// at is a step on a pod of a restart attempt.
func at(attempt int32, st Step) Step {
	st.Attempt = attempt
	return st
}

// then is a burst's next step: it comes together with the previous one,
// later by its recorded time.
func then(st Step) Step {
	st.Burst = true
	return st
}

func TestOracleFailurePolicy(t *testing.T) {
	backoff := func(n int32) *int32 { return &n }
	fp := testjobs.MakeFailurePolicy
	const (
		failJob    = kubeflowv1.FailJobAction
		restartJob = kubeflowv1.RestartJobAction
		ignore     = kubeflowv1.RestartJobAndIgnoreMaxRestartsAction
		perPod     = kubeflowv1.UseReplicaRestartPolicyAction
		in         = kubeflowv1.FailurePolicyOnExitCodesOpIn
		notIn      = kubeflowv1.FailurePolicyOnExitCodesOpNotIn
	)
	backoffMessage := "Job j has failed because it has reached the specified backoff limit"
	cases := []struct {
		name    string
		s       Scenario
		want    State
		effects []Effect
		// moot are the steps on an attempt that was over.
		moot []int
	}{
		{
			name: "no rule matches: RestartJob, counted; restartCount untouched; the new attempt runs on",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(master, 1, never), rs(worker, 1, never)},
				FailurePolicy: fp(1).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1), at(1, step(master, 0, Succeed, 0))}},
			want: State{Phase: PhaseSucceeded, Reason: "PyTorchJobSucceeded", Message: "PyTorchJob j is successfully completed.",
				Restarts: 1, RestartsCountTowardsMax: 1, Succeeded: map[kubeflowv1.ReplicaType]int32{master: 1}},
			effects: []Effect{EffectRestart, EffectFinished},
		},
		{
			name: "budget spent: the next counted restart fails the job, naming the limit",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 2, onFailure)},
				FailurePolicy: fp(1).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1), at(1, step(worker, 1, Fail, 2))}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.ReachedMaxRestartsReason, Restarts: 1, RestartsCountTowardsMax: 1,
				MessageParts: []string{"j-worker-1", "maxRestarts", "jax", "exited with code 2"}},
			effects: []Effect{EffectRestart, EffectFinished},
		},
		{
			name: "maxRestarts 0: a RestartJob rule fails at once, naming the rule and the limit",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 1, always)},
				FailurePolicy: fp(0).Rule("rule0-restart", restartJob).Obj(),
				Steps:         []Step{step(worker, 0, Evict, 137)}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.ReachedMaxRestartsReason,
				MessageParts: []string{"j-worker-0", "rule0-restart", "maxRestarts", "jax", "exited with code 137"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "ignored restarts neither count nor run out",
			s: Scenario{Kind: kubeflowv1.XGBoostJobKind, Replicas: []ReplicaSet{rs(master, 1, never), rs(worker, 1, never)},
				FailurePolicy: fp(0).Rule("rule0-ignore", ignore).OnPodCondition(corev1.DisruptionTarget).Obj(),
				Steps:         []Step{step(worker, 0, Evict, 137), at(1, step(master, 0, APIEvict, 0)), at(2, step(worker, 0, Evict, 1))}},
			want:    State{Phase: PhaseRunning, Restarts: 3},
			effects: []Effect{EffectRestart, EffectRestart, EffectRestart},
		},
		{
			name: "rules in order: the first match wins",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(worker, 2, onFailure)},
				FailurePolicy: fp(2).Rule("rule0-restart", restartJob).OnExitCodes("", in, 1).Rule("rule1-fail", failJob).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1), at(1, step(worker, 1, Fail, 2))}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.FailurePolicyFailJobReason, Restarts: 1, RestartsCountTowardsMax: 1,
				MessageParts: []string{"j-worker-1", "rule1-fail", "pytorch", "exited with code 2"}},
			effects: []Effect{EffectRestart, EffectFinished},
		},
		{
			name: "the earliest failure is judged: a later one matching FailJob is never judged",
			s: Scenario{Kind: kubeflowv1.PaddleJobKind, Replicas: []ReplicaSet{rs(worker, 2, never)},
				FailurePolicy: fp(1).Rule("rule0-fail", failJob).OnExitCodes("", in, 3).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1), then(step(worker, 1, Fail, 3))}},
			want:    State{Phase: PhaseRunning, Restarts: 1, RestartsCountTowardsMax: 1},
			effects: []Effect{EffectRestart, EffectNone},
			moot:    []int{1},
		},
		{
			name: "the earliest failure is judged: FailJob, whatever comes after",
			s: Scenario{Kind: kubeflowv1.PaddleJobKind, Replicas: []ReplicaSet{rs(worker, 3, onFailure)},
				FailurePolicy: fp(1).Rule("rule0-fail", failJob).OnExitCodes("paddle", in, 3, 4).Obj(),
				Steps:         []Step{step(worker, 2, MainExit, 3), then(step(worker, 0, Evict, 1)), then(step(worker, 1, Delete, 0))}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.FailurePolicyFailJobReason,
				MessageParts: []string{"j-worker-2", "rule0-fail", "paddle", "exited with code 3"}},
			effects: []Effect{EffectFinished, EffectNone, EffectNone},
			moot:    []int{1, 2},
		},
		{
			name: "UseReplicaRestartPolicy hands the failure to the replica's policy, then the next one is judged",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 2, onFailure)},
				FailurePolicy: fp(1).Rule("rule0-per-pod", perPod).OnExitCodes("", in, 137).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 137), then(step(worker, 1, Fail, 1))}},
			want:    State{Phase: PhaseRunning, RestartCount: 1, Restarts: 1, RestartsCountTowardsMax: 1},
			effects: []Effect{EffectRetry, EffectRestart},
		},
		{
			name: "UseReplicaRestartPolicy under Never fails the job as v1 does",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 2, never)},
				FailurePolicy: fp(1).Rule("rule0-per-pod", perPod).Obj(),
				Steps:         []Step{step(worker, 1, Fail, 137), then(step(worker, 0, Fail, 1))}},
			want: State{Phase: PhaseFailed, Reason: "JAXJobFailed", Message: "JAXJob j is failed because 1 Worker replica(s) failed.",
				MessageParts: []string{"j-worker-1", "exited with code 137"}},
			effects: []Effect{EffectFinished, EffectNone},
			moot:    []int{1},
		},
		{
			name: "backoffLimit bounds the failures handed back, not whole-job restarts",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 1, onFailure)}, BackoffLimit: backoff(1),
				FailurePolicy: fp(2).Rule("rule0-per-pod", perPod).OnExitCodes("", in, 1).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 2), at(1, step(worker, 0, Fail, 1)), at(1, step(worker, 0, Fail, 1))}},
			want: State{Phase: PhaseFailed, Reason: "JAXJobFailed", Message: backoffMessage,
				RestartCount: 1, Restarts: 1, RestartsCountTowardsMax: 1},
			effects: []Effect{EffectRestart, EffectRetry, EffectFinished},
		},
		{
			name: "targetReplicaTypes narrow a rule",
			s: Scenario{Kind: kubeflowv1.PyTorchJobKind, Replicas: []ReplicaSet{rs(master, 1, never), rs(worker, 1, never)},
				FailurePolicy: fp(1).Rule("rule0-fail", failJob, master).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1), at(1, step(master, 0, Fail, 1))}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.FailurePolicyFailJobReason, Restarts: 1, RestartsCountTowardsMax: 1,
				MessageParts: []string{"j-master-0", "rule0-fail", "pytorch", "exited with code 1"}},
			effects: []Effect{EffectRestart, EffectFinished},
		},
		{
			name: "NotIn matches non-zero codes not listed; a deletion has no code",
			s: Scenario{Kind: kubeflowv1.TFJobKind, Replicas: []ReplicaSet{rs(worker, 2, exitCode)},
				FailurePolicy: fp(2).Rule("rule0-fail", failJob).OnExitCodes("", notIn, 137).Obj(),
				Steps:         []Step{step(worker, 0, Delete, 0), at(1, step(worker, 1, Fail, 137)), at(2, step(worker, 1, Fail, 1))}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.FailurePolicyFailJobReason, Restarts: 2, RestartsCountTowardsMax: 2,
				MessageParts: []string{"j-worker-1", "rule0-fail", "tensorflow", "exited with code 1"}},
			effects: []Effect{EffectRestart, EffectRestart, EffectFinished},
		},
		{
			name: "a rule on another container's exit code never matches the default container's",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 1, never)},
				FailurePolicy: fp(0).Rule("rule0-fail", failJob).OnExitCodes(sidecar, in, 1).Rule("rule1-ignore", ignore).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1)}},
			want:    State{Phase: PhaseRunning, Restarts: 1},
			effects: []Effect{EffectRestart},
		},
		{
			name: "DisruptionTarget: kubelet and API evictions have it, a plain delete has not",
			s: Scenario{Kind: kubeflowv1.MPIJobKind, Replicas: []ReplicaSet{rs(launcher, 1, never), rs(worker, 1, never)},
				FailurePolicy: fp(0).Rule("rule0-ignore", ignore).OnPodCondition(corev1.DisruptionTarget).Obj(),
				Steps:         []Step{step(worker, 0, APIEvict, 0), at(1, step(launcher, 0, Evict, 143)), at(2, step(worker, 0, Delete, 0))}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.ReachedMaxRestartsReason, Restarts: 2,
				MessageParts: []string{"j-worker-0", "maxRestarts"}},
			effects: []Effect{EffectRestart, EffectRestart, EffectFinished},
		},
		{
			name: "MPIJob containers named by type: a rule without containerName reads the launcher's",
			s: Scenario{Kind: kubeflowv1.MPIJobKind, Naming: NamedByType, Replicas: []ReplicaSet{rs(launcher, 1, never), rs(worker, 1, never)},
				FailurePolicy: fp(2).Rule("rule0-fail", failJob).OnExitCodes("", in, 1).Obj(),
				Steps:         []Step{step(launcher, 0, Fail, 1)}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.FailurePolicyFailJobReason,
				MessageParts: []string{"j-launcher", "rule0-fail", "launcher", "exited with code 1"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "MPIJob spec.mainContainer after the sidecar: a rule naming it matches its exit",
			s: Scenario{Kind: kubeflowv1.MPIJobKind, Naming: NamedMain, Replicas: []ReplicaSet{rs(launcher, 1, never), rs(worker, 2, never)},
				FailurePolicy: fp(2).Rule("rule0-fail", failJob, worker).OnExitCodes(trainer, in, 3).Obj(),
				Steps:         []Step{step(worker, 1, MainExit, 3)}},
			want: State{Phase: PhaseFailed, Reason: kubeflowv1.FailurePolicyFailJobReason,
				MessageParts: []string{"j-worker-1", "rule0-fail", "trainer", "exited with code 3"}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "a restart replaces succeeded pods too",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 2, never)},
				FailurePolicy: fp(1).Obj(),
				Steps:         []Step{step(worker, 0, Succeed, 0), step(worker, 1, Fail, 1), at(1, step(worker, 1, Succeed, 0))}},
			want:    State{Phase: PhaseRunning, Restarts: 1, RestartsCountTowardsMax: 1, Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 1}},
			effects: []Effect{EffectSucceeded, EffectRestart, EffectSucceeded},
		},
		{
			name: "pods run with restartPolicy Never: a clean exit under Always succeeds",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Namespace: "ns", Replicas: []ReplicaSet{rs(worker, 1, always)},
				FailurePolicy: fp(0).Obj(),
				Steps:         []Step{step(worker, 0, Succeed, 0)}},
			want:    State{Phase: PhaseSucceeded, Reason: "JAXJobSucceeded", Message: "JAXJob ns/j successfully completed.", Succeeded: map[kubeflowv1.ReplicaType]int32{worker: 1}},
			effects: []Effect{EffectFinished},
		},
		{
			name: "a step on a pod of an attempt that is over is moot",
			s: Scenario{Kind: kubeflowv1.JAXJobKind, Replicas: []ReplicaSet{rs(worker, 2, never)},
				FailurePolicy: fp(1).Obj(),
				Steps:         []Step{step(worker, 0, Fail, 1), step(worker, 1, Fail, 1)}},
			want:    State{Phase: PhaseRunning, Restarts: 1, RestartsCountTowardsMax: 1},
			effects: []Effect{EffectRestart, EffectNone},
			moot:    []int{1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkPrediction(t, tc.s, tc.want, tc.effects, true, tc.moot) })
	}
}

// TestGenerate checks the generator's contract: reproducible per (seed,
// index), steps only on running pods of the current attempt of a running
// job (a burst's later steps excepted: an earlier one may end the
// attempt), in-place restarts only where the kubelet restarts containers,
// bursts only of failures whose time order is their script order, and each
// part of the failure policy exercised.
func TestGenerate(t *testing.T) {
	const n = 2000
	phases := map[Phase]int{}
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		s := Generate(42, i, "ns")
		if again := Generate(42, i, "ns"); !reflect.DeepEqual(s, again) {
			t.Fatalf("scenario %d is not reproducible", i)
		}
		if s.FailurePolicy != nil {
			seen["failurePolicy"]++
		}
		if s.NoHold {
			seen["noHold"]++
		}
		if (s.Kind == kubeflowv1.MPIJobKind) != (s.Naming != "") {
			t.Fatalf("%s: container naming is for MPIJobs only, and every MPIJob has one", s.String())
		}
		if s.Naming != "" {
			seen["containers "+string(s.Naming)]++
		}
		o := NewOracle(&s)
		burstSlots, burstPerPod := map[Slot]bool{}, 0
		for k, st := range s.Steps {
			if !st.Burst {
				burstSlots, burstPerPod = map[Slot]bool{}, 0
			} else {
				seen["burst"]++
				prev := s.Steps[k-1]
				if s.FailurePolicy == nil || st.Attempt != prev.Attempt || !prev.Outcome.clientTimed() || !st.Outcome.failure() || st.Delay > 0 {
					t.Fatalf("%s: step %d: a burst is failures of one attempt of a failure-policy job, each but the last timed by the test", s.String(), k)
				}
			}
			sl := Slot{st.Type, st.Index}
			if burstSlots[sl] {
				t.Fatalf("%s: step %d: a burst acts on a pod twice", s.String(), k)
			}
			burstSlots[sl] = true
			if !st.Burst {
				if o.Finished() {
					t.Fatalf("%s: step %d after the job finished", s.String(), k)
				}
				if st.Attempt != o.Attempt() {
					t.Fatalf("%s: step %d on attempt %d, the job is on %d", s.String(), k, st.Attempt, o.Attempt())
				}
				live := false
				for _, l := range o.LiveSlots() {
					live = live || l == sl
				}
				if !live {
					t.Fatalf("%s: step %d targets a pod that is not running", s.String(), k)
				}
			}
			p := s.Replica(st.Type).Policy
			if st.Outcome == Crash && (s.FailurePolicy != nil || (p != always && p != onFailure)) {
				t.Fatalf("%s: in-place restart under %s", s.String(), p)
			}
			if st.Outcome == MainExit && s.FailurePolicy == nil {
				t.Fatalf("%s: a main container's exit without a sidecar", s.String())
			}
			if (st.Outcome == Delete || st.Outcome == APIEvict) && st.Code != 0 && (s.NoHold || s.FailurePolicy != nil) {
				t.Fatalf("%s: step %d: a deleted pod's code is timed after its deletion", s.String(), k)
			}
			if st.Burst || (k+1 < len(s.Steps) && s.Steps[k+1].Burst) {
				if o.handsBack(st) {
					if burstPerPod++; burstPerPod > 1 {
						t.Fatalf("%s: step %d: a burst hands two failures to the per-pod rule", s.String(), k)
					}
				}
			}
			r := o.Apply(st)
			if r.PerPod {
				seen["per-pod"]++
			}
			seen["effect "+string(r.Effect)]++
			if r.Moot {
				seen["moot"]++
			}
		}
		final := o.State()
		phases[final.Phase]++
		if s.FailurePolicy != nil {
			if final.Restarts > final.RestartsCountTowardsMax {
				seen["ignored restart"]++
			}
			if final.Phase == PhaseFailed && final.Reason != "" && len(final.MessageParts) > 0 && final.Message == "" {
				seen["failed by the policy"]++
			}
		}
	}
	t.Logf("final phases of %d scenarios: %v; seen: %v", n, phases, seen)
	for _, p := range []Phase{PhaseRunning, PhaseSucceeded, PhaseFailed} {
		if phases[p] < 200 {
			t.Errorf("too few scenarios end %s: %v", p, phases)
		}
	}
	for _, what := range []string{"failurePolicy", "noHold", "burst", "moot", "per-pod", "effect restart", "ignored restart", "failed by the policy",
		"containers " + string(NamedMPI), "containers " + string(NamedByType), "containers " + string(NamedMain)} {
		if seen[what] < n/50 {
			t.Errorf("too few %q: %d of %d scenarios", what, seen[what], n)
		}
	}
}
