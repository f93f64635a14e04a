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
	"bufio"
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
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// defaultOperatorArgs are appended to the fixed v1 flags unless
// --operator-args is given. {config} is a Configuration written by the bench
// that serves the admission webhooks by URL with self-signed certificates
// (as make dev does), so job creation goes through the webhooks.
const defaultOperatorArgs = "--config={config}"

// operator is the operator binary under test, running as a child process.
type operator struct {
	cmd         *exec.Cmd
	args        []string
	logFile     *os.File
	metricsAddr string
	healthAddr  string
	pprofAddr   string
	done        chan struct{}
}

// startOperator runs bin against the proxy. It always passes the v1 flags
// --kubeconfig, --metrics-bind-address, --health-probe-bind-address and
// --leader-elect=false, then extraArgs with the placeholders {kubeconfig},
// {metrics}, {health}, {webhook-port}, {config}, {dir} and {pprof} expanded. It
// returns once /readyz answers 200.
func startOperator(ctx context.Context, bin, extraArgs, dir, apiURL string, caData []byte) (*operator, error) {
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "operator.kubeconfig")
	if err := writeKubeconfig(kubeconfig, apiURL, caData); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "operator-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(operatorConfig(ports[2], filepath.Join(dir, "webhook-certs"))), 0o644); err != nil {
		return nil, err
	}
	o := &operator{
		metricsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		healthAddr:  fmt.Sprintf("127.0.0.1:%d", ports[1]),
		pprofAddr:   fmt.Sprintf("127.0.0.1:%d", ports[3]),
		done:        make(chan struct{}),
	}
	expand := strings.NewReplacer("{kubeconfig}", kubeconfig, "{metrics}", o.metricsAddr, "{health}", o.healthAddr,
		"{webhook-port}", strconv.Itoa(ports[2]), "{config}", cfgPath, "{dir}", dir,
		"{pprof}", o.pprofAddr)
	o.args = []string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=" + o.metricsAddr,
		"--health-probe-bind-address=" + o.healthAddr, "--leader-elect=false"}
	for _, a := range strings.Fields(extraArgs) {
		o.args = append(o.args, expand.Replace(a))
	}
	if o.logFile, err = os.Create(filepath.Join(dir, "operator.log")); err != nil {
		return nil, err
	}
	o.cmd = exec.Command(bin, o.args...)
	o.cmd.Stdout, o.cmd.Stderr = o.logFile, o.logFile
	o.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "MY_POD_NAMESPACE=default")
	o.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := o.cmd.Start(); err != nil {
		o.logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = o.cmd.Wait(); close(o.done) }()
	if err := o.waitReady(ctx, 2*time.Minute); err != nil {
		o.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, o.logFile.Name())
	}
	return o, nil
}

// operatorConfig is the Configuration for this repository's operator.
func operatorConfig(webhookPort int, certDir string) string {
	return fmt.Sprintf(`apiVersion: config.training-operator.io/v1alpha1
kind: Configuration
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %q
  certManagement: self-signed
  clientURL: https://127.0.0.1:%d
`, webhookPort, certDir, webhookPort)
}

func writeKubeconfig(path, server string, caData []byte) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "operator", Namespace: "default"}
	kc.CurrentContext = "bench"
	return clientcmd.WriteToFile(*kc, path)
}

// saveHeapProfile fetches the operator's heap profile (after a GC) from
// its pprof endpoint into path.
func (o *operator) saveHeapProfile(ctx context.Context, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	code, err := httpGet(ctx, "http://"+o.pprofAddr+"/debug/pprof/heap?gc=1", f)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("HTTP %d", code)
	}
	return err
}

