package util

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
)

// CaptureOperatorLogs sends controller-runtime's logs (an in-process
// operator's) to a buffer whose last tailLines lines are shown only when the
// test fails, so passing runs stay quiet.
func CaptureOperatorLogs(t *testing.T, tailLines int) *LogBuffer {
	t.Helper()
	logs := &LogBuffer{}
	// controller-runtime takes only the first logger set in a process, so
	// the one sink writes to the buffer of the test running now.
	setLoggerOnce.Do(func() { ctrl.SetLogger(zap.New(zap.WriteTo(&currentLogs), zap.UseDevMode(true))) })
	currentLogs.set(logs)
	t.Cleanup(func() {
		currentLogs.set(nil)
		if t.Failed() {
			t.Logf("operator log (tail):\n%s", childproc.LastLines(logs.String(), tailLines))
		}
	})
	return logs
}

var (
	setLoggerOnce sync.Once
	currentLogs   logTarget
)

// logTarget writes to the current test's LogBuffer (nowhere between tests).
type logTarget struct {
	mu  sync.Mutex
	buf *LogBuffer
}

func (l *logTarget) set(b *LogBuffer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = b
}

func (l *logTarget) Write(p []byte) (int, error) {
	l.mu.Lock()
	b := l.buf
	l.mu.Unlock()
	if b == nil {
		return len(p), nil
	}
	return b.Write(p)
}

// StartTestCluster starts a local control plane (etcd, kube-apiserver,
// scheduler, controller-manager, KWOK) for one test, stopped when the test
// ends, with the operator's CRDs and those in extraCRDDirs installed.
func StartTestCluster(t *testing.T, opts cluster.Options, extraCRDDirs ...string) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a local control plane")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	env, err := cluster.Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
	})
	admin := env.RESTConfig()
	admin.QPS, admin.Burst = 500, 1000
	for _, dir := range append([]string{filepath.Join(RepoRoot(), "config", "crd", "bases")}, extraCRDDirs...) {
		if err := InstallCRDs(ctx, admin, dir); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// LogBuffer is a concurrency-safe log sink.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
