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

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// failoverScenario: two replicas with leader election; the leader is
// SIGKILLed mid-burst and the standby must take over within the lease
// duration. The killed replica comes back as the new standby once the
// takeover is seen.
var failoverScenario = scenario{name: "failover", replicas: 2, leaderElect: true, inject: injectFailovers}

func injectFailovers(ctx context.Context, r *run) error {
	for i := 1; i <= r.p.failovers; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.p.failoverGap):
		}
		leader := r.leader(ctx)
		if leader == nil {
			return fmt.Errorf("no replica reports leadership")
		}
		// The holder before the kill must be known: were it "", the dead
		// leader's own name, read after the kill, would look like a takeover.
		holder, err := r.leaseHolder(ctx, 10*time.Second)
		if err != nil {
			return fmt.Errorf("failover #%d: reading the Lease before the kill: %w", i, err)
		}
		at := time.Now()
		leader.kill()
		end := time.Now()
		f := fault{Type: "leader SIGKILL", At: at, End: end, Note: fmt.Sprintf("failover #%d: killed %s (holder %s)", i, leader.name, holder)}
		// The takeover: the Lease names another holder. A failed read is no
		// answer either way.
		deadline := at.Add(4 * leaseDuration)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if h, err := r.leaseHolder(ctx, 0); err == nil && tookOver(holder, h) {
				f.ToLeader = time.Since(at)
				f.Note += "; new holder " + h
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		f.NoTakeover = f.ToLeader == 0 && ctx.Err() == nil
		for _, o := range r.ops {
			if o != leader {
				r.measureTakeover(ctx, o, &f)
			}
		}
		if err := leader.start(); err != nil {
			return err
		}
		// The killed replica comes back as a standby: it must be ready too.
		if err := leader.waitReady(ctx, readyWithin); err != nil && ctx.Err() == nil {
			f.NotReady = leader.name + ": " + err.Error()
		}
		r.addFault(f)
	}
	return nil
}

// tookOver: the Lease read after the kill names a holder other than the
// one read before it.
func tookOver(before, after string) bool {
	return before != "" && after != "" && after != before
}

// leader is the replica whose metrics say it holds the lease.
func (r *run) leader(ctx context.Context) *operator {
	deadline := time.Now().Add(2 * leaseDuration)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, o := range r.ops {
			if o.running() && o.isLeader(ctx) {
				return o
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// leaseHolder reads the Lease's holder, retrying a failed read for up to
// retryFor; an error is never an empty holder.
func (r *run) leaseHolder(ctx context.Context, retryFor time.Duration) (string, error) {
	deadline := time.Now().Add(retryFor)
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var l coordinationv1.Lease
		err := r.e.client.Get(rctx, client.ObjectKey{Namespace: leaseNS, Name: leaseName}, &l)
		cancel()
		switch {
		case err == nil && ptr.Deref(l.Spec.HolderIdentity, "") == "":
			err = fmt.Errorf("lease %s/%s has no holder", leaseNS, leaseName)
		case err == nil:
			return *l.Spec.HolderIdentity, nil
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return "", err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