func (o *operator) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		select {
		case <-o.done:
			return fmt.Errorf("operator exited: %v", o.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("operator not ready on http://%s/readyz: %w", o.healthAddr, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		if code, _ := httpGet(ctx, "http://"+o.healthAddr+"/readyz", io.Discard); code == http.StatusOK {
			return nil
		}
	}
}

// Stop sends SIGTERM and SIGKILL after 10 s.
func (o *operator) Stop() {
	if o.cmd.Process == nil {
		return
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(10 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.done
	}
	o.logFile.Close()
}

// pause stops the operator process (SIGSTOP) so it takes no CPU while the
// raw client measures the control plane alone; resume continues it, and its
// informers catch up by relisting what they missed.
func (o *operator) pause() error { return o.cmd.Process.Signal(syscall.SIGSTOP) }

func (o *operator) resume() error { return o.cmd.Process.Signal(syscall.SIGCONT) }

// Exited reports whether the operator process has ended.
func (o *operator) Exited() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// cpuSeconds is the operator's CPU time so far.
func (o *operator) cpuSeconds() (float64, error) { return processCPUSeconds(o.cmd.Process.Pid) }

// memory returns VmRSS and VmHWM in MiB.
func (o *operator) memory() (rss, hwm float64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", o.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return 0, 0, err
		}
		if k == "VmRSS" {
			rss = kb / 1024
		} else {
			hwm = kb / 1024
		}
	}
	return rss, hwm, sc.Err()
}

// resetPeakRSS resets VmHWM to the current RSS (Linux >= 4.0); false if not allowed.
func (o *operator) resetPeakRSS() bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", o.cmd.Process.Pid), []byte("5"), 0) == nil
}

// operatorMetrics are the counters of the operator's /metrics the bench uses.
type operatorMetrics struct {
	ok             bool
	requests       float64
	throttleSum    float64
	reconcileTotal map[string]float64 // by result
	// sums and counts of the reconcile-time and workqueue-wait histograms
	reconcileSum, reconcileCount float64
	queueSum, queueCount         float64
}

func (o *operator) scrape(ctx context.Context) operatorMetrics {
	var b strings.Builder
	if code, err := httpGet(ctx, "http://"+o.metricsAddr+"/metrics", &b); err != nil || code != http.StatusOK {
		return operatorMetrics{}
	}
	m := operatorMetrics{ok: true, reconcileTotal: map[string]float64{}}
	for _, s := range parseMetrics(b.String()) {
		switch s.name {
		case "rest_client_requests_total":
			m.requests += s.value
		case "rest_client_rate_limiter_duration_seconds_sum":
			m.throttleSum += s.value
		case "controller_runtime_reconcile_total":
			m.reconcileTotal[s.labels["result"]] += s.value
		case "controller_runtime_reconcile_time_seconds_sum":
			m.reconcileSum += s.value
		case "controller_runtime_reconcile_time_seconds_count":
			m.reconcileCount += s.value
		case "workqueue_queue_duration_seconds_sum":
			m.queueSum += s.value
		case "workqueue_queue_duration_seconds_count":
			m.queueCount += s.value
		}
	}
	return m
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseMetrics parses the Prometheus text format, skipping what it does not
// understand (comments, timestamps are ignored).
func parseMetrics(text string) []sample {
	var out []sample
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		var rest string
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			s.name = line[:i]
			var ok bool
			if rest, ok = parseLabels(line[i+1:], s.labels); !ok {
				continue
			}
		} else if i >= 0 {
			s.name, rest = line[:i], line[i:]
		} else {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// parseLabels parses `k="v",k2="v2"}` into labels and returns what follows "}".
func parseLabels(s string, labels map[string]string) (string, bool) {
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return s[1:], true
		}
		eq := strings.Index(s, `="`)
		if eq < 0 {
			return "", false
		}
		key := s[:eq]
		s = s[eq+2:]
		var v strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(s[i])
				}
				continue
			}
			v.WriteByte(s[i])
		}
		if i == len(s) {
			return "", false
		}
		labels[key] = v.String()
		s = s[i+1:]
	}
}

func httpGet(ctx context.Context, url string, w io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return resp.StatusCode, err
}

func freePorts(n int) ([]int, error) {
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
