package mpi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// OwnedTypes implements engine.ChildReconciler: the launcher's ConfigMap,
// ServiceAccount, Role and RoleBinding are watched, so drift is repaired.
func (*Framework) OwnedTypes() []client.Object {
	return []client.Object{&corev1.ConfigMap{}, &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}}
}

// ConflictError reports a child name held by an object this job does not control.
// The job is never wired to such an object: it waits until the name is free.
type ConflictError struct {
	Kind, Namespace, Name, Job string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s/%s already exists and is not controlled by MPIJob %s; delete it or rename the job",
		e.Kind, e.Namespace, e.Name, e.Job)
}

// ReconcileChildren implements engine.ChildReconciler. While the job is
// active it creates, or repairs, the launcher's ServiceAccount, Role and
// RoleBinding and the ConfigMap <job>-config; the engine calls it before it
// creates pods. A suspended or finished job keeps them, as in v1: they hold
// no resources and go with the job by garbage collection.
func (f *Framework) ReconcileChildren(ctx context.Context, c client.Client, obj client.Object, active bool) error {
	if !active {
		return nil
	}
	j := job(obj)
	sa := launcherServiceAccountName(j)
	if err := f.reconcileServiceAccount(ctx, c, j, sa); err != nil {
		return err
	}
	if err := f.reconcileRole(ctx, c, j); err != nil {
		return err
	}
	if err := f.reconcileRoleBinding(ctx, c, j, sa); err != nil {
		return err
	}
	return f.reconcileConfigMap(ctx, c, j)
}

// launcherServiceAccountName is the launcher template's ServiceAccount, else <job>-launcher.
func launcherServiceAccountName(j *kubeflowv1.MPIJob) string {
	if spec := j.Spec.MPIReplicaSpecs[kubeflowv1.MPIJobReplicaTypeLauncher]; spec != nil && spec.Template.Spec.ServiceAccountName != "" {
		return spec.Template.Spec.ServiceAccountName
	}
	return launcherName(j.Name)
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
		fmt.Fprintf(&b, "%s slots=%d\n", launcherName(j.Name), slots)
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
		fmt.Fprintf(&b, "\necho %s:%d\n", launcherName(j.Name), slots)
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
		ObjectMeta: childMeta(j, launcherName(j.Name)),
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
		ObjectMeta: childMeta(j, launcherName(j.Name)),
		Subjects: []rbacv1.Subject{{
			Kind:      rbacv1.ServiceAccountKind,
			Name:      serviceAccount,
			Namespace: j.Namespace,
		}},
		RoleRef: rbacv1.RoleRef{
			APIGroup: rbacv1.GroupName,
			Kind:     "Role",
			Name:     launcherName(j.Name),
		},
	}
}

// desiredServiceAccount is the launcher's ServiceAccount.
func desiredServiceAccount(j *kubeflowv1.MPIJob, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: childMeta(j, name)}
}

// reconcileServiceAccount makes sure the launcher's ServiceAccount exists.
// <job>-launcher must be ours. A ServiceAccount the user named in the
// launcher template is used as it is; v1 creates it (owned by the job) when
// it does not exist yet, and so do we.
func (f *Framework) reconcileServiceAccount(ctx context.Context, c client.Client, j *kubeflowv1.MPIJob, name string) error {
	userNamed := name != launcherName(j.Name)
	var existing corev1.ServiceAccount
	_, err := f.getOrCreate(ctx, c, j, "ServiceAccount", desiredServiceAccount(j, name), &existing, !userNamed)
	return err
}

// reconcileRole creates the launcher Role or updates its rules (the worker
// names change when the job is scaled).
func (f *Framework) reconcileRole(ctx context.Context, c client.Client, j *kubeflowv1.MPIJob) error {
	desired := desiredRole(j)
	var existing rbacv1.Role
	found, err := f.getOrCreate(ctx, c, j, "Role", desired, &existing, true)
	if err != nil || !found || equality.Semantic.DeepEqual(existing.Rules, desired.Rules) {
		return err
	}
	updated := existing.DeepCopy()
	updated.Rules = desired.Rules
	return c.Update(ctx, updated)
}

// reconcileRoleBinding creates the RoleBinding or repairs it. Its roleRef is
// immutable, so a binding to another role is replaced.
func (f *Framework) reconcileRoleBinding(ctx context.Context, c client.Client, j *kubeflowv1.MPIJob, serviceAccount string) error {
	desired := desiredRoleBinding(j, serviceAccount)
	var existing rbacv1.RoleBinding
	found, err := f.getOrCreate(ctx, c, j, "RoleBinding", desired, &existing, true)
	if err != nil || !found {
		return err
	}
	if existing.RoleRef != desired.RoleRef {
		uid := existing.UID
		return client.IgnoreNotFound(c.Delete(ctx, &existing, client.Preconditions{UID: &uid}))
	}
	if equality.Semantic.DeepEqual(existing.Subjects, desired.Subjects) {
		return nil
	}
	updated := existing.DeepCopy()
	updated.Subjects = desired.Subjects
	return c.Update(ctx, updated)
}

