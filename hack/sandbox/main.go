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

// Command sandbox is the `make dev` sandbox: it starts a local control plane
// with fake GPU nodes (package harness/cluster), applies the project's CRDs,
// optionally runs a command (e.g. the operator) against it, and keeps
// everything running until SIGINT/SIGTERM.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/seed-d8a409e9/training-operator/harness/cluster"
)

func main() {
	var (
		nodes      = flag.Int("nodes", 4, "number of fake GPU nodes")
		gpus       = flag.Int("gpus-per-node", 8, "nvidia.com/gpu capacity of each node")
		crdDir     = flag.String("crds", "config/crd/bases", "directory of CRD YAMLs to apply (every *.yaml); empty to skip")
		workDir    = flag.String("workdir", ".dev", "work directory (kubeconfig, certificates, etcd data, logs); wiped on start")
		run        = flag.String("run", "", "optional command line to start once the cluster is ready (run with sh -c, KUBECONFIG set)")
		schedulers = flag.String("scheduler-names", "volcano,scheduler-plugins-scheduler", "extra kube-scheduler profiles, comma-separated")
		gates      = flag.String("feature-gates", "", "extra --feature-gates for kube-apiserver, kube-controller-manager and kube-scheduler")
		runtimeCfg = flag.String("runtime-config", "", "extra --runtime-config for kube-apiserver")
		binDir     = flag.String("bin-dir", "", "directory with the control-plane binaries (default: $KUBEBUILDER_ASSETS or hack/controlplane.sh --print-dir)")
	)
	flag.Parse()
	log.SetFlags(log.Ltime)
	log.SetPrefix("[sandbox] ")

	if err := sandbox(*nodes, *gpus, *crdDir, *workDir, *run, *schedulers, *gates, *runtimeCfg, *binDir); err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}

func sandbox(nodes, gpus int, crdDir, workDir, run, schedulers, gates, runtimeCfg, binDir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	abs, err := filepath.Abs(workDir)
	if err != nil {
		return err
	}
	if err := freshWorkDir(abs); err != nil {
		return err
	}

	begin := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{
		BinDir:         binDir,
		WorkDir:        abs,
		Nodes:          nodes,
		GPUsPerNode:    gpus,
		SchedulerNames: splitList(schedulers),
		FeatureGates:   gates,
		RuntimeConfig:  runtimeCfg,
		Logf:           log.Printf,
	})
	if err != nil {
		return err
	}
	defer func() {
		log.Printf("stopping the cluster")
		if err := c.Stop(); err != nil {
			log.Printf("stop: %v", err)
		}
		_ = os.Remove(pidFile(abs))
	}()

	if crdDir != "" {
		cfg := c.RESTConfig()
		cfg.QPS, cfg.Burst = 50, 100
		n, err := applyCRDs(ctx, cfg, crdDir)
		if err != nil {
			return fmt.Errorf("apply CRDs from %s: %w", crdDir, err)
		}
		log.Printf("applied %d CRD(s) from %s", n, crdDir)
	}

	log.Printf("sandbox ready in %s: %d fake GPU node(s), logs in %s", time.Since(begin).Round(10*time.Millisecond), nodes, filepath.Join(abs, "logs"))
	fmt.Printf("\n  export KUBECONFIG=%s\n  kubectl get nodes\n\n", c.KubeconfigPath())

	var child *exec.Cmd
	childPgid := 0
	childDone := make(chan error, 1)
	if run != "" {
		child = exec.Command("/bin/sh", "-c", run)
		child.Env = append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath())
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		child.Stdin = nil
		child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := child.Start(); err != nil {
			return fmt.Errorf("--run %q: %w", run, err)
		}
		childPgid = child.Process.Pid
		log.Printf("started --run command (pid %d): %s", child.Process.Pid, run)
		go func() { childDone <- child.Wait() }()
	}

	log.Printf("press Ctrl-C to stop")
	for {
		select {
		case <-ctx.Done():
			log.Printf("signal received, shutting down")
			if child != nil {
				stopChild(child, childDone)
			} else if childPgid != 0 {
				// The --run command is gone; end whatever it left behind.
				_ = syscall.Kill(-childPgid, syscall.SIGTERM)
			}
			return nil
		case err := <-childDone:
			if err != nil {
				log.Printf("--run command exited: %v; the cluster keeps running (Ctrl-C to stop)", err)
			} else {
				log.Printf("--run command exited successfully; the cluster keeps running (Ctrl-C to stop)")
			}
			child = nil
		}
	}
}

// freshWorkDir empties dir (state of an earlier run) unless another sandbox
// is still using it, and records our pid there.
func freshWorkDir(dir string) error {
	if err := checkWorkDir(dir); err != nil {
		return err
	}
	if data, err := os.ReadFile(pidFile(dir)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == nil {
			if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, []byte("sandbox")) {
				return fmt.Errorf("another sandbox (pid %d) is using %s; stop it first", pid, dir)
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove stale work dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

// checkWorkDir refuses to wipe a directory that does not look like a sandbox
// work directory (or that holds the working directory), so that a mistyped
// --workdir cannot remove unrelated files.
func checkWorkDir(dir string) error {
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(dir, cwd); err == nil && !strings.HasPrefix(rel, "..") {
			return fmt.Errorf("--workdir %s contains the current directory; refusing to wipe it", dir)
		}
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, marker := range []string{"sandbox.pid", "kubeconfig", "pki", "logs"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("--workdir %s is not empty and does not look like a sandbox work dir; refusing to wipe it", dir)
}

func pidFile(dir string) string { return filepath.Join(dir, "sandbox.pid") }

// stopChild terminates the --run process group (SIGKILL after 10 s).
func stopChild(child *exec.Cmd, done <-chan error) {
	log.Printf("stopping --run command (pid %d)", child.Process.Pid)
	_ = syscall.Kill(-child.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		log.Printf("--run command did not exit after 10s, killing it")
		_ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// applyCRDs creates or updates every CRD found in the *.yaml files of dir
// and waits until all are Established.
func applyCRDs(ctx context.Context, cfg *rest.Config, dir string) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return 0, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		log.Printf("no *.yaml in %s, no CRDs applied", dir)
		return 0, nil
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	var names []string
	for _, f := range files {
		docs, err := readCRDs(f)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		for _, crd := range docs {
			existing, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
			case err == nil:
				crd.ResourceVersion = existing.ResourceVersion
				_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
			}
			if err != nil {
				return 0, fmt.Errorf("%s: CRD %s: %w", f, crd.Name, err)
			}
			names = append(names, crd.Name)
		}
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			crd, err := crds.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return 0, fmt.Errorf("CRD %s not Established: %w", name, err)
		}
	}
	return len(names), nil
}

// readCRDs decodes the CustomResourceDefinition documents of a multi-document
// YAML file; other kinds and empty documents are skipped.
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		if meta.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(doc, crd); err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
