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
		holder := r.leaseHolder(ctx)
		at := time.Now()
		leader.kill()
		end := time.Now()
		f := fault{Type: "leader SIGKILL", At: at, End: end, Note: fmt.Sprintf("failover #%d: killed %s (holder %s)", i, leader.name, holder)}
		// The takeover: the Lease names another holder.
		deadline := at.Add(4 * leaseDuration)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if h := r.leaseHolder(ctx); h != "" && h != holder {
				f.ToLeader = time.Since(at)
				f.Note += "; new holder " + h
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if f.ToLeader == 0 && ctx.Err() == nil {
			f.Note += "; NO TAKEOVER within " + (4 * leaseDuration).String()
			r.mu.Lock()
			r.broken = append(r.broken, violation{Rule: ruleNoTakeover,
				Detail: fmt.Sprintf("failover #%d: killed %s (holder %s), and no replica took the lease within %s", i, leader.name, holder, 4*leaseDuration)})
			r.mu.Unlock()
		}
		for _, o := range r.ops {
			if o != leader {
				r.measureTakeover(ctx, o, &f)
			}
		}
		if err := leader.start(); err != nil {
			return err
		}
		_ = leader.waitReady(ctx, 2*time.Minute)
		r.addFault(f)
	}
	return nil
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

func (r *run) leaseHolder(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var l coordinationv1.Lease
	if err := r.e.client.Get(ctx, client.ObjectKey{Namespace: leaseNS, Name: leaseName}, &l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}