// reconcileConfigMap creates <job>-config or patches its data, for example
// when workers are scaled or become Running.
func (f *Framework) reconcileConfigMap(ctx context.Context, c client.Client, j *kubeflowv1.MPIJob) error {
	running, err := runningWorkers(ctx, c, j)
	if err != nil {
		return err
	}
	desired := desiredConfigMap(j, running)
	var existing corev1.ConfigMap
	found, err := f.getOrCreate(ctx, c, j, "ConfigMap", desired, &existing, true)
	if err != nil || !found || equality.Semantic.DeepEqual(existing.Data, desired.Data) {
		return err
	}
	// A merge patch without a resourceVersion: the data is ours alone, and an
	// update from a cache that lags our own previous write would conflict and
	// hold the job's pods back behind the retry backoff.
	updated := existing.DeepCopy()
	updated.Data = desired.Data
	return c.Patch(ctx, updated, client.MergeFrom(&existing))
}

// runningWorkers are the names of the job's worker pods in phase Running,
// read from the cache.
func runningWorkers(ctx context.Context, c client.Client, j *kubeflowv1.MPIJob) ([]string, error) {
	labels := engine.JobLabels(ControllerName, j.Name)
	labels[kubeflowv1.ReplicaTypeLabel] = strings.ToLower(string(kubeflowv1.MPIJobReplicaTypeWorker))
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(j.Namespace), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var out []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if metav1.IsControlledBy(p, j) && p.Status.Phase == corev1.PodRunning {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

// getOrCreate reads a child from the cache into existing, or creates desired.
// found reports that existing holds the current object (and, when owned is
// set, that the job controls it). A name held by an object the job does not
// control is a ConflictError when owned is set; without owned (a
// user-provided ServiceAccount) such an object is simply used.
func (f *Framework) getOrCreate(ctx context.Context, c client.Client, j *kubeflowv1.MPIJob, kind string, desired, existing client.Object, owned bool) (found bool, err error) {
	key := client.ObjectKeyFromObject(desired)
	memo := kind + "/" + key.Name
	err = c.Get(ctx, key, existing)
	switch {
	case err == nil:
		f.created.observed(j.UID, memo)
		if metav1.IsControlledBy(existing, j) {
			return true, nil
		}
		if !owned {
			return false, nil
		}
		return false, &ConflictError{Kind: kind, Namespace: key.Namespace, Name: key.Name, Job: j.Name}
	case !apierrors.IsNotFound(err):
		return false, err
	}
	if f.created.isCreating(j.UID, memo, time.Now()) {
		return false, nil // created by us; the cache has not caught up yet
	}
	err = c.Create(ctx, desired)
	switch {
	case err == nil:
		f.created.markCreated(j.UID, memo, time.Now())
		return false, nil
	case apierrors.IsAlreadyExists(err) && !owned:
		// Someone else's (the cache only holds our labelled objects): use it,
		// and do not ask the API again for a while.
		f.created.markCreated(j.UID, memo, time.Now())
		return false, nil
	case apierrors.IsAlreadyExists(err):
		// Not in our cache, so not labelled as ours: someone else's object.
		return false, &ConflictError{Kind: kind, Namespace: key.Namespace, Name: key.Name, Job: j.Name}
	}
	return false, err
}

// createdTTL bounds how long a create is trusted over the cache.
const createdTTL = 2 * time.Minute

// createdChildren remembers creates the informer cache may not show yet, so
// the next reconcile neither creates again nor mistakes its own object for a
// foreign one.
type createdChildren struct {
	mu      sync.Mutex
	entries map[types.UID]map[string]time.Time
}

func newCreatedChildren() *createdChildren {
	return &createdChildren{entries: map[types.UID]map[string]time.Time{}}
}

func (m *createdChildren) markCreated(job types.UID, name string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Drop stale entries (jobs deleted before the cache caught up).
	for uid, names := range m.entries {
		for n, t := range names {
			if now.Sub(t) > createdTTL {
				delete(names, n)
			}
		}
		if len(names) == 0 {
			delete(m.entries, uid)
		}
	}
	if m.entries[job] == nil {
		m.entries[job] = map[string]time.Time{}
	}
	m.entries[job][name] = now
}

func (m *createdChildren) isCreating(job types.UID, name string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.entries[job][name]
	return ok && now.Sub(t) <= createdTTL
}

func (m *createdChildren) observed(job types.UID, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if names, ok := m.entries[job]; ok {
		delete(names, name)
		if len(names) == 0 {
			delete(m.entries, job)
		}
	}
}
