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
	"sort"
	"sync"
	"time"

	"github.com/seed-d8a409e9/training-operator/harness/childproc"
)

// processCPUSeconds is utime+stime of a process from /proc/<pid>/stat.
var processCPUSeconds = childproc.CPUSeconds

// parseProcStatCPU reads utime+stime (fields 14 and 15) of a /proc stat line.
var parseProcStatCPU = childproc.ParseProcStatCPU

// cpuSnapshot is the CPU time of named processes at one moment.
type cpuSnapshot map[string]float64

// snapshotCPU reads the CPU time of each named process; a process that
// cannot be read is left out.
func snapshotCPU(pids map[string]int) cpuSnapshot {
	s := cpuSnapshot{}
	for name, pid := range pids {
		if v, err := processCPUSeconds(pid); err == nil {
			s[name] = v
		}
	}
	return s
}

// since is the CPU each process used from earlier to s; processes missing
// from either side (restarted, exited) are left out.
func (s cpuSnapshot) since(earlier cpuSnapshot) map[string]float64 {
	d := map[string]float64{}
	for name, v := range s {
		if v0, ok := earlier[name]; ok && v >= v0 {
			d[name] = v - v0
		}
	}
	return d
}

// Names of the two processes a cpuSampler adds to the control plane's.
const (
	operatorProcess = "operator"
	benchProcess    = "bench client"
)

// cpuSampler records the CPU time of the operator, the bench and every
// control-plane process a few times a second, so a scenario's figures can
// cover a phase found only afterwards (start until all pods were created).
type cpuSampler struct {
	mu      sync.Mutex
	samples []cpuSample
}

type cpuSample struct {
	at  time.Time
	cpu cpuSnapshot
}

// startCPUSampler samples pids() every interval until ctx ends.
func startCPUSampler(ctx context.Context, interval time.Duration, pids func() map[string]int) *cpuSampler {
	s := &cpuSampler{}
	s.sample(pids)
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.sample(pids)
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample(pids func() map[string]int) {
	snap := cpuSample{at: time.Now(), cpu: snapshotCPU(pids())}
	s.mu.Lock()
	s.samples = append(s.samples, snap)
	s.mu.Unlock()
}

// between is the CPU each process used over at least [from, to]: from the
// last sample at or before from to the first at or after to. It returns
// the covered span too; nil without samples around both ends.
func (s *cpuSampler) between(from, to time.Time) (map[string]float64, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.samples), func(k int) bool { return s.samples[k].at.After(from) }) - 1
	j := sort.Search(len(s.samples), func(k int) bool { return !s.samples[k].at.Before(to) })
	if i < 0 || j >= len(s.samples) || j <= i {
		return nil, 0
	}
	return s.samples[j].cpu.since(s.samples[i].cpu), s.samples[j].at.Sub(s.samples[i].at)
}
