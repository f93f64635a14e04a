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
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcStatCPU(t *testing.T) {
	// utime 250 and stime 50 ticks; the command name holds spaces and ")".
	line := "4242 (kube apiserver) (x)) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	got, err := parseProcStatCPU(line)
	if err != nil || got != 3 {
		t.Errorf("parseProcStatCPU = %v, %v; want 3 s", got, err)
	}
	if _, err := parseProcStatCPU("1 (x) S 1"); err == nil {
		t.Error("a short line parsed without error")
	}
	if _, err := processCPUSeconds(os.Getpid()); err != nil {
		t.Errorf("own process: %v", err)
	}
}

func TestCPUSnapshotSince(t *testing.T) {
	before := cpuSnapshot{"etcd": 10, "kube-apiserver": 20, "kwok": 5}
	// kwok was restarted (its counter went back) and the scheduler is new:
	// neither has a meaningful difference.
	after := cpuSnapshot{"etcd": 12.5, "kube-apiserver": 31, "kwok": 1, "kube-scheduler": 3}
	want := map[string]float64{"etcd": 2.5, "kube-apiserver": 11}
	if diff := cmp.Diff(want, after.since(before)); diff != "" {
		t.Errorf("since (-want +got):\n%s", diff)
	}
}

func TestFootprintCPUMetrics(t *testing.T) {
	f := Footprint{
		CPUSeconds:             2,
		BenchCPUSeconds:        1,
		ControlPlaneCPUSeconds: map[string]float64{"kube-apiserver": 10, "etcd": 3},
		WallSeconds:            8,
	}
	want := []Metric{
		{"etcd CPU", 3, "s"},
		{"kube-apiserver CPU", 10, "s"},
		{"bench client CPU", 1, "s"},
		{"cores busy (all processes / wall time)", 2, "cores"},
	}
	if diff := cmp.Diff(want, f.cpuMetrics()); diff != "" {
		t.Errorf("cpuMetrics (-want +got):\n%s", diff)
	}
	if got := (Footprint{CPUSeconds: 2}).cpuMetrics(); got != nil {
		t.Errorf("without control-plane figures: %v, want none", got)
	}
}
