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

// Package childproc runs the programs the end-to-end harnesses start as
// child processes (control-plane components, the operator under test,
// Kueue): output to a log file, killed when the harness dies, stopped
// gracefully or killed, readiness by an HTTP probe. It also holds the free
// port finder and the log tail they share.
package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec is what to run and where its output goes.
type Spec struct {
	// Name identifies the process in errors ("kube-apiserver", "operator a").
	Name string
	Bin  string
	Args []string
	// Env is added to the harness's own environment.
	Env []string
	// LogPath receives stdout and stderr. It is truncated unless AppendLog
	// (a restarted process keeps its predecessors' output).
	LogPath   string
	AppendLog bool
	// Header, when not empty, is written to the log before the start.
	Header string
	// ProcessGroup gives the child its own process group and sends every
	// signal to the whole group.
	ProcessGroup bool
}

// Process is one start of a Spec.
type Process struct {
	spec    Spec
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed once the process has exited and its log is closed
	err     error         // Wait's result, valid once done is closed
}

// Start starts spec.Bin. The child is killed (SIGKILL) if the harness dies.
func Start(spec Spec) (*Process, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if spec.AppendLog {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(spec.LogPath, flags, 0o644)
	if err != nil {
		return nil, err
	}
	if spec.Header != "" {
		fmt.Fprint(f, spec.Header)
	}
	cmd := exec.Command(spec.Bin, spec.Args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: spec.ProcessGroup, Pdeathsig: syscall.SIGKILL}
	p := &Process{spec: spec, cmd: cmd, done: make(chan struct{})}
	p.started = time.Now()
	if err := startOnSpawnerThread(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Bin, err)
	}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pdeathsig fires when the OS *thread* that forked the child exits, not the
// process. Go may end a thread (a goroutine exiting while locked to it), so
// children are forked from one goroutine that stays locked to its thread
// for the life of the process.
var (
	spawnerOnce sync.Once
	spawnerCh   chan spawnRequest
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func startOnSpawnerThread(cmd *exec.Cmd) error {
	spawnerOnce.Do(func() {
		spawnerCh = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for req := range spawnerCh {
				req.done <- req.cmd.Start()
			}
		}()
	})
	req := spawnRequest{cmd: cmd, done: make(chan error, 1)}
	spawnerCh <- req
	return <-req.done
}

// Name is Spec.Name.
func (p *Process) Name() string { return p.spec.Name }

// LogPath is Spec.LogPath.
func (p *Process) LogPath() string { return p.spec.LogPath }

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Started is when the process was started.
func (p *Process) Started() time.Time { return p.started }

// Done is closed once the process has exited and its log file is closed.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the exit error (nil for status 0); nil while running.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// State is the exit state (CPU times, status); nil while running.
func (p *Process) State() *os.ProcessState {
	if !p.Exited() {
		return nil
	}
	return p.cmd.ProcessState
}

// Signal sends sig to the process (to its group with Spec.ProcessGroup);
// os.ErrProcessDone once it has exited.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return os.ErrProcessDone
	}
	if p.spec.ProcessGroup {
		if err := syscall.Kill(-p.cmd.Process.Pid, sig); err == nil {
			return nil
		}
	}
	return p.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM and waits; after grace it sends SIGKILL and reports
// that it had to.
func (p *Process) Stop(grace time.Duration) (killed bool) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return false
	case <-time.After(grace):
		p.Kill()
		return true
	}
}

// StopAll sends SIGTERM to every process, waits for them, and kills all
// that are still running once grace has passed.
func StopAll(procs []*Process, grace time.Duration) {
	for _, p := range procs {
		_ = p.Signal(syscall.SIGTERM)
	}
	deadline := time.After(grace)
	for _, p := range procs {
		select {
		case <-p.done:
		case <-deadline:
			for _, q := range procs {
				_ = q.Signal(syscall.SIGKILL)
			}
			for _, q := range procs {
				<-q.done
			}
			return
		}
	}
}

// Tail is the last n lines of the process's log.
func (p *Process) Tail(n int) string { return Tail(p.spec.LogPath, n) }

// Tail returns the last n lines of the file at path, or why it cannot be read.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	return LastLines(strings.TrimRight(string(data), "\n"), n)
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
