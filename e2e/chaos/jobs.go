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

package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// Designs. KWOK finishes a pod with the exit code in its template, so every
// incarnation of a replica behaves the same: outcomes and retry counts are
// fixed by the design, whatever faults hit the operator.
const (
	designOK      = "ok"      // decisive replica exits 0: Succeeded, no retry
	designFail    = "fail"    // one replica exits with a code its policy does not retry: Failed, no retry
	designBackoff = "backoff" // one replica exits with a retried code until backoffLimit: Failed, restartCount = limit
	designDisrupt = "disrupt" // the harness deletes one running pod once: recreated, then Succeeded
	// Failure-policy designs: restartCount stays 0 (a whole-job restart is
	// not a per-pod retry); status.restarts counts the attempts.
	designFPRestart = "fp-restart" // one replica exits non-zero in every attempt: Failed once maxRestarts are spent, restarts = maxRestarts
	designFPFailJob = "fp-failjob" // one replica exits with a code a FailJob rule names: Failed at once, restarts 0
	designFPDisrupt = "fp-disrupt" // the harness deletes one running pod once, a rule ignores it for the budget: restarts 1, Succeeded
	// Suspension designs: the harness suspends the job once while it runs
	// and resumes it once suspended. Its pods' deletions are no failure:
	// Succeeded, with nothing counted for them (restartCount, or restarts
	// under the failure policy).
	designSuspend   = "suspend"    // tracked (backoffLimit), no failure policy
	designFPSuspend = "fp-suspend" // failure policy: maxRestarts 0, stray deletions ignored for the budget
	// designFPLostNode is fp-restart with maxRestarts 1 whose restart meets a
	// lost node: the harness takes the kubelet of another pod of attempt 0
	// away, so its deletion hangs, and loses that pod's node only after the
	// lost-pod timeout: the pod must be force-deleted then, not before.
	designFPLostNode = "fp-lostnode"
	lostPodTimeout   = 3 // seconds, failurePolicy.lostPodTimeoutSeconds of fp-lostnode jobs
	disruptRuntime   = 25 * time.Second
)

// deletionRoom is the backoffLimit of the ok, fail and disrupt jobs that
// are tracked: none of their pods fails retryably, so only deletions (the
// harness's one and KWOK's stray ones) use it, and they must not fail the
// job. KWOK has deleted a dozen replacements of one pod in a row by name
// (after an etcd pause, during a failover), and a quick run saw a limit of
// 5 spent that way.
const deletionRoom = 100

// neverExits is an exit code no design's pod exits with: rules naming it
// must not match, so the failure falls through to the next rule.
const neverExits = 42

// expectation is what a job must end with.
type expectation struct {
	Kind   string `json:"kind"`
	Design string `json:"design"`
	Policy string `json:"policy"`
	Code   int    `json:"exitCode"`
	// Outcome is the terminal condition type: Succeeded or Failed.
	Outcome string `json:"outcome"`
	// RestartCount is the per-pod retries the design's own failures make
	// (status.restartCount); deletions of running pods add to it as the
	// checker finds them (restartCountBounds).
	RestartCount int32 `json:"restartCount"`
	// Tracked jobs (backoffLimit or failurePolicy) keep every failed or
	// deleted pod with a finalizer until it is counted, so every deletion
	// counts exactly once; an untracked job's deletions count at most once.
	Tracked bool `json:"tracked,omitempty"`
	// MaxRestarts is the failure policy's budget (nil: no failure policy).
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// Strategy is the failure policy's restartStrategy.
	Strategy string `json:"strategy,omitempty"`
	// Restarts is the whole-job restarts (status.restarts) the design's
	// own failures make.
	Restarts int32 `json:"restarts,omitempty"`
	// Replicas is how many pod names (slots) the job has.
	Replicas int `json:"replicas"`
	// Incarnations is how many pods each name must have had; names not
	// listed must have had exactly one.
	Incarnations map[string]int `json:"incarnations,omitempty"`
	// DisruptPod is the pod the harness deletes once while the job runs.
	DisruptPod string `json:"disruptPod,omitempty"`
	// DecisivePod is the pod whose exit decides a disrupt or suspend job.
	DecisivePod string `json:"decisivePod,omitempty"`
	// Suspend: the harness suspends the job once its decisive pod runs,
	// and resumes it once it is suspended.
	Suspend bool `json:"suspend,omitempty"`
	// LostPod is the pod of attempt 0 whose kubelet the harness takes away
	// (fp-lostnode).
	LostPod string `json:"lostPod,omitempty"`
}

// plannedJob is one job of a burst.
type plannedJob struct {
	obj    client.Object
	kind   kindDef
	expect expectation
}

func (p plannedJob) key() string { return p.obj.GetNamespace() + "/" + p.obj.GetName() }

