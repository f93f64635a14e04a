package engine

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// JobLabels are the labels every child of a job carries (and the cache selects on).
func JobLabels(controllerName, jobName string) map[string]string {
	return map[string]string{
		kubeflowv1.OperatorNameLabel: controllerName,
		kubeflowv1.JobNameLabel:      strings.ReplaceAll(jobName, "/", "-"),
	}
}

// ReplicaLabels add the replica type and index to JobLabels.
func ReplicaLabels(controllerName, jobName string, rtype kubeflowv1.ReplicaType, index int) map[string]string {
	l := JobLabels(controllerName, jobName)
	l[kubeflowv1.ReplicaTypeLabel] = strings.ToLower(string(rtype))
	l[kubeflowv1.ReplicaIndexLabel] = strconv.Itoa(index)
	return l
}

// ReplicaSelector is the string form of the label selector of one replica
// type's pods, as written to replicaStatuses[*].selector (and the scale subresource).
func ReplicaSelector(controllerName, jobName string, rtype kubeflowv1.ReplicaType) string {
	l := JobLabels(controllerName, jobName)
	l[kubeflowv1.ReplicaTypeLabel] = strings.ToLower(string(rtype))
	// labels.Set's form (keys sorted, key=value) is FormatLabelSelector's for
	// match labels, without validating our own keys and values again by
	// regular expression on every reconcile.
	return labels.Set(l).String()
}

// ownerReference makes the controller reference children point at their job.
func ownerReference(kind string, job client.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         kubeflowv1.GroupVersion.String(),
		Kind:               kind,
		Name:               job.GetName(),
		UID:                job.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// podRestartPolicy maps a replica restart policy onto the pod: ExitCode is
// handled by the operator, so the kubelet must never restart those containers.
func podRestartPolicy(p kubeflowv1.RestartPolicy) corev1.RestartPolicy {
	if p == kubeflowv1.RestartPolicyExitCode {
		return corev1.RestartPolicyNever
	}
	return corev1.RestartPolicy(p)
}

// childName is the framework's name for a replica's pod and Service.
func (fw *adapter[J]) childName(job J, rtype kubeflowv1.ReplicaType, index int) string {
	if fw.namer != nil {
		return fw.namer.ReplicaName(job, rtype, index)
	}
	return kubeflowv1.ReplicaName(job.GetName(), rtype, index)
}

// BuildPod is the pure constructor of one replica's pod from its template.
// It reports whether the template's own restartPolicy was overridden.
func BuildPod[J Job[J]](fw Framework[J], job J, rtype kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) (*corev1.Pod, bool, error) {
	return resolve(fw).buildPod(job, rtype, index, spec)
}

func (fw *adapter[J]) buildPod(job J, rtype kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) (*corev1.Pod, bool, error) {
	tmpl := spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            fw.childName(job, rtype, index),
			Namespace:       job.GetNamespace(),
			Labels:          tmpl.Labels,
			Annotations:     tmpl.Annotations,
			Finalizers:      tmpl.Finalizers,
			OwnerReferences: []metav1.OwnerReference{ownerReference(fw.Kind(), job)},
		},
		Spec: tmpl.Spec,
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range ReplicaLabels(fw.ControllerName(), job.GetName(), rtype, index) {
		pod.Labels[k] = v
	}
	if fw.IsMasterRole(job, rtype, index) {
		pod.Labels[kubeflowv1.JobRoleLabel] = kubeflowv1.JobRoleMaster
	}
	overridden := tmpl.Spec.RestartPolicy != ""
	pod.Spec.RestartPolicy = podRestartPolicy(spec.RestartPolicy)
	rp := fw.RunPolicy(job)
	if fw.tracked(rp) {
		pod.Finalizers = append(pod.Finalizers, kubeflowv1.PodTrackingFinalizer)
	}
	if rp.FailurePolicy != nil {
		// Every failure must reach the operator, which decides what restarts.
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		attempt := strconv.Itoa(int(job.JobStatus().Attempt()))
		pod.Labels[kubeflowv1.RestartAttemptLabel] = attempt
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[kubeflowv1.RestartAttemptLabel] = attempt
	}
	if err := fw.DecoratePod(job, rtype, index, pod); err != nil {
		return nil, false, err
	}
	return pod, overridden, nil
}

// BuildService is the pure constructor of one replica's headless Service. It
// exposes every named port of the default container.
func BuildService[J Job[J]](fw Framework[J], job J, rtype kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) *corev1.Service {
	return resolve(fw).buildService(job, rtype, index, spec)
}

func (fw *adapter[J]) buildService(job J, rtype kubeflowv1.ReplicaType, index int, spec *kubeflowv1.ReplicaSpec) *corev1.Service {
	labels := ReplicaLabels(fw.ControllerName(), job.GetName(), rtype, index)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            fw.childName(job, rtype, index),
			Namespace:       job.GetNamespace(),
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{ownerReference(fw.Kind(), job)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  ReplicaLabels(fw.ControllerName(), job.GetName(), rtype, index),
		},
	}
	if c := kubeflowv1.DefaultContainer(spec.Template.Spec.Containers, fw.DefaultContainerName()); c != nil {
		for _, p := range c.Ports {
			if p.Name != "" {
				svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort})
			}
		}
	}
	return svc
}

// replicaIndex reads the replica-index label; -1 when absent or malformed.
func replicaIndex(obj metav1.Object) int {
	i, err := strconv.Atoi(obj.GetLabels()[kubeflowv1.ReplicaIndexLabel])
	if err != nil || i < 0 {
		return -1
	}
	return i
}

