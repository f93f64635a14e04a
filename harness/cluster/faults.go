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

package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Fault injection for chaos tests (e2e/chaos). Components are restarted on
// the same ports, certificates and data directory, so clients only see a
// connection outage.

// RestartAPIServer kills kube-apiserver with SIGKILL (no graceful shutdown,
// as in a crash), starts it again with the same flags and returns once its
// /readyz answers. The previous log is kept as kube-apiserver.<n>.log.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// StopAPIServer kills kube-apiserver with SIGKILL and leaves it down:
// clients get connection refused until StartAPIServer. Its log is kept as
// kube-apiserver.<n>.log.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return fmt.Errorf("cluster is stopped")
	}
	i := c.procIndex("kube-apiserver")
	if i < 0 || c.procs[i].Exited() {
		return fmt.Errorf("kube-apiserver is not running")
	}
	old := c.procs[i]
	old.Kill()
	c.restarts++
	// startProcess truncates the log: keep the killed instance's log.
	_ = os.Rename(old.LogPath(), strings.TrimSuffix(old.LogPath(), ".log")+fmt.Sprintf(".%d.log", c.restarts))
	return nil
}

// StartAPIServer starts the kube-apiserver StopAPIServer stopped, with the
// same flags, and returns once its /readyz answers.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return fmt.Errorf("cluster is stopped")
	}
	i := c.procIndex("kube-apiserver")
	if i < 0 || !c.procs[i].Exited() {
		c.mu.Unlock()
		return fmt.Errorf("kube-apiserver is not stopped")
	}
	p, err := startProcess("kube-apiserver", c.bin("kube-apiserver"), c.apiserverArgs(), c.logDir(), nil)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	c.procs[i] = p
	c.mu.Unlock()

	cs, err := kubernetes.NewForConfig(c.clientConfig())
	if err != nil {
		return err
	}
	// Only the apiserver's own exit fails the wait: other components may
	// die from the outage (kube-scheduler exits when it finds its cache
	// corrupted by a lost bind), which Supervise repairs.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		if p.Exited() {
			return fmt.Errorf("waiting for restarted kube-apiserver: %w", exitError(p))
		}
		if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for restarted kube-apiserver /readyz: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// PauseEtcd stops etcd with SIGSTOP: it keeps its sockets but answers
// nothing, like a hung disk or a partitioned member. Call ResumeEtcd after.
func (c *Cluster) PauseEtcd() error { return c.signalComponent("etcd", syscall.SIGSTOP) }

// ResumeEtcd continues an etcd stopped by PauseEtcd (SIGCONT).
func (c *Cluster) ResumeEtcd() error { return c.signalComponent("etcd", syscall.SIGCONT) }

func (c *Cluster) signalComponent(name string, sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.procIndex(name)
	if i < 0 || c.procs[i].Exited() {
		return fmt.Errorf("%s is not running", name)
	}
	_ = c.procs[i].Signal(sig)
	return nil
}

// procIndex finds a component in c.procs; call with c.mu held.
func (c *Cluster) procIndex(name string) int {
	for i, p := range c.procs {
		if p.Name() == name {
			return i
		}
	}
	return -1
}

// Supervise restarts kube-controller-manager, kube-scheduler and kwok when one
// exits, as the kubelet restarts a crashed static pod, until ctx ends or the
// cluster stops. Chaos tests use it: an apiserver outage must not leave the
// cluster without a scheduler (kube-scheduler exits with status 1 when a
// bind lost in the outage leaves its cache "corrupted"). Each restart is reported through Options.Logf with the exit reason.
func (c *Cluster) Supervise(ctx context.Context) {
	restartable := map[string]func() ([]string, []string){
		"kube-controller-manager": func() ([]string, []string) { return c.kcmArgs(), nil },
		"kube-scheduler":          func() ([]string, []string) { return c.schedulerArgs(), nil },
		"kwok":                    func() ([]string, []string) { return c.kwokArgs(), []string{"HOME=" + c.kwokHome()} },
	}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			c.mu.Lock()
			if c.stopped {
				c.mu.Unlock()
				return
			}
			for i, p := range c.procs {
				argsOf, ok := restartable[p.Name()]
				if !ok || !p.Exited() {
					continue
				}
				c.restarts++
				c.opts.Logf("cluster: %s exited (%v), restarting it; last lines:\n%s", p.Name(), p.Err(), p.Tail(10))
				_ = os.Rename(p.LogPath(), strings.TrimSuffix(p.LogPath(), ".log")+fmt.Sprintf(".%d.log", c.restarts))
				args, env := argsOf()
				np, err := startProcess(p.Name(), c.bin(p.Name()), args, c.logDir(), env)
				if err != nil {
					c.opts.Logf("cluster: restarting %s: %v", p.Name(), err)
					continue
				}
				c.procs[i] = np
			}
			c.mu.Unlock()
		}
	}()
}
