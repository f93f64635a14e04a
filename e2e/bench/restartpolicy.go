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
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// The whole-job restart scenario: its name's prefix (the operator's restart
// is "restart-<n>"), its size and the figures its target compares.
const (
	restartPolicyPrefix   = "restart-policy"
	restartPolicyReplicas = 128 // 1 master + 127 workers
	// restartPolicyMaxRestarts leaves room for the one restart measured.
	restartPolicyMaxRestarts = 3
	// restartPolicyExitCode is the failed worker's: non-zero, and no rule
	// names it, so the policy's default action (RestartJob) applies.
	restartPolicyExitCode  = "3"
	restartPolicyPods      = "restart: failure → all new pods created"
	restartPolicyFreshPods = "fresh job: create → all pods created"
)

// restartPolicy (restart-policy-<replicas>) measures a whole-job restart by
// runPolicy.failurePolicy at scale. A PyTorchJob of 1 master and replicas-1
// workers, with maxRestarts and no rules, is created and waited for until
// every pod runs (its pods run until told otherwise). An identical fresh
// job is then created next to it and timed from the create request to all
// its pods created and Running: the baseline, taken with the other job's
// pods running so that both meet the same cluster. Then one worker of the
// first job is made to fail, and the restart is timed from the pod watch
// seeing it Failed: the Restarting status write, every pod of attempt 0
// terminating, released (its pod-tracking finalizer removed) and gone,
// every pod of attempt 1 created and Running, the job Running again.
// The operator's requests are counted over the fresh job and over the
// restart apart, from its metrics; the times all come from the bench's
// watches.
func restartPolicy(replicas int) scenario {
	return scenario{name: fmt.Sprintf("%s-%d", restartPolicyPrefix, replicas), run: func(ctx context.Context, e *env, res *Result) error {
		ns := res.Scenario
		if err := e.createNamespace(ctx, ns); err != nil {
			return err
		}
		// Both jobs' pods and the new attempt's.
		res.Jobs, res.Pods = 2, 3*replicas
		timeout := time.Minute + time.Duration(replicas)*200*time.Millisecond
		restarted, fresh := restartPolicyJob("restarted", ns, replicas), restartPolicyJob("fresh", ns, replicas)
		rKey, fKey := client.ObjectKeyFromObject(restarted), client.ObjectKeyFromObject(fresh)

		if err := e.createJob(ctx, restarted); err != nil {
			return err
		}
		if err := e.waitAttemptRunning(ctx, rKey, "0", replicas, timeout); err != nil {
			return err
		}
		res.Metrics = append(res.Metrics, createFigures("first job (alone): ", e.tracker.jobsIn([]types.NamespacedName{rKey})[0], replicas)...)

		freshSpan := e.startRequestSpan(ctx)
		if err := e.createJob(ctx, fresh); err != nil {
			return err
		}
		if err := e.waitAttemptRunning(ctx, fKey, "0", replicas, timeout); err != nil {
			return err
		}
		time.Sleep(settle) // its trailing status writes and Events are its own
		res.Metrics = append(res.Metrics, createFigures("fresh job: ", e.tracker.jobsIn([]types.NamespacedName{fKey})[0], replicas)...)
		res.Metrics = append(res.Metrics, freshSpan.metrics(ctx, "fresh job: ")...)

		restartSpan := e.startRequestSpan(ctx)
		log.Printf("%s: failing a worker of %s", res.Scenario, rKey)
		if err := e.failWorker(ctx, rKey, restartPolicyExitCode); err != nil {
			return err
		}
		waitErr := e.waitRestarted(ctx, rKey, "1", replicas, 2*timeout)
		time.Sleep(settle) // the last status write and Event of the restart
		end := time.Now()
		j := e.tracker.jobsIn([]types.NamespacedName{rKey})[0]
		res.Metrics = append(res.Metrics, restartFigures(j, "0", "1", replicas)...)
		if !j.firstFailed.IsZero() {
			act := e.tracker.activity([]types.NamespacedName{rKey}, j.firstFailed, end)
			res.Metrics = append(res.Metrics,
				Metric{"restart: status writes (watch)", float64(act.StatusWrites), ""},
				Metric{"restart: Events (sum of count)", float64(act.EventCount), ""})
		}
		res.Metrics = append(res.Metrics, restartSpan.metrics(ctx, "restart: ")...)
		return joinErrors(waitErr, e.checkRestarts(ctx, rKey, 1))
	}}
}