// planBurst draws n jobs over all six kinds and ten designs from rng.
func planBurst(rng *rand.Rand, ns string, n int) []plannedJob {
	out := make([]plannedJob, 0, n)
	for i := range n {
		k := kinds[i%len(kinds)] // every kind equally
		var d string
		switch r := rng.IntN(100); {
		case r < 23:
			d = designOK
		case r < 37:
			d = designFail
		case r < 53:
			d = designBackoff
		case r < 67:
			d = designDisrupt
		case r < 77:
			d = designFPRestart
		case r < 84:
			d = designFPFailJob
		case r < 91:
			d = designFPDisrupt
		case r < 94:
			d = designSuspend
		case r < 97:
			d = designFPSuspend
		default:
			d = designFPLostNode
		}
		out = append(out, planJob(rng, k, d, ns, fmt.Sprintf("%s-%s-%03d", k.abbr, d, i)))
	}
	return out
}

var allPolicies = []kubeflowv1.RestartPolicy{
	kubeflowv1.RestartPolicyAlways, kubeflowv1.RestartPolicyOnFailure,
	kubeflowv1.RestartPolicyExitCode, kubeflowv1.RestartPolicyNever,
}

// backoffCase is a retried exit code under a policy and a backoffLimit.
type backoffCase struct {
	policy kubeflowv1.RestartPolicy
	code   int
	limit  int32
}

var backoffCases = []backoffCase{
	{kubeflowv1.RestartPolicyExitCode, 137, 2},
	{kubeflowv1.RestartPolicyExitCode, 143, 1},
	{kubeflowv1.RestartPolicyOnFailure, 1, 1},
	{kubeflowv1.RestartPolicyOnFailure, 137, 2},
	{kubeflowv1.RestartPolicyAlways, 2, 2},
}

// failCase is an exit code the policy does not retry.
var failCases = []struct {
	policy kubeflowv1.RestartPolicy
	code   int
}{
	{kubeflowv1.RestartPolicyNever, 1},
	{kubeflowv1.RestartPolicyNever, 137},
	{kubeflowv1.RestartPolicyExitCode, 1},
	{kubeflowv1.RestartPolicyExitCode, 127},
}

// fpCodes are the exit codes of the failure-policy designs' failing replica;
// the replica's restartPolicy does not matter under a failure policy.
var fpCodes = []int32{1, 3, 137}

var strategies = []kubeflowv1.RestartStrategy{kubeflowv1.RestartStrategyBlockingRecreate, kubeflowv1.RestartStrategyRecreate}

