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
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/harness/childproc"
	"github.com/seed-d8a409e9/training-operator/harness/operatorproc"
)

// defaultOperatorArgs are appended to the fixed v1 flags unless
// --operator-args is given. {config} is a Configuration written by the bench
// that serves the admission webhooks by URL with self-signed certificates
// (as make dev does), so job creation goes through the webhooks.
const defaultOperatorArgs = "--config={config}"

// operator is the operator binary under test, running as a child process.
// restart replaces the process with a new one (same binary, same arguments,
// same ports); the accessors always use the current process.
type operator struct {
	bin  string
	args []string
	// baseArgs are the arguments it was started with; restartWith adds to them.
	baseArgs    []string
	env         []string
	logPath     string
	metricsAddr string
	healthAddr  string
	pprofAddr   string

	mu   sync.Mutex
	proc *process
	// exitedCPU is the CPU time of the processes that have exited.
	exitedCPU float64
}

// process is one start of the operator binary.
type process struct {
	*childproc.Process
	counted bool // its CPU time is in exitedCPU
	// generation counts the starts: 1 for the first process, 2 after one
	// restart, ... Its metrics and CPU counters start from zero.
	generation int
}

// startOperator runs bin against the apiserver at apiURL with the
// credentials of auth (direct, or the counting proxy's URL with none). It
// always passes the v1 flags --kubeconfig, --metrics-bind-address,
// --health-probe-bind-address and --leader-elect=false, then extraArgs with
// the placeholders {kubeconfig}, {metrics}, {health}, {webhook-port},
// {config}, {dir} and {pprof} expanded. It returns once /readyz answers 200.
func startOperator(ctx context.Context, bin, extraArgs, dir string, api *rest.Config) (*operator, error) {
	ports, err := childproc.FreePorts(4)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "operator.kubeconfig")
	if err := writeKubeconfig(kubeconfig, api); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "operator-config.yaml")
	if err := operatorproc.Write(cfgPath, operatorConfig(ports[2], filepath.Join(dir, "webhook-certs"))); err != nil {
		return nil, err
	}
	o := &operator{
		bin:         bin,
		logPath:     filepath.Join(dir, "operator.log"),
		metricsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		healthAddr:  fmt.Sprintf("127.0.0.1:%d", ports[1]),
		pprofAddr:   fmt.Sprintf("127.0.0.1:%d", ports[3]),
		env:         []string{"KUBECONFIG=" + kubeconfig, "MY_POD_NAMESPACE=default"},
	}
	expand := strings.NewReplacer("{kubeconfig}", kubeconfig, "{metrics}", o.metricsAddr, "{health}", o.healthAddr,
		"{webhook-port}", strconv.Itoa(ports[2]), "{config}", cfgPath, "{dir}", dir,
		"{pprof}", o.pprofAddr)
	o.args = []string{"--kubeconfig=" + kubeconfig, "--metrics-bind-address=" + o.metricsAddr,
		"--health-probe-bind-address=" + o.healthAddr, "--leader-elect=false"}
	for _, a := range strings.Fields(extraArgs) {
		o.args = append(o.args, expand.Replace(a))
	}
	o.baseArgs = slices.Clone(o.args)
	if err := o.spawn(); err != nil {
		return nil, err
	}
	if err := o.waitReady(ctx, 2*time.Minute, 200*time.Millisecond); err != nil {
		o.Stop()
		return nil, err
	}
	return o, nil
}

// spawn starts a new process; its output is appended to the log.
func (o *operator) spawn() error {
	o.mu.Lock()
	gen := 1
	if o.proc != nil {
		gen = o.proc.generation + 1
	}
	o.mu.Unlock()
	var header string
	if gen > 1 {
		header = fmt.Sprintf("---- bench: operator start %d at %s ----\n", gen, time.Now().Format(time.RFC3339Nano))
	}
	cp, err := childproc.Start(childproc.Spec{
		Name: "operator", Bin: o.bin, Args: o.args, Env: o.env,
		LogPath: o.logPath, AppendLog: true, Header: header,
	})
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.proc = &process{Process: cp, generation: gen}
	o.mu.Unlock()
	return nil
}

// current is the running (or last) process.
func (o *operator) current() *process {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.proc
}

// generation is the number of the current process's start (1, 2, ...).
func (o *operator) generation() int { return o.current().generation }

// pid is the current process's id.
func (o *operator) pid() int { return o.current().Pid() }

// restart stops the operator (SIGTERM, waiting for it to exit) and starts
// the same binary with the same arguments. It returns when the new process
// was started and how long after that /readyz first answered 200 (polled
// every 50 ms).
func (o *operator) restart(ctx context.Context) (started time.Time, ready time.Duration, err error) {
	o.Stop()
	if err := o.spawn(); err != nil {
		return time.Time{}, 0, err
	}
	p := o.current()
	if err := o.waitReady(ctx, 2*time.Minute, 50*time.Millisecond); err != nil {
		return p.Started(), 0, err
	}
	return p.Started(), time.Since(p.Started()), nil
}