// restartPolicyJob is a PyTorchJob of 1 master and replicas-1 workers with
// a failure policy of restartPolicyMaxRestarts and no rules. Its templates
// carry no KWOK exit annotation, so its pods run until the bench gives one.
func restartPolicyJob(name, ns string, replicas int) *kubeflowv1.PyTorchJob {
	return testjobs.MakePyTorchJob(name, ns).Master(1).Workers(int32(replicas - 1)).
		FailurePolicy(testjobs.MakeFailurePolicy(restartPolicyMaxRestarts).Obj()).Obj()
}

// createFigures are a job's create → all pods of attempt 0 created and
// Running, as the watches saw them.
func createFigures(prefix string, j jobTimes, replicas int) []Metric {
	a := j.attempts["0"]
	return []Metric{
		{prefix + "create → all pods created", sinceSeconds(j.created, whenAll(a.pods, replicas, a.lastPod)), "s"},
		{prefix + "create → all pods Running", sinceSeconds(j.created, whenAll(a.running, replicas, a.lastRunning)), "s"},
	}
}

// restartFigures time a restart from attempt old to attempt cur from the
// watch seeing the failed pod Failed; a step not reached shows 0.
func restartFigures(j jobTimes, old, cur string, replicas int) []Metric {
	if j.firstFailed.IsZero() {
		return nil
	}
	o, c := j.attempts[old], j.attempts[cur]
	gone, created := whenAll(o.gone, replicas, o.lastGone), whenAll(c.pods, replicas, c.lastPod)
	out := []Metric{
		{"restart: failure → Restarting written", sinceSeconds(j.firstFailed, j.restarting), "s"},
		{"restart: failure → all old pods terminating", sinceSeconds(j.firstFailed, whenAll(o.terminating, replicas, o.lastTerminating)), "s"},
		{"restart: failure → all old pods released (terminating, finalizer gone)", sinceSeconds(j.firstFailed, whenAll(o.released, replicas, o.lastReleased)), "s"},
		{"restart: failure → all old pods gone", sinceSeconds(j.firstFailed, gone), "s"},
		{restartPolicyPods, sinceSeconds(j.firstFailed, created), "s"},
		{"restart: failure → all new pods Running", sinceSeconds(j.firstFailed, whenAll(c.running, replicas, c.lastRunning)), "s"},
		{"restart: failure → job Running again", sinceSeconds(j.firstFailed, j.resumed), "s"},
	}
	// BlockingRecreate's creation phase alone, to set beside a fresh job's.
	if !gone.IsZero() && !created.IsZero() {
		out = append(out, Metric{"restart: all old pods gone → all new pods created", created.Sub(gone).Seconds(), "s"})
	}
	return out
}

// whenAll is at when count reached want, else the zero time: the last of a
// set, seen only once the set is complete.
func whenAll(count, want int, at time.Time) time.Time {
	if count < want {
		return time.Time{}
	}
	return at
}

// waitAttemptRunning waits until the watch saw every one of the replicas
// pods of a restart attempt of a job Running.
func (e *env) waitAttemptRunning(ctx context.Context, key types.NamespacedName, attempt string, replicas int, timeout time.Duration) error {
	return waitFor(ctx, timeout, fmt.Sprintf("%s attempt %s Running", key, attempt), func() (bool, string) {
		if e.operator.Exited() {
			return false, "operator exited"
		}
		a := e.tracker.jobsIn([]types.NamespacedName{key})[0].attempts[attempt]
		return a.running >= replicas, fmt.Sprintf("pods %d, running %d of %d", a.pods, a.running, replicas)
	})
}

