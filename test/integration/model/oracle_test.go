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

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
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
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Name = "j"
			got, results := Predict(&tc.s)
			if tc.want.Succeeded == nil {
				tc.want.Succeeded = map[kubeflowv1.ReplicaType]int32{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("final state\n got: %s\nwant: %s", got, tc.want)
			}
			var effects []Effect
			for _, r := range results {
				effects = append(effects, r.Effect)
			}
			if !reflect.DeepEqual(effects, tc.effects) {
				t.Errorf("effects: got %v, want %v", effects, tc.effects)
			}
		})
	}
}

// TestGenerate checks the generator's contract: reproducible per (seed,
// index), steps only on running pods of a running job, in-place restarts
// only where the kubelet restarts containers.
func TestGenerate(t *testing.T) {
	phases := map[Phase]int{}
	for i := 0; i < 2000; i++ {
		s := Generate(42, i, "ns")
		if again := Generate(42, i, "ns"); !reflect.DeepEqual(s, again) {
			t.Fatalf("scenario %d is not reproducible", i)
		}
		o := NewOracle(&s)
		for k, st := range s.Steps {
			if o.Finished() {
				t.Fatalf("%s: step %d after the job finished", s.String(), k)
			}
			live := false
			for _, sl := range o.LiveSlots() {
				live = live || sl == (Slot{st.Type, st.Index})
			}
			if !live {
				t.Fatalf("%s: step %d targets a pod that is not running", s.String(), k)
			}
			if p := s.Replica(st.Type).Policy; st.Outcome == Crash && p != always && p != onFailure {
				t.Fatalf("%s: in-place restart under %s", s.String(), p)
			}
			o.Apply(st)
		}
		phases[o.State().Phase]++
	}
	t.Logf("final phases of 2000 scenarios: %v", phases)
	for _, p := range []Phase{PhaseRunning, PhaseSucceeded, PhaseFailed} {
		if phases[p] < 200 {
			t.Errorf("too few scenarios end %s: %v", p, phases)
		}
	}
}