// restartWith restarts the operator with its starting arguments plus extra
// (none: back to the starting arguments) and waits until it is ready.
func (o *operator) restartWith(ctx context.Context, extra ...string) error {
	o.args = append(slices.Clone(o.baseArgs), extra...)
	_, _, err := o.restart(ctx)
	return err
}

// operatorConfig is the Configuration for this repository's operator.
func operatorConfig(webhookPort int, certDir string) *configv1alpha1.Configuration {
	cfg := operatorproc.Local(webhookPort, certDir, "")
	// Out of cluster there is no service-account namespace to take the
	// Lease's from; used only with --leader-elect.
	cfg.LeaderElection.ResourceNamespace = "default"
	return cfg
}

// writeKubeconfig writes a kubeconfig for cfg's server, CA and client
// certificate (none for the proxy, which adds the credentials itself).
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
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

// waitReady polls the current process's /readyz until it answers 200.
func (o *operator) waitReady(ctx context.Context, timeout, poll time.Duration) error {
	return o.current().WaitReady(ctx, "http://"+o.healthAddr+"/readyz", timeout, poll)
}

// Stop sends SIGTERM and SIGKILL after 10 s.
func (o *operator) Stop() {
	p := o.current()
	if p == nil {
		return
	}
	p.Stop(10 * time.Second)
	if st := p.State(); st != nil {
		o.mu.Lock()
		if !p.counted {
			p.counted = true
			o.exitedCPU += (st.UserTime() + st.SystemTime()).Seconds()
		}
		o.mu.Unlock()
	}
}

// pause stops the operator process (SIGSTOP) so it takes no CPU while the
// raw client measures the control plane alone; resume continues it, and its
// informers catch up by relisting what they missed.
func (o *operator) pause() error { return o.current().Signal(syscall.SIGSTOP) }

func (o *operator) resume() error { return o.current().Signal(syscall.SIGCONT) }

// Exited reports whether the current operator process has ended.
func (o *operator) Exited() bool { return o.current().Exited() }

// cpuSeconds is the current process's CPU time so far.
func (o *operator) cpuSeconds() (float64, error) { return processCPUSeconds(o.pid()) }

// totalCPUSeconds is the CPU time of every process started so far.
func (o *operator) totalCPUSeconds() (float64, error) {
	cur, err := o.cpuSeconds()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.exitedCPU + cur, err
}

// memory returns VmRSS and VmHWM in MiB.
func (o *operator) memory() (rss, hwm float64, err error) {
	m, err := o.memoryStatus()
	return m.rss, m.hwm, err
}

// memStatus is the operator's memory from /proc/<pid>/status, in MiB: VmRSS,
// VmHWM, and VmRSS split into anonymous pages (Go heap, stacks, runtime)
// and file-backed ones (the binary's code and read-only data, which the
// kernel maps in 64 KiB around each page touched: shared and reclaimable).
type memStatus struct {
	rss, hwm, anon, file float64
}

func (o *operator) memoryStatus() (memStatus, error) {
	var m memStatus
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", o.pid()))
	if err != nil {
		return m, err
	}
	defer f.Close()
	fields := map[string]*float64{"VmRSS": &m.rss, "VmHWM": &m.hwm, "RssAnon": &m.anon, "RssFile": &m.file}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		dst, wanted := fields[k]
		if !ok || !wanted {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return m, err
		}
		*dst = kb / 1024
	}
	return m, sc.Err()
}

// resetPeakRSS resets VmHWM to the current RSS (Linux >= 4.0); false if not allowed.
func (o *operator) resetPeakRSS() bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", o.pid()), []byte("5"), 0) == nil
}

// operatorMetrics are the counters of the operator's /metrics the bench uses.
type operatorMetrics struct {
	ok       bool
	requests float64
	// byMethod is rest_client_requests_total by method and code (summed
	// over hosts).
	byMethod       map[methodCode]float64
	throttleSum    float64
	reconcileTotal map[string]float64 // by result
	// sums and counts of the reconcile-time and workqueue-wait histograms
	reconcileSum, reconcileCount float64
	queueSum, queueCount         float64
	// eventsWaiting is training_operator_events_waiting: Events recorded
	// and not yet written (our operator only).
	eventsWaiting float64
}

func (o *operator) scrape(ctx context.Context) operatorMetrics {
	var b strings.Builder
	if code, err := httpGet(ctx, "http://"+o.metricsAddr+"/metrics", &b); err != nil || code != http.StatusOK {
		return operatorMetrics{}
	}
	m := operatorMetrics{ok: true, reconcileTotal: map[string]float64{}, byMethod: map[methodCode]float64{}}
	for _, s := range parseMetrics(b.String()) {
		switch s.name {
		case "rest_client_requests_total":
			m.requests += s.value
			m.byMethod[methodCode{s.labels["method"], s.labels["code"]}] += s.value
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
		case "training_operator_events_waiting":
			m.eventsWaiting += s.value
		}
	}
	return m
}

// methodCode is one method and response code of rest_client_requests_total.
type methodCode struct{ method, code string }

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
	return httpGetTimeout(ctx, url, w, 10*time.Second)
}

func httpGetTimeout(ctx context.Context, url string, w io.Writer, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
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
