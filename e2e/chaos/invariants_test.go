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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func pod(s float64, uid, name string, phase corev1.PodPhase) podObs {
	return podObs{At: at(s), UID: uid, Name: name, Job: "ns/j", RType: "worker", Index: 0, Phase: phase, Created: at(s).Truncate(time.Second)}
}

func deleting(p podObs) podObs { p.Deleting = true; return p }
func gone(p podObs) podObs     { p.Gone = true; return p }

// backoffJob: the worker exits 137 under ExitCode, backoffLimit 2.
func backoffInput(rc int32, pods []podObs) checkInput {
	return checkInput{
		Expect: map[string]expectation{"ns/j": {Design: designBackoff, Outcome: "Failed", RestartCount: 2, RestartExact: true,
			Replicas: 1, Incarnations: map[string]int{"j-worker-0": 3}}},
		Final: map[string]jobObs{"ns/j": {Job: "ns/j", Failed: true, RestartCount: rc, TerminalAt: at(30)}},
		History: history{Pods: pods, Jobs: []jobObs{
			{At: at(0), Job: "ns/j"},
			{At: at(30.2), Job: "ns/j", Failed: true, RestartCount: rc, TerminalAt: at(30)},
		}},
	}
}

// incarnation is one pod that runs and fails, then is deleted.
func incarnation(start float64, uid string) []podObs {
	p := pod(start, uid, "j-worker-0", corev1.PodPending)
	r := pod(start+1, uid, "j-worker-0", corev1.PodRunning)
	f := pod(start+2, uid, "j-worker-0", corev1.PodFailed)
	return []podObs{p, r, f, deleting(pod(start+3, uid, "j-worker-0", corev1.PodFailed)), gone(pod(start+3.1, uid, "j-worker-0", corev1.PodFailed))}
}

func rules(vs []violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return strings.Join(out, ",")
}

func TestCheck(t *testing.T) {
	three := append(append(incarnation(1, "a"), incarnation(10, "b")...), incarnation(20, "c")...)
	cases := map[string]struct {
		in   checkInput
		want string
	}{
		"as designed": {in: backoffInput(2, three)},
		// A failed pod counted twice (operator killed between the status
		// write and the pod's deletion): the job fails one incarnation early.
		"double count": {in: backoffInput(2, append(incarnation(1, "a"), incarnation(10, "b")...)), want: ruleIncarnations},
		"wrong count":  {in: backoffInput(1, three), want: ruleRestartCount},
		"two live pods": {in: backoffInput(2, append(three,
			pod(25, "x", "j-worker-0", corev1.PodRunning), pod(25.5, "y", "j-worker-0", corev1.PodRunning))),
			want: ruleTwoLive + "," + ruleIncarnations},
		"pod after finish": {in: backoffInput(2, append(three[:10:10], append(incarnation(20, "c"), pod(40, "d", "j-worker-0", corev1.PodPending))...)),
			want: ruleIncarnations + "," + ruleAfterFinish},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vs, _ := check(tc.in)
			if got := rules(vs); got != tc.want {
				t.Errorf("violations %q, want %q: %+v", got, tc.want, vs)
			}
		})
	}
}

func TestCheckSticky(t *testing.T) {
	in := backoffInput(2, append(append(incarnation(1, "a"), incarnation(10, "b")...), incarnation(20, "c")...))
	in.History.Jobs = append(in.History.Jobs, jobObs{At: at(31), Job: "ns/j", RestartCount: 2})
	vs, _ := check(in)
	if got := rules(vs); got != ruleSticky {
		t.Errorf("violations %q, want %q", got, ruleSticky)
	}
}

// A live pod deleted by someone else (KWOK deletes by name) is a legitimate
// retry: bounds widen by it, and the deletion is reported.
func TestCheckInfraDeletion(t *testing.T) {
	pods := append(incarnation(1, "a"), pod(10, "b", "j-worker-0", corev1.PodRunning),
		deleting(pod(11, "b", "j-worker-0", corev1.PodRunning)), gone(pod(11.1, "b", "j-worker-0", corev1.PodRunning)))
	pods = append(append(pods, incarnation(12, "c")...), incarnation(20, "d")...)
	vs, stats := check(backoffInput(2, pods))
	if len(vs) != 0 || stats.InfraDeletions != 1 {
		t.Errorf("violations %+v, infra deletions %d; want none and 1", vs, stats.InfraDeletions)
	}
}
