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
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func sh(t *testing.T, script string, mod func(*Spec)) *Process {
	t.Helper()
	spec := Spec{Name: "sh", Bin: "/bin/sh", Args: []string{"-c", script}, LogPath: filepath.Join(t.TempDir(), "sh.log")}
	if mod != nil {
		mod(&spec)
	}
	p, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// fifo returns a named pipe the child writes a line to once it got where
// the test waits for, and a func reading that line.
func fifo(t *testing.T) (string, func() string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() string {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		return strings.TrimSpace(line)
	}
}

func TestLogHeaderEnvAndTail(t *testing.T) {
	p := sh(t, `echo one; echo "$GREETING"; echo three`, func(s *Spec) {
		s.Header = "# header\n"
		s.Env = []string{"GREETING=two"}
	})
	<-p.Done()
	if err := p.Err(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	data, err := os.ReadFile(p.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "# header\none\ntwo\nthree\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	if got, want := p.Tail(2), "two\nthree"; got != want {
		t.Errorf("Tail(2) = %q, want %q", got, want)
	}
	if got := p.State(); got == nil || got.ExitCode() != 0 {
		t.Errorf("State() = %v, want exit code 0", got)
	}
}

func TestAppendLogKeepsEarlierStarts(t *testing.T) {
	log := filepath.Join(t.TempDir(), "op.log")
	for _, word := range []string{"first", "second"} {
		p := sh(t, "echo "+word, func(s *Spec) { s.LogPath, s.AppendLog = log, true })
		<-p.Done()
	}
	if got, want := Tail(log, 10), "first\nsecond"; got != want {
		t.Errorf("appended log = %q, want %q", got, want)
	}
	p := sh(t, "echo third", func(s *Spec) { s.LogPath = log })
	<-p.Done()
	if got, want := Tail(log, 10), "third"; got != want {
		t.Errorf("truncated log = %q, want %q", got, want)
	}
}

func TestStopIsGracefulWhenTheProcessObeysSIGTERM(t *testing.T) {
	p := sh(t, "exec sleep 600", nil)
	if killed := p.Stop(time.Minute); killed {
		t.Error("Stop killed a process that exits on SIGTERM")
	}
	if !p.Exited() || p.Err() == nil {
		t.Errorf("after Stop: exited %v, err %v; want exited by a signal", p.Exited(), p.Err())
	}
	if err := p.Signal(syscall.SIGTERM); err != os.ErrProcessDone {
		t.Errorf("Signal after exit = %v, want os.ErrProcessDone", err)
	}
}

func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	ready, wait := fifo(t)
	p := sh(t, `trap "" TERM; echo ok > "$READY"; exec sleep 600`, func(s *Spec) { s.Env = []string{"READY=" + ready} })
	wait()
	if killed := p.Stop(10 * time.Millisecond); !killed {
		t.Error("Stop did not report the SIGKILL")
	}
	if !p.Exited() {
		t.Error("the process outlived Stop")
	}
}

func TestProcessGroupGetsTheSignal(t *testing.T) {
	ready, wait := fifo(t)
	// The shell ignores SIGTERM and waits on a child of its own: only a
	// signal to the whole group ends that child, and with it the wait.
	p := sh(t, `sleep 600 & trap "" TERM; echo ok > "$READY"; wait`, func(s *Spec) {
		s.Env, s.ProcessGroup = []string{"READY=" + ready}, true
	})
	wait()
	if killed := p.Stop(time.Minute); killed {
		t.Error("SIGTERM did not reach the process group")
	}
}

func TestStopAll(t *testing.T) {
	ready, wait := fifo(t)
	stubborn := sh(t, `trap "" TERM; echo ok > "$READY"; exec sleep 600`, func(s *Spec) { s.Env = []string{"READY=" + ready} })
	wait()
	procs := []*Process{sh(t, "exec sleep 600", nil), stubborn, sh(t, "exec sleep 600", nil)}
	StopAll(procs, 10*time.Millisecond)
	for i, p := range procs {
		if !p.Exited() {
			t.Errorf("process %d outlived StopAll", i)
		}
	}
}

func TestWaitReady(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "webhook certificates not ready", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	p := sh(t, "exec sleep 600", nil)
	if err := p.WaitReady(context.Background(), srv.URL, time.Minute, time.Millisecond); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("readyz was called %d times, want 3", n)
	}
}

func TestWaitReadyFailsWhenTheProcessExits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "never", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	p := sh(t, "echo 'bad flag --foo'; exit 3", nil)
	err := p.WaitReady(context.Background(), srv.URL, time.Hour, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "bad flag --foo") {
		t.Errorf("WaitReady = %v, want the exit status and the log tail", err)
	}
}

func TestWaitReadyGivesUpWithTheLastAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "informers not synced", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	p := sh(t, "exec sleep 600", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.WaitReady(ctx, srv.URL, time.Hour, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("WaitReady with a cancelled context = %v", err)
	}
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: %d is zero or repeated", ports, p)
		}
		seen[p] = true
	}
}

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := LastLines(c.in, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := Tail(filepath.Join(t.TempDir(), "missing.log"), 3); !strings.Contains(got, "cannot read") {
		t.Errorf("Tail of a missing file = %q", got)
	}
}