// children are a job's pods and Services sorted into buckets.
type children struct {
	// pods[rtype][index]; a slot holds the newest pod when several share it.
	pods     map[kubeflowv1.ReplicaType]map[int]*corev1.Pod
	services map[kubeflowv1.ReplicaType]map[int]*metav1.PartialObjectMetadata
	// strays are children whose type or index the spec no longer has.
	strayPods     []*corev1.Pod
	strayServices []*metav1.PartialObjectMetadata
	// unindexed are children found by name that lack the replica-index
	// label (v1's MPI launcher): adopted, they get it.
	unindexed   []client.Object
	allPods     []*corev1.Pod
	allServices []*metav1.PartialObjectMetadata
}

// bucketChildren sorts pods and Services by replica type and index. Types are
// matched case-insensitively against the spec, as the labels are lower case.
// A child without a replica-index label takes index 0 when it bears that
// index's name (nameOf), as v1's MPI launcher does; nameOf may be nil.
func bucketChildren(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, pods []*corev1.Pod, svcs []*metav1.PartialObjectMetadata, nameOf func(kubeflowv1.ReplicaType, int) string) children {
	byLower := map[string]kubeflowv1.ReplicaType{}
	for rt := range specs {
		byLower[strings.ToLower(string(rt))] = rt
	}
	ch := children{
		pods:     map[kubeflowv1.ReplicaType]map[int]*corev1.Pod{},
		services: map[kubeflowv1.ReplicaType]map[int]*metav1.PartialObjectMetadata{},
	}
	for rt := range specs {
		ch.pods[rt] = map[int]*corev1.Pod{}
		ch.services[rt] = map[int]*metav1.PartialObjectMetadata{}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp) })
	index := func(rt kubeflowv1.ReplicaType, o client.Object) int {
		if _, labelled := o.GetLabels()[kubeflowv1.ReplicaIndexLabel]; labelled || nameOf == nil || o.GetName() != nameOf(rt, 0) {
			return replicaIndex(o)
		}
		ch.unindexed = append(ch.unindexed, o)
		return 0
	}
	for _, p := range pods {
		ch.allPods = append(ch.allPods, p)
		rt, ok := byLower[p.Labels[kubeflowv1.ReplicaTypeLabel]]
		idx := index(rt, p)
		if !ok || idx < 0 || idx >= int(specs[rt].ReplicaCount()) {
			ch.strayPods = append(ch.strayPods, p)
			continue
		}
		ch.pods[rt][idx] = p
	}
	for _, s := range svcs {
		ch.allServices = append(ch.allServices, s)
		rt, ok := byLower[s.Labels[kubeflowv1.ReplicaTypeLabel]]
		idx := index(rt, s)
		if !ok || idx < 0 || idx >= int(specs[rt].ReplicaCount()) {
			ch.strayServices = append(ch.strayServices, s)
			continue
		}
		ch.services[rt][idx] = s
	}
	return ch
}

// PresentTypes returns the replica types of order that the spec has, in that
// order: the usual ReplicaTypes of an adapter.
func PresentTypes(specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, order ...kubeflowv1.ReplicaType) []kubeflowv1.ReplicaType {
	var out []kubeflowv1.ReplicaType
	for _, rt := range order {
		if _, ok := specs[rt]; ok {
			out = append(out, rt)
		}
	}
	return out
}

// NewServiceMeta is an empty Service as the engine caches and watches it:
// metadata only. The engine reads whether a replica's Service exists and
// who owns it, never its spec, and a cached typed Service is much larger,
// of which a cluster with many retained jobs keeps many.
func NewServiceMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	return m
}

// ofAttempt splits a job's children by the failure policy's restart
// attempt: the children of attempt n (Services are not per attempt), and
// the pods of other attempts, which still hold their slots' names.
func (ch children) ofAttempt(n int32) (children, []*corev1.Pod) {
	var old []*corev1.Pod
	for _, p := range ch.allPods {
		if attemptOf(p) != n {
			old = append(old, p)
		}
	}
	if len(old) == 0 {
		return ch, nil
	}
	isOld := make(map[*corev1.Pod]bool, len(old))
	for _, p := range old {
		isOld[p] = true
	}
	keep := func(pods []*corev1.Pod) []*corev1.Pod {
		var out []*corev1.Pod
		for _, p := range pods {
			if !isOld[p] {
				out = append(out, p)
			}
		}
		return out
	}
	cur := ch
	cur.pods = make(map[kubeflowv1.ReplicaType]map[int]*corev1.Pod, len(ch.pods))
	for rt, byIndex := range ch.pods {
		cur.pods[rt] = map[int]*corev1.Pod{}
		for i, p := range byIndex {
			if !isOld[p] {
				cur.pods[rt][i] = p
			}
		}
	}
	cur.allPods, cur.strayPods = keep(ch.allPods), keep(ch.strayPods)
	return cur, old
}

// onlyPods is ch with only the failures' pods (for the per-pod rule).
func (ch children) onlyPods(fs []jobFailure) children {
	keep := make(map[*corev1.Pod]bool, len(fs))
	for _, f := range fs {
		keep[f.pod] = true
	}
	out := children{pods: make(map[kubeflowv1.ReplicaType]map[int]*corev1.Pod, len(ch.pods)), services: ch.services}
	for rt, byIndex := range ch.pods {
		out.pods[rt] = map[int]*corev1.Pod{}
		for i, p := range byIndex {
			if keep[p] {
				out.pods[rt][i] = p
				out.allPods = append(out.allPods, p)
			}
		}
	}
	return out
}
