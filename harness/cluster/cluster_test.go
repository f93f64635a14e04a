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
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

func TestCluster(t *testing.T) {
	if os.Getenv("SKIP_CLUSTER_TESTS") == "1" {
		t.Skip("SKIP_CLUSTER_TESTS=1: not starting a local control plane")
	}
	// Parallel subtests run after this function returns: cancel in Cleanup.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)

	begin := time.Now()
	c, err := Start(ctx, Options{
		SchedulerNames: []string{"volcano", "scheduler-plugins-scheduler"},
		// KWOK reads its options from the stages' file: the pods below run
		// and finish only if it accepts them.
		KwokPodParallelism: 8,
		Logf:               t.Logf,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("Start took %s", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		workDir := c.WorkDir()
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := c.Stop(); err != nil { // idempotent
			t.Errorf("second Stop: %v", err)
		}
		if _, err := os.Stat(workDir); !os.IsNotExist(err) {
			t.Errorf("work dir %s still exists after Stop (err %v)", workDir, err)
		}
	})

	if _, err := os.Stat(c.KubeconfigPath()); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("nodes", func(t *testing.T) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 2 {
			t.Fatalf("got %d nodes, want 2", len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if !nodeSchedulable(&n) {
				t.Errorf("node %s not Ready/schedulable: %+v taints %v", n.Name, n.Status.Conditions, n.Spec.Taints)
			}
			for _, list := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
				if q := list[GPUResource]; q.Value() != 8 {
					t.Errorf("node %s: nvidia.com/gpu = %s, want 8", n.Name, q.String())
				}
				if q := list[corev1.ResourceEphemeralStorage]; q.Cmp(resource.MustParse("1Ti")) != 0 {
					t.Errorf("node %s: ephemeral-storage = %s, want 1Ti", n.Name, q.String())
				}
			}
			for k, v := range map[string]string{
				"nvidia.com/gpu.present": "true",
				"nvidia.com/gpu.product": GPUProduct,
				"nvidia.com/gpu.count":   "8",
				"type":                   "kwok",
				"kubernetes.io/hostname": n.Name,
			} {
				if n.Labels[k] != v {
					t.Errorf("node %s: label %s=%q, want %q", n.Name, k, n.Labels[k], v)
				}
			}
		}
	})

	// Not parallel: it stops KWOK for a moment.
	t.Run("stale-delete-spares-successor", func(t *testing.T) {
		testStaleDeleteSparesSuccessor(ctx, t, c, cs)
	})

	t.Run("gpu-pod-lifecycle", func(t *testing.T) {
		t.Parallel()
		running := createPod(ctx, t, cs, "gpu-running", "", nil)
		succeeded := createPod(ctx, t, cs, "gpu-exit-0", "", map[string]string{ExitCodeAnnotation: "0"})
		failed := createPod(ctx, t, cs, "gpu-exit-3", "", map[string]string{ExitCodeAnnotation: "3", ExitDelayAnnotation: "500ms"})

		p := waitPodPhase(ctx, t, cs, running, corev1.PodRunning)
		if p.Spec.NodeName == "" {
			t.Errorf("running pod has no nodeName")
		}
		p = waitPodPhase(ctx, t, cs, succeeded, corev1.PodSucceeded)
		if p.Spec.NodeName == "" {
			t.Errorf("succeeded pod has no nodeName")
		}
		p = waitPodPhase(ctx, t, cs, failed, corev1.PodFailed)
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			t.Fatalf("failed pod: no terminated container status: %+v", p.Status.ContainerStatuses)
		}
		if code := p.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != 3 {
			t.Errorf("failed pod: exit code %d, want 3", code)
		}
	})

	t.Run("scheduler-profile-volcano", func(t *testing.T) {
		t.Parallel()
		name := createPod(ctx, t, cs, "volcano-pod", "volcano", nil)
		p := waitPodPhase(ctx, t, cs, name, corev1.PodRunning)
		if p.Spec.NodeName == "" {
			t.Errorf("volcano pod has no nodeName")
		}
	})

	t.Run("garbage-collection", func(t *testing.T) {
		t.Parallel()
		cms := cs.CoreV1().ConfigMaps("default")
		owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "gc-dependent",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := cms.Get(ctx, "gc-dependent", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("dependent ConfigMap not garbage-collected: %v", err)
		}
		t.Logf("dependent collected %s after owner deletion", time.Since(begin).Round(time.Millisecond))
	})

	t.Run("create-nodes", func(t *testing.T) {
		t.Parallel()
		if err := c.CreateNodes(ctx, 1); err != nil {
			t.Fatal(err)
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeNamePrefix+"2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !nodeSchedulable(n) {
			t.Errorf("new node not Ready")
		}
	})
}

