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
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

func TestCPUSamplerBetween(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := &cpuSampler{samples: []cpuSample{
		{at(0), cpuSnapshot{"kube-apiserver": 1}},
		{at(250), cpuSnapshot{"kube-apiserver": 1.2}},
		{at(500), cpuSnapshot{"kube-apiserver": 1.5}},
		{at(750), cpuSnapshot{"kube-apiserver": 1.9}},
	}}
	cases := []struct {
		name     string
		from, to time.Time
		want     map[string]float64
		wantSpan time.Duration
	}{
		{"phase inside samples widens to the samples around it", at(300), at(600), map[string]float64{"kube-apiserver": 0.7}, 500 * time.Millisecond},
		{"phase on sample times", at(250), at(500), map[string]float64{"kube-apiserver": 0.3}, 250 * time.Millisecond},
		{"phase starting before the first sample", at(-10), at(500), nil, 0},
		{"phase ending after the last sample", at(300), at(800), nil, 0},
	}
	for _, tc := range cases {
		got, span := s.between(tc.from, tc.to)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" || span != tc.wantSpan {
			t.Errorf("%s: between = %v over %v, want %v over %v", tc.name, got, span, tc.want, tc.wantSpan)
		}
	}
}

func TestPhaseCPUMetrics(t *testing.T) {
	p := &PhaseCPU{Seconds: 10, CPUSeconds: map[string]float64{"operator": 2, "kube-apiserver": 12, "etcd": 4}}
	want := []Metric{
		{"until all created: etcd CPU", 4, "s"},
		{"until all created: kube-apiserver CPU", 12, "s"},
		{"until all created: operator CPU", 2, "s"},
		{"until all created: cores busy", 1.8, "cores"},
	}
	if diff := cmp.Diff(want, p.metrics("until all created"), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if got := (*PhaseCPU)(nil).metrics("x"); got != nil {
		t.Errorf("nil phase: %v, want none", got)
	}
}
