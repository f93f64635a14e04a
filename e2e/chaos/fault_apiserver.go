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

// apiserverScenario: one operator; mid-burst kube-apiserver is killed and
// restarted on the same port and certificates, and etcd is frozen with
// SIGSTOP for a while, alternately. The operator must ride both out.
var apiserverScenario = scenario{name: "apiserver", replicas: 1, inject: injectControlPlaneFaults}

func injectControlPlaneFaults(ctx context.Context, r *run) error {
	for i, kind := range r.p.controlPlaneFaults {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.p.controlPlaneGap):
		}
		at := time.Now()
		var f fault
		switch kind {
		case "apiserver":
			err := r.e.cluster.RestartAPIServer(ctx)
			f = fault{Type: "kube-apiserver restart", At: at, End: time.Now(), Note: fmt.Sprintf("fault #%d: SIGKILL, restart, ready again", i+1)}
			if err != nil {
				return fmt.Errorf("restart kube-apiserver: %w", err)
			}
		case "etcd":
			if err := r.e.cluster.PauseEtcd(); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
			case <-time.After(r.p.etcdPause):
			}
			if err := r.e.cluster.ResumeEtcd(); err != nil {
				return err
			}
			f = fault{Type: "etcd SIGSTOP", At: at, End: time.Now(), Note: fmt.Sprintf("fault #%d: paused %s", i+1, r.p.etcdPause)}
		default:
			return fmt.Errorf("unknown control-plane fault %q", kind)
		}
		f.ToProgress = r.progressAfter(ctx, f.End, 60*time.Second)
		r.addFault(f)
	}
	return nil
}