// testStaleDeleteSparesSuccessor: KWOK plays its stages from a queue of
// watch events and, when it lags, plays a deleted pod's stages after a
// successor has taken the name. A kubelet deletes and patches by UID;
// hack/kwok-uid.patch makes KWOK do the same. Here the old pod's graceful
// delete (which KWOK's pod-delete stage answers) reaches KWOK together
// with its removal and the successor's creation, so KWOK's delete is
// stale: it must fail, not kill the successor. Unpatched, the successor
// was deleted (make chaos: one replica's replacements deleted 21 times in
// a minute; a whole-job restart nobody asked for in the integration suite).
// KWOK cancels a queued stage when it sees the pod's removal, so the race
// is not always provoked: tries until KWOK's log shows the stale delete.
func testStaleDeleteSparesSuccessor(ctx context.Context, t *testing.T, c *Cluster, cs kubernetes.Interface) {
	pods := cs.CoreV1().Pods("default")
	for try := 1; try <= 5; try++ {
		name := fmt.Sprintf("reused-%d", try)
		waitPodPhase(ctx, t, cs, createPod(ctx, t, cs, name, "", nil), corev1.PodRunning)
		logStart := kwokLogSize(t, c)
		if err := c.signalComponent("kwok", syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		resume := func() {
			if err := c.signalComponent("kwok", syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
		if err := pods.Delete(ctx, name, *metav1.NewDeleteOptions(30)); err != nil {
			resume()
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, name, *metav1.NewDeleteOptions(0)); err != nil {
			resume()
			t.Fatal(err)
		}
		createPod(ctx, t, cs, name, "", nil)
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Spec.NodeName != "", nil
		})
		resume()
		if err != nil {
			t.Fatalf("successor %s not scheduled: %v", name, err)
		}
		key := `"pod":"default/` + name + `"`
		var successor *corev1.Pod
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			successor = p
			return err == nil && p.Status.Phase == corev1.PodRunning, nil
		})
		if err != nil {
			for _, l := range kwokLogSince(t, c, logStart) {
				if strings.Contains(l, key) {
					t.Log(l)
				}
			}
			t.Fatalf("successor %s not Running: %v (%+v)", name, err, successor)
		}
		// KWOK's answer to the old pod's delete, seen in its log: done
		// ("Delete pod") or refused by the UID precondition. The successor's
		// Running came from events KWOK received after the old pod's.
		var stale string
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			for _, l := range kwokLogSince(t, c, logStart) {
				if strings.Contains(l, key) && (strings.Contains(l, `"msg":"Delete pod"`) ||
					(strings.Contains(l, `"stage":"pod-delete"`) && strings.Contains(l, "the UID in the precondition"))) {
					stale = l
					return true, nil
				}
			}
			return false, nil
		})
		if stale == "" {
			t.Logf("try %d: KWOK dropped the old pod's delete before playing it; trying again", try)
			continue
		}
		t.Logf("try %d: KWOK's stale delete: %s", try, stale)
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			t.Fatalf("the successor %s is gone after KWOK's stale delete: %v", name, err)
		case p.UID != successor.UID || p.DeletionTimestamp != nil:
			t.Fatalf("the successor %s was deleted by KWOK's stale delete (uid %s, now %s, deletionTimestamp %v)",
				name, successor.UID, p.UID, p.DeletionTimestamp)
		}
		return
	}
	t.Fatal("KWOK never played the old pod's delete in 5 tries: the race this test needs was not provoked")
}

// kwokLogSize is the length of KWOK's log so far.
func kwokLogSize(t *testing.T, c *Cluster) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(c.logDir(), "kwok.log"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// kwokLogSince is KWOK's log lines written after offset.
func kwokLogSince(t *testing.T, c *Cluster, offset int64) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.logDir(), "kwok.log"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) < offset {
		return nil
	}
	return strings.Split(string(b[offset:]), "\n")
}

// createPod creates a pod that requests one GPU.
func createPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, schedulerName string, annotations map[string]string) string {
	t.Helper()
	gpu := corev1.ResourceList{GPUResource: resource.MustParse("1")}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			SchedulerName:                 schedulerName,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "example.com/trainer:latest",
				Resources: corev1.ResourceRequirements{Requests: gpu, Limits: gpu},
			}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	return name
}

// waitPodPhase waits until the pod reaches phase and returns it.
func waitPodPhase(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	begin := time.Now()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		pod = p
		return p.Status.Phase == phase, nil
	})
	if err != nil {
		desc := "not found"
		if pod != nil {
			desc = fmt.Sprintf("phase %q, node %q, conditions %+v", pod.Status.Phase, pod.Spec.NodeName, pod.Status.Conditions)
		}
		t.Fatalf("pod %s did not reach %s: %v (%s)", name, phase, err, desc)
	}
	t.Logf("pod %s %s after %s on %s", name, phase, time.Since(begin).Round(time.Millisecond), pod.Spec.NodeName)
	return pod
}

func TestKwokConfig(t *testing.T) {
	if got := kwokConfig(0); got != kwokStages {
		t.Errorf("no options: the stages alone, got %d bytes more", len(got)-len(kwokStages))
	}
	got := kwokConfig(32)
	if !strings.HasPrefix(got, kwokStages) || !strings.Contains(got, "\nkind: KwokConfiguration\n") ||
		!strings.HasSuffix(got, "\n  podPlayStageParallelism: 32\n") || strings.Contains(got, "Parallelism: 0") {
		t.Errorf("with options:\n%s", got[len(kwokStages):])
	}
}
