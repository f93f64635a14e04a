package testjobs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// The children Kubeflow Training Operator v1.9.4 makes for a job, built
// from its source, for upgrade tests: an operator taking over a running v1
// cluster finds exactly these (there is no v1 binary to run here).

// KindOf is the job's kind, whatever its Go type.
func KindOf(job client.Object) string { return asJob(job).KindInfo().Kind }

// V1Owner is the controller reference v1 puts on every child of job.
func V1Owner(job client.Object) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: kubeflowv1.GroupVersion.String(), Kind: KindOf(job), Name: job.GetName(), UID: job.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

// v1Replica is one pod (and, but for MPI, Service) v1 makes.
type v1Replica struct {
	name   string
	rtype  kubeflowv1.ReplicaType
	index  int // -1: no replica-index label (MPI's launcher)
	master bool
}

// v1Replicas lists a job's replicas with v1's names and job-role rule.
func v1Replicas(job client.Object) []v1Replica {
	kind, specs := KindOf(job), ReplicaSpecs(job)
	has := func(rt kubeflowv1.ReplicaType) bool { _, ok := specs[rt]; return ok }
	types := make([]string, 0, len(specs))
	for rt := range specs {
		types = append(types, string(rt))
	}
	sort.Strings(types)
	var out []v1Replica
	for _, t := range types {
		rt := kubeflowv1.ReplicaType(t)
		n := 1
		if r := specs[rt].Replicas; r != nil {
			n = int(*r)
		}
		for i := 0; i < n; i++ {
			r := v1Replica{name: fmt.Sprintf("%s-%s-%d", job.GetName(), strings.ToLower(t), i), rtype: rt, index: i}
			switch kind {
			case kubeflowv1.PyTorchJobKind:
				r.master = rt == "Master" || (rt == "Worker" && i == 0 && !has("Master"))
			case kubeflowv1.TFJobKind:
				r.master = rt == "Chief" || rt == "Master" || (rt == "Worker" && i == 0 && !has("Chief") && !has("Master"))
			case kubeflowv1.XGBoostJobKind, kubeflowv1.PaddleJobKind:
				r.master = rt == "Master"
			case kubeflowv1.JAXJobKind:
				r.master = i == 0
			case kubeflowv1.MPIJobKind:
				if rt == kubeflowv1.MPIJobReplicaTypeLauncher {
					r = v1Replica{name: job.GetName() + "-launcher", rtype: rt, index: -1, master: true}
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// v1Labels are v1's labels of a replica's pod; Services have them without job-role.
func v1Labels(job client.Object, r v1Replica, pod bool) map[string]string {
	l := map[string]string{
		kubeflowv1.OperatorNameLabel: strings.ToLower(KindOf(job)) + "-controller",
		kubeflowv1.JobNameLabel:      job.GetName(),
		kubeflowv1.ReplicaTypeLabel:  strings.ToLower(string(r.rtype)),
	}
	if r.index >= 0 {
		l[kubeflowv1.ReplicaIndexLabel] = strconv.Itoa(r.index)
	}
	if pod && r.master {
		l[kubeflowv1.JobRoleLabel] = kubeflowv1.JobRoleMaster
	}
	return l
}

// V1Pods are the pods v1 made for job, which must carry its UID (create
// the job first, as read back after defaulting). Each is its replica template
// with v1's name, labels, owner and restart policy; the framework wiring
// (env, init containers) does not matter to an operator taking over.
func V1Pods(job client.Object) []*corev1.Pod {
	specs := ReplicaSpecs(job)
	var out []*corev1.Pod
	for _, r := range v1Replicas(job) {
		spec := specs[r.rtype]
		tmpl := spec.Template.DeepCopy()
		labels := tmpl.Labels
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range v1Labels(job, r, true) {
			labels[k] = v
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: job.GetNamespace(), Labels: labels,
				Annotations: tmpl.Annotations, OwnerReferences: V1Owner(job)},
			Spec: tmpl.Spec,
		}
		pod.Spec.RestartPolicy = corev1.RestartPolicy(spec.RestartPolicy)
		if spec.RestartPolicy == kubeflowv1.RestartPolicyExitCode {
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		}
		out = append(out, pod)
	}
	return out
}

// V1Services are the headless Services v1 made for job (none for MPI):
// every named port of the default container.
func V1Services(job client.Object) []*corev1.Service {
	info := asJob(job).KindInfo()
	if info.Kind == kubeflowv1.MPIJobKind {
		return nil
	}
	specs := ReplicaSpecs(job)
	var out []*corev1.Service
	for _, r := range v1Replicas(job) {
		labels := v1Labels(job, r, false)
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: job.GetNamespace(), Labels: labels, OwnerReferences: V1Owner(job)},
			Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: v1Labels(job, r, false)},
		}
		for _, c := range specs[r.rtype].Template.Spec.Containers {
			if c.Name != info.DefaultContainerName {
				continue
			}
			for _, p := range c.Ports {
				if p.Name != "" {
					svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort})
				}
			}
		}
		out = append(out, svc)
	}
	return out
}

// V1MPIChildren are the launcher's ServiceAccount, Role and RoleBinding and
// the ConfigMap <job>-config as v1 made them: the only label is app=<job>.
func V1MPIChildren(job *kubeflowv1.MPIJob) []client.Object {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: map[string]string{"app": job.Name}, OwnerReferences: V1Owner(job)}
	}
	launcher := job.Name + "-launcher"
	workers := 0
	if w := job.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeWorker]; w != nil && w.Replicas != nil {
		workers = int(*w.Replicas)
	}
	var names []string
	var hostfile strings.Builder
	for i := 0; i < workers; i++ {
		names = append(names, fmt.Sprintf("%s-worker-%d", job.Name, i))
		fmt.Fprintf(&hostfile, "%s-worker-%d slots=1\n", job.Name, i)
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(launcher)},
		&corev1.ConfigMap{ObjectMeta: meta(job.Name + "-config"), Data: map[string]string{
			"kubexec.sh":        "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME} -- /bin/sh -c \"$*\"",
			"hostfile":          hostfile.String(),
			"discover_hosts.sh": "#!/bin/sh",
		}},
		&rbacv1.Role{ObjectMeta: meta(launcher), Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}},
			{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods/exec"}, ResourceNames: names},
		}},
		&rbacv1.RoleBinding{ObjectMeta: meta(launcher),
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: launcher, Namespace: job.Namespace}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: launcher}},
	}
}

// V1HPA is the HorizontalPodAutoscaler v1 made for an elastic PyTorchJob
// with metrics: named after the job, no labels.
func V1HPA(job *kubeflowv1.PyTorchJob) *autoscalingv2.HorizontalPodAutoscaler {
	ep := job.Spec.ElasticPolicy
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name, Namespace: job.Namespace, OwnerReferences: V1Owner(job)},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: kubeflowv1.PyTorchJobKind, Name: job.Name, APIVersion: kubeflowv1.GroupVersion.String()},
			MinReplicas:    ep.MinReplicas,
			MaxReplicas:    *ep.MaxReplicas,
			Metrics:        ep.Metrics,
		},
	}
}