// waitRestarted waits until a job restarted into attempt cur: a pod seen
// Failed, every pod of cur Running and the job Running again.
func (e *env) waitRestarted(ctx context.Context, key types.NamespacedName, cur string, replicas int, timeout time.Duration) error {
	return waitFor(ctx, timeout, fmt.Sprintf("%s restarted into attempt %s", key, cur), func() (bool, string) {
		if e.operator.Exited() {
			return false, "operator exited"
		}
		j := e.tracker.jobsIn([]types.NamespacedName{key})[0]
		c := j.attempts[cur]
		var gone []string
		for attempt, a := range j.attempts {
			if attempt != cur {
				gone = append(gone, fmt.Sprintf("attempt %s gone %d", attempt, a.gone))
			}
		}
		return c.running >= replicas && !j.resumed.IsZero(), fmt.Sprintf("failed %v, restarting %v, %s, attempt %s pods %d running %d of %d, Running again %v",
			!j.firstFailed.IsZero(), !j.restarting.IsZero(), strings.Join(gone, ", "), cur, c.pods, c.running, replicas, !j.resumed.IsZero())
	})
}

// failWorker makes KWOK end worker 0 of a job with exit code code: its
// pod-exit stage ends a Running pod once it carries
// cluster.ExitCodeAnnotation (after its default delay of 1 s).
func (e *env) failWorker(ctx context.Context, key types.NamespacedName, code string) error {
	var pods corev1.PodList
	if err := e.client.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels{
		kubeflowv1.JobNameLabel:      key.Name,
		kubeflowv1.ReplicaTypeLabel:  strings.ToLower(string(kubeflowv1.PyTorchJobReplicaTypeWorker)),
		kubeflowv1.ReplicaIndexLabel: "0",
	}); err != nil {
		return err
	}
	if len(pods.Items) != 1 {
		return fmt.Errorf("worker 0 of %s: %d pods", key, len(pods.Items))
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, cluster.ExitCodeAnnotation, code)
	return e.client.Patch(ctx, &pods.Items[0], client.RawPatch(types.MergePatchType, []byte(patch)))
}

// checkRestarts fails unless the job's status.restarts is want: one failure
// must make one restart, not one per pod the restart deleted.
func (e *env) checkRestarts(ctx context.Context, key types.NamespacedName, want int32) error {
	var job kubeflowv1.PyTorchJob
	if err := e.client.Get(ctx, key, &job); err != nil {
		return err
	}
	if job.Status.Attempt() != want {
		return fmt.Errorf("%s: status.restarts %d, want %d", key, job.Status.Attempt(), want)
	}
	return nil
}

// joinErrors joins the non-nil errors into one message (nil if none).
func joinErrors(errs ...error) error {
	var msg string
	for _, err := range errs {
		if err != nil {
			msg = joinErr(msg, err.Error())
		}
	}
	if msg == "" {
		return nil
	}
	return fmt.Errorf("%s", msg)
}

// requestSpan counts the operator's API requests over one phase of a
// scenario (the scenario's window counts them over the whole), from its
// rest_client_requests_total.
type requestSpan struct {
	e      *env
	before operatorMetrics
	gen    int
}

func (e *env) startRequestSpan(ctx context.Context) requestSpan {
	return requestSpan{e: e, before: e.operator.scrape(ctx), gen: e.operator.generation()}
}

// metrics are the requests since the span started: total, writes, 409s and
// reconciles, then by method and code, each name after prefix. None when
// the metrics could not be read or the operator was restarted meanwhile.
func (s requestSpan) metrics(ctx context.Context, prefix string) []Metric {
	after := s.e.operator.scrape(ctx)
	if !s.before.ok || !after.ok || s.e.operator.generation() != s.gen {
		return nil
	}
	api := &APICost{Total: int(after.requests - s.before.requests), ProxyTotal: -1,
		Methods: diffMethods(s.before.byMethod, after.byMethod)}
	var reconciles float64
	for k, v := range after.reconcileTotal {
		reconciles += v - s.before.reconcileTotal[k]
	}
	out := []Metric{
		{prefix + "API requests (operator's rest_client_requests_total)", float64(api.Total), "req"},
		{prefix + "API writes", float64(api.Writes()), "req"},
		{prefix + "409 conflicts", float64(api.Conflicts()), "req"},
		{prefix + "reconciles", reconciles, ""},
	}
	for _, c := range api.Methods {
		out = append(out, Metric{fmt.Sprintf("%srequests %s %s", prefix, c.Method, c.Code), float64(c.Count), "req"})
	}
	return out
}
