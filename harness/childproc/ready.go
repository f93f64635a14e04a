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

package childproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// probeTimeout bounds one readiness request; a loaded two-core machine can
// be slow to answer, and an exit cancels the request anyway.
const probeTimeout = 10 * time.Second

// WaitReady polls url (a /readyz) every poll until it answers 200. It fails
// with the tail of the log as soon as the process exits, and when timeout
// passes or ctx ends.
func (p *Process) WaitReady(ctx context.Context, url string, timeout, poll time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		if p.Exited() {
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.spec.Name, p.err, p.spec.LogPath, p.Tail(20))
		}
		var code int
		if code, last = p.probe(ctx, url); code == http.StatusOK {
			return nil
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			return fmt.Errorf("%s not ready on %s (last answer: %s): %w (log: %s)", p.spec.Name, url, last, ctx.Err(), p.spec.LogPath)
		case <-time.After(poll):
		}
	}
}

// probe returns the status code of a GET of url (0 on error) and the answer
// in words, giving up when the process exits.
func (p *Process) probe(ctx context.Context, url string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, fmt.Sprintf("HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}