// planJob builds one job of design d. Replicas that must not decide the
// outcome carry no exit annotation and run until cleanPodPolicy All removes
// them; the failing replica is alone in its type so that each retry round
// has exactly one failure (two failures counted in one pass could stop a
// job one short of its limit).
func planJob(rng *rand.Rand, k kindDef, d, ns, name string) plannedJob {
	var (
		obj    client.Object
		e      = expectation{Kind: k.kind, Design: d}
		policy = allPolicies[rng.IntN(len(allPolicies))]
		delay  = time.Duration(1000+rng.IntN(4000)) * time.Millisecond
		others = int32(1 + rng.IntN(2))
		// Half the ok, fail and disrupt jobs are tracked, so that exact
		// counting of deletions is checked against the same designs untracked.
		track = rng.IntN(2) == 0
	)
	// failing is the replica type that exits with a non-zero code.
	failing := k.other
	if failing == "" || k.kind == kubeflowv1.MPIJobKind {
		failing = k.decisive // JAX has one type; MPI's workers never exit by themselves
	}
	switch d {
	case designOK:
		obj = k.build(name, ns, others)
		annotate(obj, k.decisive, cluster.ExitCodeAnnotation, "0")
		annotate(obj, k.decisive, cluster.ExitDelayAnnotation, delay.String())
		e.Outcome = string(kubeflowv1.JobSucceeded)
	case designFail, designBackoff:
		obj = k.build(name, ns, 1)
		code, limit := 0, int32(-1)
		if d == designFail {
			c := failCases[rng.IntN(len(failCases))]
			policy, code = c.policy, c.code
		} else {
			c := backoffCases[rng.IntN(len(backoffCases))]
			policy, code, limit = c.policy, c.code, c.limit
		}
		annotate(obj, failing, cluster.ExitCodeAnnotation, strconv.Itoa(code))
		annotate(obj, failing, cluster.ExitDelayAnnotation, delay.String())
		e.Code = code
		e.Outcome = string(kubeflowv1.JobFailed)
		if limit >= 0 {
			testjobs.RunPolicy(obj).BackoffLimit = ptr.To(limit)
			e.RestartCount = limit
			// The original and one replacement per allowed retry.
			e.Incarnations = map[string]int{k.podName(name, failing, 0): int(limit) + 1}
		}
	case designDisrupt, designFPDisrupt:
		if k.other == "" {
			others = 2 // JAX: delete worker-1 of two; all must succeed
		}
		obj = k.build(name, ns, others)
		for rt := range testjobs.ReplicaSpecs(obj) {
			if rt == k.decisive || k.other == "" {
				annotate(obj, rt, cluster.ExitCodeAnnotation, "0")
				annotate(obj, rt, cluster.ExitDelayAnnotation, disruptRuntime.String())
			}
		}
		e.Outcome = string(kubeflowv1.JobSucceeded)
		// The harness's deletion is no failure of the design: the checker
		// adds it to the counts (restartCountBounds, restartsBounds).
		e.DecisivePod = k.podName(name, k.decisive, 0)
		if k.other == "" {
			e.DisruptPod = k.podName(name, k.decisive, 1)
		} else {
			e.DisruptPod = k.podName(name, k.other, 0)
		}
		e.Incarnations = map[string]int{e.DisruptPod: 2}
		if d == designFPDisrupt {
			// Every deletion, the harness's or a stray one, restarts the
			// whole job (every pod again) without using the budget of 0.
			testjobs.WithFailurePolicy(obj, testjobs.MakeFailurePolicy(0).
				Rule("infrastructure", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).
				Strategy(strategies[rng.IntN(len(strategies))]).Obj())
		}
	case designSuspend, designFPSuspend:
		if k.other == "" {
			others = 2
		}
		obj = k.build(name, ns, others)
		for rt := range testjobs.ReplicaSpecs(obj) {
			if rt == k.decisive || k.other == "" {
				annotate(obj, rt, cluster.ExitCodeAnnotation, "0")
				annotate(obj, rt, cluster.ExitDelayAnnotation, disruptRuntime.String())
			}
		}
		e.Outcome = string(kubeflowv1.JobSucceeded)
		e.DecisivePod = k.podName(name, k.decisive, 0)
		e.Suspend = true
		if d == designFPSuspend {
			testjobs.WithFailurePolicy(obj, testjobs.MakeFailurePolicy(0).
				Rule("infrastructure", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).
				Strategy(strategies[rng.IntN(len(strategies))]).Obj())
		}
	case designFPRestart, designFPFailJob, designFPLostNode:
		n := int32(1)
		if d == designFPLostNode && k.other == "" {
			n = 2 // JAX: the lost pod is the second worker
		}
		obj = k.build(name, ns, n)
		code := fpCodes[rng.IntN(len(fpCodes))]
		annotate(obj, failing, cluster.ExitCodeAnnotation, strconv.Itoa(int(code)))
		annotate(obj, failing, cluster.ExitDelayAnnotation, delay.String())
		e.Code = int(code)
		e.Outcome = string(kubeflowv1.JobFailed)
		var fp *testjobs.FailurePolicyWrapper
		if d == designFPRestart || d == designFPLostNode {
			// The failing replica fails in every attempt: each failure
			// restarts the job until maxRestarts are spent, the next fails it.
			m := int32(1 + rng.IntN(2))
			if d == designFPLostNode {
				m = 1
			}
			fp = testjobs.MakeFailurePolicy(m)
			if rng.IntN(2) == 0 {
				// Rules that do not match fall through; the second is the default made explicit.
				fp.Rule("user-error", kubeflowv1.FailJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, neverExits).
					Rule("retry", kubeflowv1.RestartJobAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpNotIn, neverExits)
			}
			e.Restarts = m
			// One failing pod per attempt.
			e.Incarnations = map[string]int{k.podName(name, failing, 0): int(m) + 1}
			if d == designFPLostNode {
				fp.LostPodTimeout(lostPodTimeout)
				switch {
				case k.other == "":
					e.LostPod = k.podName(name, failing, 1)
				case failing == k.other:
					e.LostPod = k.podName(name, k.decisive, 0)
				default:
					e.LostPod = k.podName(name, k.other, 0)
				}
				for _, s := range testjobs.ReplicaSpecs(obj) {
					s.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(1))
				}
			}
		} else {
			// The first failure fails the job. The budget of 1 lets a stray
			// deletion before it (no exit code: no match, RestartJob) restart
			// the job instead of failing it with another reason.
			fp = testjobs.MakeFailurePolicy(1).Rule("user-error", kubeflowv1.FailJobAction, failing).
				OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, code)
		}
		strategy := strategies[rng.IntN(len(strategies))]
		if d == designFPLostNode {
			// With Recreate the other replicas' new pods run, and the attempt
			// may end without the hanging pod's successor: only
			// BlockingRecreate must wait for it.
			strategy = kubeflowv1.RestartStrategyBlockingRecreate
		}
		testjobs.WithFailurePolicy(obj, fp.Strategy(strategy).Obj())
	}
	rp := testjobs.RunPolicy(obj)
	if (track && (d == designOK || d == designFail || d == designDisrupt)) || d == designSuspend {
		rp.BackoffLimit = ptr.To(int32(deletionRoom))
	}
	e.Tracked = rp.BackoffLimit != nil || rp.FailurePolicy != nil
	if fp := rp.FailurePolicy; fp != nil {
		e.MaxRestarts = ptr.To(fp.MaxRestarts)
		e.Strategy = string(fp.RestartStrategy)
	}
	for _, s := range testjobs.ReplicaSpecs(obj) {
		s.RestartPolicy = policy
		e.Replicas += int(ptr.Deref(s.Replicas, 1))
	}
	e.Policy = string(policy)
	rp.CleanPodPolicy = ptr.To(kubeflowv1.CleanPodPolicyAll)
	return plannedJob{obj: obj, kind: k, expect: e}
}
