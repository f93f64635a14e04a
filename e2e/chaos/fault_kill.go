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
	"time"
)

// killScenario: one operator (no leader election) is SIGKILLed every
// 5-10 s (randomized from the seed) while the burst runs and started again
// right away, as a crash-looping pod would be.
var killScenario = scenario{name: "kill", replicas: 1, inject: injectKills}

func injectKills(ctx context.Context, r *run) error {
	o := r.ops[0]
	until := time.Now().Add(r.p.faultFor)
	for i := 1; ; i++ {
		wait := r.p.killEvery[0] + time.Duration(r.rng.Int64N(int64(r.p.killEvery[1]-r.p.killEvery[0])+1))
		if time.Now().Add(wait).After(until) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		at := time.Now()
		o.kill()
		if err := o.start(); err != nil {
			return err
		}
		end := time.Now()
		f := fault{Type: "operator SIGKILL", At: at, End: end, Note: fmt.Sprintf("kill #%d after %s", i, wait.Round(time.Millisecond))}
		r.measureTakeover(ctx, o, &f)
		if err := o.waitReady(ctx, readyWithin); err != nil && ctx.Err() == nil {
			f.NotReady = err.Error()
		}
		f.Ready = time.Since(end)
		r.addFault(f)
	}
}

// measureTakeover fills ToReconcile and ToProgress for the replica o that
// must pick the work up after f.
func (r *run) measureTakeover(ctx context.Context, o *operator, f *fault) {
	first := o.firstReconcile(ctx, reconcileWithin)
	if first.IsZero() {
		f.ToReconcile, f.ToProgress = -1, -1
		// An aborted run says nothing about the operator.
		f.NoReconcile = ctx.Err() == nil
		return
	}
	f.ToReconcile = first.Sub(f.End)
	// Polled every 50 ms: writes of the new process may precede the poll.
	from := first.Add(-100 * time.Millisecond)
	if d := r.progressAfter(ctx, from, 30*time.Second); d >= 0 {
		f.ToProgress = from.Add(d).Sub(f.End)
	} else {
		f.ToProgress = -1
	}
}
