package mpi

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

var _ engine.ExtraChildren[*kubeflowv1.MPIJob] = (*Framework)(nil)

// ExtraTypes implements engine.ExtraChildren: the launcher's ConfigMap,
// ServiceAccount, Role and RoleBinding are watched, so drift is repaired. A
// suspended or finished job keeps them, as in v1: they hold no resources
// and go with the job by garbage collection.
func (*Framework) ExtraTypes() []engine.ExtraType {
	return []engine.ExtraType{
		{Object: &corev1.ConfigMap{}, KeepWhenInactive: true},
		{Object: &corev1.ServiceAccount{}, KeepWhenInactive: true},
		{Object: &rbacv1.Role{}, KeepWhenInactive: true},
		{Object: &rbacv1.RoleBinding{}, KeepWhenInactive: true},
	}
}

// DesiredChildren implements engine.ExtraChildren: the launcher's
// ServiceAccount, Role and RoleBinding and the ConfigMap <job>-config,
// which the engine makes before it creates pods. <job>-launcher must be
// the job's; a ServiceAccount the user named in the launcher template is
// used as it is, and created (owned by the job) when missing, as v1 does.
func (*Framework) DesiredChildren(j *kubeflowv1.MPIJob, pods []*corev1.Pod) []engine.DesiredChild {
	sa := launcherServiceAccountName(j)
	return []engine.DesiredChild{
		{Object: desiredServiceAccount(j, sa), UseExisting: sa != kubeflowv1.MPIJobLauncherName(j.Name)},
		{Object: desiredRole(j)},
		{Object: desiredRoleBinding(j, sa)},
		{Object: desiredConfigMap(j, runningWorkers(j, pods))},
	}
}

// launcherServiceAccountName is the launcher template's ServiceAccount, else <job>-launcher.
func launcherServiceAccountName(j *kubeflowv1.MPIJob) string {
	if spec := j.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeLauncher]; spec != nil && spec.Template.Spec.ServiceAccountName != "" {
		return spec.Template.Spec.ServiceAccountName
	}
	return kubeflowv1.MPIJobLauncherName(j.Name)
}

// childMeta is the metadata every child carries: v1's app label, the labels
// the operator's cache selects on, and the controller reference.
func childMeta(j *kubeflowv1.MPIJob, name string) metav1.ObjectMeta {
	labels := engine.JobLabels(ControllerName, j.Name)
	labels["app"] = j.Name
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: j.Namespace,
		Labels:    labels,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion:         kubeflowv1.GroupVersion.String(),
			Kind:               kubeflowv1.MPIJobKind,
			Name:               j.Name,
			UID:                j.UID,
			Controller:         ptr.To(true),
			BlockOwnerDeletion: ptr.To(true),
		}},
	}
}

// kubexecScript runs a command in a worker through kubectl exec, in
// spec.mainContainer when set.
func kubexecScript(j *kubeflowv1.MPIJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n%s/kubectl exec ${POD_NAME}", kubectlMountPath)
	if j.Spec.MainContainer != "" {
		fmt.Fprintf(&b, " --container %s", j.Spec.MainContainer)
	}
	b.WriteString(` -- /bin/sh -c "$*"`)
	return b.String()
}

func slotsPerWorker(j *kubeflowv1.MPIJob) int32 {
	if j.Spec.SlotsPerWorker != nil {
		return *j.Spec.SlotsPerWorker
	}
	return 1
}

func workerReplicas(j *kubeflowv1.MPIJob) int {
	spec := j.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeWorker]
	if spec == nil || spec.Replicas == nil {
		return 0
	}
	return int(*spec.Replicas)
}

