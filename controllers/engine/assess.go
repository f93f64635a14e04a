package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// assessment is the restart engine's reading of a job's pods.
type assessment struct {
	// terminal are failures the restart policy does not retry: the job fails.
	terminal []podFailure
	// retries are failures that will be retried (failed pods and pods
	// deleted by someone else).
	retries []podFailure
	// retryPods are failed pods to delete so they are recreated.
	retryPods []*corev1.Pod
	// newlyCounted is how many retries were not counted in status yet.
	newlyCounted int32
	// counted are the pods behind newlyCounted; their UIDs go into
	// status.countedPods in the same write as the count.
	counted []types.UID
	// containerRestarts are in-place kubelet restarts of live pods whose
	// policy restarts containers.
	containerRestarts int32
	// vanished are the vanishedPods entries this assessment dealt with.
	vanished []types.UID
}

// assess applies the restart rule to every pod of the job.
// gone are the job's vanished pods (vanishedPods) not counted yet.
func (r *Reconciler[J]) assess(job J, ch children, gone []*corev1.Pod, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, now time.Time) assessment {
	var a assessment
	j := r.jobRef(job)
	counted := countedSet(job.JobStatus().CountedPods)
	tolerance := r.fw.tolerance
	// With a failure policy, pods run with restartPolicy Never, and a main
	// container that failed under a running sidecar is the pod's failure.
	withPolicy := r.fw.RunPolicy(job).FailurePolicy != nil
	dealt := map[types.UID]bool{}
	for _, rt := range r.fw.ReplicaTypes(job) {
		spec := specs[rt]
		tolerated := tolerance != nil && tolerance.ToleratesFailure(job, rt)
		indices := make([]int, 0, len(ch.pods[rt]))
		for i := range ch.pods[rt] {
			indices = append(indices, i)
		}
		sort.Ints(indices)
		for _, i := range indices {
			pod := ch.pods[rt][i]
			if r.memory.IsDeleting(j, pod.UID) || endedBySuspension(pod) {
				continue
			}
			failed := pod.Status.Phase == corev1.PodFailed || (withPolicy && mainContainerFailed(pod, r.fw.mainContainer(job, spec)))
			if failed || pod.DeletionTimestamp != nil {
				dealt[pod.UID] = true
			}
			switch {
			case failed:
				f := describeFailure(pod, rt, r.fw.DefaultContainerName())
				// A pod deleted by someone else still ends in phase Failed while
				// it terminates (the kubelet, or PodGC, writes the final phase
				// before it goes): it stays a deletion, retryable whatever the
				// policy and the code its killed containers exit with, since
				// nothing in the job failed.
				deleted := pod.DeletionTimestamp != nil
				f.Disrupted = f.Disrupted || deleted
				if !deleted && !shouldRetry(spec.RestartPolicy, f) {
					if !tolerated {
						a.terminal = append(a.terminal, f)
					}
					continue
				}
				a.retries = append(a.retries, f)
				a.retryPods = append(a.retryPods, pod)
				if !counted[string(pod.UID)] {
					// A pod's in-place restarts are folded into the durable count with it.
					a.newlyCounted += 1 + containerRestarts(pod)
					a.counted = append(a.counted, pod.UID)
				}
			case pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded:
				// Deleted by someone else (we never delete in-spec pods of a running
				// job except failed ones): a disruption, recreated once it is gone.
				f := describeFailure(pod, rt, r.fw.DefaultContainerName())
				f.Disrupted = true
				if f.Reason == "" {
					f.Reason = "Deleted"
				}
				a.retries = append(a.retries, f)
				if !counted[string(pod.UID)] {
					a.newlyCounted += 1 + containerRestarts(pod)
					a.counted = append(a.counted, pod.UID)
				}
			case spec.RestartPolicy != kubeflowv1.RestartPolicyNever && spec.RestartPolicy != kubeflowv1.RestartPolicyExitCode:
				a.containerRestarts += containerRestarts(pod)
			}
		}
	}
	for _, pod := range gone {
		a.vanished = append(a.vanished, pod.UID)
		rt, ok := replicaTypeOf(r.fw.ReplicaTypes(job), specs, pod)
		// The pass listed its pods before it read the vanished ones, so a pod
		// that left the cache in between is in both; if the loop above saw it
		// failed or terminating, it dealt with it.
		if !ok || counted[string(pod.UID)] || dealt[pod.UID] || endedBySuspension(pod) {
			continue
		}
		// Deleted by someone else and gone before a pass saw it terminating:
		// the same disruption as above.
		f := describeFailure(pod, rt, r.fw.DefaultContainerName())
		f.Disrupted = true
		if f.Reason == "" {
			f.Reason = "Deleted"
		}
		a.retries = append(a.retries, f)
		a.newlyCounted += 1 + containerRestarts(pod)
		a.counted = append(a.counted, pod.UID)
	}
	return a
}

// countedSet is status.countedPods as a set.
func countedSet(uids []string) map[string]bool {
	set := make(map[string]bool, len(uids))
	for _, u := range uids {
		set[u] = true
	}
	return set
}

// replicaTypeOf finds a vanished pod's replica in the job's spec by its
// labels; a pod of no replica the job still runs is nobody's restart.
func replicaTypeOf(rts []kubeflowv1.ReplicaType, specs map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec, pod *corev1.Pod) (kubeflowv1.ReplicaType, bool) {
	label := pod.Labels[kubeflowv1.ReplicaTypeLabel]
	index, err := strconv.Atoi(pod.Labels[kubeflowv1.ReplicaIndexLabel])
	if err != nil {
		return "", false
	}
	for _, rt := range rts {
		spec := specs[rt]
		if strings.EqualFold(string(rt), label) && spec != nil && index >= 0 && index < int(ptr.Deref(spec.Replicas, 1)) {
			return rt, true
		}
	}
	return "", false
}

// backoffExceeded applies backoffLimit to every retry: recorded ones, the
// ones about to happen and the kubelet's in-place restarts. A limit of N
// allows N retries, like a batch Job.
func (a assessment) backoffExceeded(limit *int32, recorded int32) bool {
	if limit == nil {
		return false
	}
	return recorded+a.newlyCounted+a.containerRestarts > *limit
}

// countByType renders "1 Worker" / "2 Master" for v1-style messages.
func countByType(fs []podFailure) (string, kubeflowv1.ReplicaType) {
	counts := map[kubeflowv1.ReplicaType]int{}
	var first kubeflowv1.ReplicaType
	for i, f := range fs {
		if i == 0 {
			first = f.RType
		}
		counts[f.RType]++
	}
	return fmt.Sprintf("%d %s", counts[first], first), first
}

func details(fs []podFailure) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// failureMessage keeps v1's wording (the framework's own, if it has one)
// and names the pods, containers, exit codes and reasons.
func (fw *adapter[J]) failureMessage(job J, a assessment) string {
	n, _ := countByType(a.terminal)
	head := fmt.Sprintf("%s %s is failed because %s replica(s) failed", fw.Kind(), job.GetName(), n)
	if fw.wording != nil {
		head = fw.wording.FailedMessage(job, n)
	}
	return fmt.Sprintf("%s. %s.", head, capitalize(details(a.terminal)))
}

func (a assessment) restartMessage(kind, name string) string {
	n, _ := countByType(a.retries)
	return fmt.Sprintf("%s %s is restarting because %s replica(s) failed. %s.", kind, name, n, capitalize(details(a.retries)))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
