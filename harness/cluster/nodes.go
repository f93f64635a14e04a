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
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Topology labels of the fake GPU nodes, for Kueue's topology-aware
// scheduling: two nodes to a block, a rack each.
const (
	TopologyBlockLabel = "cloud.provider.com/topology-block"
	TopologyRackLabel  = "cloud.provider.com/topology-rack"
	// NodesPerBlock is how many consecutive GPU nodes share a block.
	NodesPerBlock = 2
)

// fakeGPUNode returns a Node that kwok manages, with GPU capacity, the
// labels the NVIDIA GPU operator would set, and its block and rack (node
// index i).
func fakeGPUNode(name string, i, gpus int) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("512Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		GPUResource:                     *resource.NewQuantity(int64(gpus), resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl": "0",
				"kwok.x-k8s.io/node":           "fake",
			},
			Labels: map[string]string{
				"type":                   "kwok",
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"nvidia.com/gpu.present": "true",
				"nvidia.com/gpu.product": GPUProduct,
				"nvidia.com/gpu.count":   strconv.Itoa(gpus),
				TopologyBlockLabel:       fmt.Sprintf("block-%d", i/NodesPerBlock),
				TopologyRackLabel:        fmt.Sprintf("rack-%d", i),
			},
		},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
				{Type: corev1.NodeHostName, Address: name},
			},
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
		},
	}
}

// createNodes creates n fake GPU nodes with the next free indices and
// returns their names.
func (c *Cluster) createNodes(ctx context.Context, cs kubernetes.Interface, n int) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, n)
	for len(names) < n {
		i := c.nextNode
		name := fmt.Sprintf("%s%d", NodeNamePrefix, i)
		c.nextNode++
		want := fakeGPUNode(name, i, c.opts.GPUsPerNode)
		got, err := cs.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			if ignoreAlreadyExists(err) == nil {
				continue // taken (e.g. created by a test): use the next index
			}
			return names, fmt.Errorf("create node %s: %w", name, err)
		}
		// The apiserver keeps the status given on create; make sure of it,
		// since kwok's node-initialize keeps whatever capacity it finds.
		if _, ok := got.Status.Capacity[GPUResource]; !ok {
			got.Status = want.Status
			if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				return names, fmt.Errorf("set status of node %s: %w", name, err)
			}
		}
		names = append(names, name)
	}
	return names, nil
}

// waitNodesReady waits until every named node is Ready and the
// not-ready NoSchedule taint (added on creation) is gone.
func (c *Cluster) waitNodesReady(ctx context.Context, cs kubernetes.Interface, names []string) error {
	begin := time.Now()
	var pending []string
	err := c.waitFor(ctx, 2*time.Minute, "nodes Ready", func(ctx context.Context) (bool, error) {
		pending = pending[:0]
		for _, name := range names {
			node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !nodeSchedulable(node) {
				pending = append(pending, name)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%w (not ready: %s)", err, strings.Join(pending, ", "))
	}
	c.opts.Logf("cluster: %d node(s) Ready in %s", len(names), since(begin))
	return nil
}

func nodeSchedulable(node *corev1.Node) bool {
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return false
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	return true
}

const (
	// KubeletLostAnnotation on a pod keeps KWOK from finishing its
	// deletion, as if its kubelet were gone with its node: once deleted, the
	// pod stays terminating until it is force-deleted.
	KubeletLostAnnotation = "lost.stage.kwok.x-k8s.io/kubelet"
	// nodeLostAnnotation keeps KWOK from initialising or heartbeating a node.
	nodeLostAnnotation = "lost.stage.kwok.x-k8s.io/node"
)

// SetNodeLost takes a node's kubelet away (lost) or gives it back. A lost
// node reports Ready=Unknown, as the node lifecycle controller marks a node
// whose kubelet stopped posting status, and KWOK leaves it so; given back,
// KWOK makes it Ready again, and SetNodeLost returns once it is schedulable.
// The pods on a lost node keep running as far as the API shows; mark them
// with KubeletLostAnnotation for their deletions to hang as well.
func (c *Cluster) SetNodeLost(ctx context.Context, name string, lost bool) error {
	cs, err := kubernetes.NewForConfig(c.clientConfig())
	if err != nil {
		return err
	}
	if !lost {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, nodeLostAnnotation)
		if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
		return c.waitNodesReady(ctx, cs, []string{name})
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, nodeLostAnnotation)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return err
	}
	now := metav1.Now()
	status, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
		Message: "Kubelet stopped posting node status (the test took it away).", LastHeartbeatTime: now, LastTransitionTime: now,
	}}}})
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Nodes().PatchStatus(ctx, name, status)
	return err
}