// hostfile lists the launcher (when it has GPUs) and every worker in Open
// MPI's "<host> slots=<n>" form. Intel MPI and MPICH read the same file
// (their launchers take "host:n" too, but v1 always wrote this form).
func hostfile(j *kubeflowv1.MPIJob) string {
	slots := slotsPerWorker(j)
	var b strings.Builder
	if isGPULauncher(j) {
		fmt.Fprintf(&b, "%s slots=%d\n", kubeflowv1.MPIJobLauncherName(j.Name), slots)
	}
	for i := 0; i < workerReplicas(j); i++ {
		fmt.Fprintf(&b, "%s slots=%d\n", workerName(j.Name, i), slots)
	}
	return b.String()
}

// discoverHostsScript prints "<host>:<slots>" for the launcher (when it has
// GPUs) and each running worker, sorted by name (Horovod elastic reads it).
func discoverHostsScript(j *kubeflowv1.MPIJob, runningWorkers []string) string {
	slots := slotsPerWorker(j)
	names := append([]string(nil), runningWorkers...)
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("#!/bin/sh")
	if isGPULauncher(j) {
		fmt.Fprintf(&b, "\necho %s:%d\n", kubeflowv1.MPIJobLauncherName(j.Name), slots)
	}
	for _, n := range names {
		fmt.Fprintf(&b, "\necho %s:%d", n, slots)
	}
	return b.String()
}

// desiredConfigMap is <job>-config with kubexec.sh, hostfile and discover_hosts.sh.
func desiredConfigMap(j *kubeflowv1.MPIJob, runningWorkers []string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: childMeta(j, configMapName(j.Name)),
		Data: map[string]string{
			kubexecScriptName:       kubexecScript(j),
			hostfileName:            hostfile(j),
			discoverHostsScriptName: discoverHostsScript(j, runningWorkers),
		},
	}
}

// desiredRole lets the launcher see pods and exec into its own workers only.
// A job without workers gets no exec rule at all: an empty resourceNames
// list would grant exec into every pod of the namespace.
func desiredRole(j *kubeflowv1.MPIJob) *rbacv1.Role {
	role := &rbacv1.Role{
		ObjectMeta: childMeta(j, kubeflowv1.MPIJobLauncherName(j.Name)),
		Rules: []rbacv1.PolicyRule{{
			Verbs:     []string{"get", "list", "watch"},
			APIGroups: []string{""},
			Resources: []string{"pods"},
		}},
	}
	n := workerReplicas(j)
	if n == 0 {
		return role
	}
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		names = append(names, workerName(j.Name, i))
	}
	role.Rules = append(role.Rules, rbacv1.PolicyRule{
		Verbs:         []string{"create"},
		APIGroups:     []string{""},
		Resources:     []string{"pods/exec"},
		ResourceNames: names,
	})
	return role
}

// desiredRoleBinding binds the launcher Role to the launcher's ServiceAccount.
func desiredRoleBinding(j *kubeflowv1.MPIJob, serviceAccount string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: childMeta(j, kubeflowv1.MPIJobLauncherName(j.Name)),
		Subjects: []rbacv1.Subject{{
			Kind:      rbacv1.ServiceAccountKind,
			Name:      serviceAccount,
			Namespace: j.Namespace,
		}},
		RoleRef: rbacv1.RoleRef{
			APIGroup: rbacv1.GroupName,
			Kind:     "Role",
			Name:     kubeflowv1.MPIJobLauncherName(j.Name),
		},
	}
}

// desiredServiceAccount is the launcher's ServiceAccount.
func desiredServiceAccount(j *kubeflowv1.MPIJob, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: childMeta(j, name)}
}

// runningWorkers are the names of the job's worker pods in phase Running.
func runningWorkers(j *kubeflowv1.MPIJob, pods []*corev1.Pod) []string {
	worker := strings.ToLower(string(kubeflowv1.MPIJobReplicaTypeWorker))
	var out []string
	for _, p := range pods {
		if p.Labels[kubeflowv1.ReplicaTypeLabel] == worker && metav1.IsControlledBy(p, j) && p.Status.Phase == corev1.PodRunning {
			out = append(out, p.Name)
		}
	}
	return out
}
