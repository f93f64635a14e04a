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
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/operatorproc"
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

	mu   sync.Mutex
	proc *childproc.Process
	// done is closed once the current process has exited and its exit was
	// judged expected or not (so a kill returns only after that).
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
	ports, err := childproc.FreePorts(3)
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
	cfg := operatorproc.Local(ports[2], filepath.Join(dir, "certs-"+name), webhookURL)
	cfg.LeaderElection.LeaderElect = leaderElect
	cfg.LeaderElection.ResourceNamespace = leaseNS
	cfg.LeaderElection.LeaseDuration = &metav1.Duration{Duration: leaseDuration}
	cfg.LeaderElection.RenewDeadline = &metav1.Duration{Duration: renewDeadline}
	cfg.LeaderElection.RetryPeriod = &metav1.Duration{Duration: retryPeriod}
	if err := operatorproc.Write(cfgPath, cfg); err != nil {
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
	o.starts++
	p, err := childproc.Start(childproc.Spec{
		Name:      "operator " + o.name,
		Bin:       o.bin,
		Args:      o.args,
		Env:       []string{"MY_POD_NAMESPACE=" + leaseNS},
		LogPath:   o.logPath,
		AppendLog: true,
		Header:    fmt.Sprintf("\n##### chaos: start #%d of operator %s at %s\n", o.starts, o.name, time.Now().Format(time.RFC3339Nano)),
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	o.proc, o.done, o.killing = p, done, false
	go func() {
		<-p.Done()
		o.mu.Lock()
		unexpected := !o.killing
		if unexpected {
			o.unexpected = append(o.unexpected, fmt.Sprintf("operator %s (pid %d) exited by itself at %s: %v; log tail:\n%s",
				o.name, p.Pid(), time.Now().Format(time.TimeOnly), p.Err(), p.Tail(5)))
		}
		o.mu.Unlock()
		close(done)
		if unexpected {
			// Like a Deployment's kubelet: start it again, so the scenario
			// goes on; the exit itself is reported as a violation.
			time.Sleep(time.Second)
			o.mu.Lock()
			again := !o.killing && o.proc == p
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
	p, done := o.proc, o.done
	o.killing = true
	o.mu.Unlock()
	if p == nil {
		return
	}
	p.Kill()
	<-done
}

// stop ends the process gracefully (SIGTERM, SIGKILL after 10 s).
func (o *operator) stop() {
	o.mu.Lock()
	p, done := o.proc, o.done
	o.killing = true
	o.mu.Unlock()
	if p == nil {
		return
	}
	p.Stop(10 * time.Second)
	<-done
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

// waitReady polls the current process's /readyz until 200.
func (o *operator) waitReady(ctx context.Context, timeout time.Duration) error {
	o.mu.Lock()
	p := o.proc
	o.mu.Unlock()
	return p.WaitReady(ctx, "http://"+o.healthAddr+"/readyz", timeout, 100*time.Millisecond)
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
