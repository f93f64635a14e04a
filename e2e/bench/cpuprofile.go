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
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// profileChunk is the length of one /debug/pprof/profile request. A
// scenario's length is not known in advance, so its profile is taken in
// consecutive chunks and merged: it covers the scenario to within one
// chunk, and stopping waits for at most one chunk.
const profileChunk = 5 * time.Second

// cpuProfile takes the operator's CPU profile, chunk after chunk, until
// save is called.
type cpuProfile struct {
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	chunks []profileChunkData
	errs   int
}

type profileChunkData struct {
	generation int // the operator process it came from
	data       []byte
}

// profileCPU starts taking the operator's CPU profile from its pprof
// endpoint (--pprof-bind-address={pprof}). A chunk that fails (the operator
// paused, restarting, or not yet serving) is dropped and the next one is
// requested after a short pause.
func (o *operator) profileCPU(ctx context.Context) *cpuProfile {
	p := &cpuProfile{stop: make(chan struct{}), done: make(chan struct{})}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", o.pprofAddr, int(profileChunk.Seconds()))
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			gen := o.generation()
			var b bytes.Buffer
			code, err := httpGetTimeout(ctx, url, &b, profileChunk+10*time.Second)
			if err != nil || code != http.StatusOK || o.generation() != gen {
				p.mu.Lock()
				p.errs++
				p.mu.Unlock()
				select {
				case <-p.stop:
					return
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			p.mu.Lock()
			p.chunks = append(p.chunks, profileChunkData{generation: gen, data: b.Bytes()})
			p.mu.Unlock()
		}
	}()
	return p
}

// save waits for the chunk in flight, merges the chunks and writes them to
// path. When the operator was restarted during the profile, path holds the
// last process's profile and the earlier processes' go to
// <name>.before-restart.cpu.pb.gz.
func (p *cpuProfile) save(path string) error {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.chunks) == 0 {
		return fmt.Errorf("no profile chunk succeeded (%d failed)", p.errs)
	}
	last := p.chunks[len(p.chunks)-1].generation
	var cur, before []*profile.Profile
	for _, c := range p.chunks {
		prof, err := profile.ParseData(c.data)
		if err != nil {
			return err
		}
		if c.generation == last {
			cur = append(cur, prof)
		} else {
			before = append(before, prof)
		}
	}
	if err := writeMerged(path, cur); err != nil {
		return err
	}
	if len(before) > 0 {
		return writeMerged(strings.TrimSuffix(path, ".cpu.pb.gz")+".before-restart.cpu.pb.gz", before)
	}
	return nil
}

func writeMerged(path string, profs []*profile.Profile) error {
	merged, err := profile.Merge(profs)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := merged.Write(f); err != nil { // gzipped protobuf
		f.Close()
		return err
	}
	return f.Close()
}
