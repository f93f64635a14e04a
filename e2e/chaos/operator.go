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
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Lease timing of the failover scenario, written into the operator's
// Configuration (leaderElection.*): short, so that a takeover is quick, yet
// with room for renewals on a loaded two-core machine.
const (
	leaseDuration = 8 * time.Second
	renewDeadline = 6 * time.Second
	retryPeriod   = 1 * time.Second
	leaseName     = "1ca428e5.training-operator.kubeflow.org" // the v1 default
	leaseNS       = "default"
)

// operator is one operator replica (a slot): the same ports, config and
// log file across its restarts, so a restart looks like a pod restart.
type operator struct {
	name        string
	bin         string
	args        []string
	healthAddr  string
	metricsAddr string
	webhookAddr string // where this replica's webhook server listens
	logPath     string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	killing bool // the harness killed it on purpose
	starts  int
	// unexpected collects exits the harness did not cause.
	unexpected []string
}

// newOperator prepares slot name in dir: ports, webhook certificate
// directory and a Configuration whose webhook clientURL is the shared
// forwarder, so every replica serves the same webhook address.
func newOperator(bin, dir, name, kubeconfig, webhookURL string, leaderElect bool) (*operator, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	o := &operator{
		name: name, bin: bin,
		metricsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		healthAddr:  fmt.Sprintf("127.0.0.1:%d", ports[1]),
		webhookAddr: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		logPath:     filepath.Join(dir, "operator-"+name+".log"),
	}
	cfgPath := filepath.Join(dir, "operator-"+name+".yaml")
	cfg := fmt.Sprintf(`apiVersion: config.training-operator.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: %t
  resourceNamespace: %s
  leaseDuration: %s
  renewDeadline: %s
  retryPeriod: %s
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %q
  certManagement: self-signed
  clientURL: %s
`, leaderElect, leaseNS, leaseDuration, renewDeadline, retryPeriod, ports[2],
		filepath.Join(dir, "certs-"+name), webhookURL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	o.args = []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + cfgPath,
		"--metrics-bind-address=" + o.metricsAddr,
		"--health-probe-bind-address=" + o.healthAddr,
		fmt.Sprintf("--leader-elect=%t", leaderElect),
	}
	return o, nil
}

// start launches the process; it does not wait for readiness.
func (o *operator) start() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, err := os.OpenFile(o.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	o.starts++
	fmt.Fprintf(f, "\n##### chaos: start #%d of operator %s at %s\n", o.starts, o.name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(o.bin, o.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "MY_POD_NAMESPACE="+leaseNS)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start operator %s: %w", o.name, err)
	}
	done := make(chan struct{})
	o.cmd, o.done, o.killing = cmd, done, false
	go func() {
		err := cmd.Wait()
		f.Close()
		o.mu.Lock()
		unexpected := !o.killing
		if unexpected {
			o.unexpected = append(o.unexpected, fmt.Sprintf("operator %s (pid %d) exited by itself at %s: %v; log tail:\n%s",
				o.name, cmd.Process.Pid, time.Now().Format(time.TimeOnly), err, tail(o.logPath, 5)))
		}
		o.mu.Unlock()
		close(done)
		if unexpected {
			// Like a Deployment's kubelet: start it again, so the scenario
			// goes on; the exit itself is reported as a violation.
			time.Sleep(time.Second)
			o.mu.Lock()
			again := !o.killing && o.cmd == cmd
			o.mu.Unlock()
			if again {
				_ = o.start()
			}
		}
	}()
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (o *operator) kill() {
	o.mu.Lock()
	cmd, done := o.cmd, o.done
	o.killing = true
	o.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// stop ends the process gracefully (SIGTERM, SIGKILL after 10 s).
func (o *operator) stop() {
	o.mu.Lock()
	cmd, done := o.cmd, o.done
	o.killing = true
	o.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

func (o *operator) running() bool {
	o.mu.Lock()
	done := o.done
	o.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// exitedUnexpectedly returns and clears the exits the harness did not cause.
func (o *operator) exitedUnexpectedly() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.unexpected
	o.unexpected = nil
	return out
}

// waitReady polls /readyz until 200.
func (o *operator) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if code, _ := httpGet(ctx, "http://"+o.healthAddr+"/readyz"); code == http.StatusOK {
			return nil
		}
		if !o.running() {
			return fmt.Errorf("operator %s exited; log tail:\n%s", o.name, tail(o.logPath, 20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("operator %s not ready on %s/readyz: %w", o.name, o.healthAddr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// isLeader reads controller-runtime's leader_election_master_status gauge.
func (o *operator) isLeader(ctx context.Context) bool {
	code, body := httpGet(ctx, "http://"+o.metricsAddr+"/metrics")
	if code != http.StatusOK {
		return false
	}
	for l := range strings.Lines(body) {
		if strings.HasPrefix(l, "leader_election_master_status{") && strings.HasSuffix(strings.TrimSpace(l), " 1") {
			return true
		}
	}
	return false
}

// reconciles sums controller_runtime_reconcile_total over all controllers
// (-1 when the metrics endpoint does not answer).
func (o *operator) reconciles(ctx context.Context) float64 {
	code, body := httpGet(ctx, "http://"+o.metricsAddr+"/metrics")
	if code != http.StatusOK {
		return -1
	}
	var sum float64
	for l := range strings.Lines(body) {
		if !strings.HasPrefix(l, "controller_runtime_reconcile_total{") {
			continue
		}
		f := strings.Fields(l)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// firstReconcile waits until this process has reconciled something and
// returns when it was seen (zero on timeout or exit).
func (o *operator) firstReconcile(ctx context.Context, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil && o.running() {
		if o.reconciles(ctx) > 0 {
			return time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

func httpGet(ctx context.Context, url string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePorts returns n distinct free ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
