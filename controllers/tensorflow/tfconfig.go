package tensorflow

import (
	"encoding/json"
	"fmt"
	"strings"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// EnvTFConfig is the env var carrying the cluster spec.
const EnvTFConfig = "TF_CONFIG"

// taskSpec is this pod's place in the cluster.
type taskSpec struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// clusterSpec maps a lower-case replica type to its replicas' addresses.
// encoding/json sorts map keys, which is what v1's output relies on.
type clusterSpec map[string][]string

// tfConfigJSON is the full TF_CONFIG. Field order is the JSON order.
type tfConfigJSON struct {
	Cluster clusterSpec `json:"cluster"`
	Task    taskSpec    `json:"task"`
	// Environment "cloud" keeps tf.contrib.learn (TF <= 1.3) out of local mode.
	Environment string `json:"environment"`
}

// sparseClusterSpec is the enableDynamicWorker form: a worker knows only
// itself (keyed by index) and the parameter servers.
type sparseClusterSpec struct {
	Worker map[int32]string `json:"worker"`
	PS     []string         `json:"ps"`
}

// sparseTFConfigJSON has no environment key, as in v1.
type sparseTFConfigJSON struct {
	Cluster sparseClusterSpec `json:"cluster"`
	Task    taskSpec          `json:"task"`
}

// distributedTypes are the types v1 counts to decide whether a job is distributed.
var distributedTypes = []kubeflowv1.ReplicaType{
	kubeflowv1.TFJobReplicaTypeChief,
	kubeflowv1.TFJobReplicaTypeEval,
	kubeflowv1.TFJobReplicaTypeMaster,
	kubeflowv1.TFJobReplicaTypePS,
	kubeflowv1.TFJobReplicaTypeWorker,
}

// isDistributed: a job whose replicas over the five known types (nil
// replicas counting as 1) are not exactly one gets TF_CONFIG.
func isDistributed(j *kubeflowv1.TFJob) bool {
	n := 0
	for _, rt := range distributedTypes {
		if spec, ok := j.Spec.TFReplicaSpecs[rt]; ok && spec != nil {
			n += int(spec.ReplicaCount())
		}
	}
	return n != 1
}

// replicaPort is the tfjob-port of the replica type's tensorflow container,
// else 2222 (v1 looks only at a container named tensorflow).
func replicaPort(spec *kubeflowv1.ReplicaSpec) int32 {
	if p, ok := spec.ContainerPort(kubeflowv1.TFJobDefaultContainerName, kubeflowv1.TFJobDefaultPortName); ok {
		return p
	}
	return kubeflowv1.TFJobDefaultPort
}

// buildClusterSpec lists every replica type of the spec (evaluator and any
// unknown type included) as "<job>-<rt>-<i>.<ns>.svc[.<domain>]:<port>".
func buildClusterSpec(j *kubeflowv1.TFJob, domain string) clusterSpec {
	cs := clusterSpec{}
	for rt, spec := range j.Spec.TFReplicaSpecs {
		if spec == nil {
			continue
		}
		port := replicaPort(spec)
		n := int(spec.ReplicaCount())
		addrs := make([]string, 0, n)
		for i := 0; i < n; i++ {
			host := kubeflowv1.ReplicaName(j.Name, rt, i) + "." + j.Namespace + ".svc"
			if domain != "" {
				host += "." + domain
			}
			addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
		}
		cs[strings.ToLower(string(rt))] = addrs
	}
	return cs
}

// tfConfig renders TF_CONFIG for one replica, byte-compatible with v1.
func tfConfig(j *kubeflowv1.TFJob, rt kubeflowv1.ReplicaType, index int, domain string) (string, error) {
	cluster := buildClusterSpec(j, domain)
	task := taskSpec{Type: strings.ToLower(string(rt)), Index: index}
	var out any = tfConfigJSON{Cluster: cluster, Task: task, Environment: "cloud"}
	if j.Spec.EnableDynamicWorker {
		out = sparseTFConfigJSON{Cluster: sparse(cluster, task), Task: task}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("rendering %s for %s: %w", EnvTFConfig, kubeflowv1.ReplicaName(j.Name, rt, index), err)
	}
	return string(b), nil
}

// sparse narrows the cluster for enableDynamicWorker: a worker sees every PS
// and only itself; a PS sees only itself and no workers; other types see neither.
// v1 wrote "ps":null for a worker of a job without PS; we write [] so TF's
// ClusterSpec can parse it.
func sparse(cluster clusterSpec, task taskSpec) sparseClusterSpec {
	s := sparseClusterSpec{Worker: map[int32]string{}, PS: []string{}}
	ps := strings.ToLower(string(kubeflowv1.TFJobReplicaTypePS))
	worker := strings.ToLower(string(kubeflowv1.TFJobReplicaTypeWorker))
	own := func() (string, bool) {
		addrs := cluster[task.Type]
		if task.Index < 0 || task.Index >= len(addrs) {
			return "", false
		}
		return addrs[task.Index], true
	}
	switch task.Type {
	case ps:
		if a, ok := own(); ok {
			s.PS = append(s.PS, a)
		}
	case worker:
		s.PS = append(s.PS, cluster[ps]...)
		if a, ok := own(); ok {
			s.Worker[int32(task.Index)] = a
		}
	}
	return s
}
