package cluster

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestScratchEtcd(t *testing.T) {
	dir := t.TempDir()
	c := &Cluster{opts: Options{Logf: t.Logf}, workDir: dir, binDir: os.Getenv("BIN")}
	var err error
	if c.pki, err = newPKI(dir + "/pki"); err != nil {
		t.Fatal(err)
	}
	p, _ := freePorts(3)
	c.ports = ports{etcdClient: p[0], etcdPeer: p[1], etcdMetrics: p[2]}
	os.MkdirAll(c.logDir(), 0o755)
	b := time.Now()
	if err := c.start("etcd", c.etcdArgs(), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.waitFor(context.Background(), 10*time.Second, "etcd", c.etcdHealthy); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd healthy in %s", time.Since(b))
	// early-exit detection
	p2, err := startProcess("etcd2", c.bin("etcd"), c.etcdArgs(), c.logDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.procs = append(c.procs, p2)
	err = c.waitFor(context.Background(), 10*time.Second, "never", func(context.Context) (bool, error) { return false, nil })
	t.Logf("early exit err: %v", err)
	b = time.Now()
	c.stopProcesses()
	t.Logf("stopped in %s", time.Since(b))
	_, err = resolveBinDir("")
	t.Logf("resolveBinDir: %v", err)
}
