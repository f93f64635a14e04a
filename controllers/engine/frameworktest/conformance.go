// Package frameworktest is the conformance test every framework adapter
// runs: what the engine builds with an adapter must be the children v1 made
// (test/testjobs' V1Pods and V1Services), whatever the framework. Each
// adapter's own tests keep only its wiring (env, TF_CONFIG, hostfile, ...).
package frameworktest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

// restartPolicies are the replica restart policies every adapter must map
// onto its pods as v1 did (ExitCode is the operator's: Never on the pod).
var restartPolicies = []kubeflowv1.RestartPolicy{
	kubeflowv1.RestartPolicyAlways, kubeflowv1.RestartPolicyOnFailure,
	kubeflowv1.RestartPolicyNever, kubeflowv1.RestartPolicyExitCode,
}

// User metadata on every replica template: the pods must keep it.
const (
	userLabel      = "example.com/team"
	userAnnotation = "example.com/owner"
)

// Conformance checks, for every job shape in jobs (by name) and every
// restart policy, that the pods and headless Services the engine builds
// with fw have v1's names, labels (job-role included), owner reference and
// pod restartPolicy, keep the template's metadata and containers, and that
// Services exist unless fw is ServiceLess. The jobs are copied, defaulted,
// given a UID and stripped of backoffLimit and failurePolicy (whose
// finalizer and labels are the engine's, tested there).
func Conformance[J engine.Job[J]](t *testing.T, fw engine.Framework[J], jobs map[string]J) {
	t.Helper()
	if len(jobs) == 0 {
		t.Fatal("frameworktest.Conformance needs at least one job")
	}
	for name, base := range jobs {
		for _, rp := range restartPolicies {
			t.Run(name+"/"+string(rp), func(t *testing.T) {
				job := prepare(base, rp)
				checkReplicaTypes(t, fw, job)
				checkPods(t, fw, job)
				checkServices(t, fw, job)
			})
		}
	}
}

// prepare is base as the engine would see it, with restart policy rp and
// user metadata on every replica.
func prepare[J engine.Job[J]](base J, rp kubeflowv1.RestartPolicy) J {
	job := base.DeepCopy()
	job.ApplyDefaults()
	if job.GetUID() == "" {
		job.SetUID(types.UID("uid-" + job.GetName()))
	}
	job.RunPolicy().BackoffLimit = nil
	job.RunPolicy().FailurePolicy = nil
	for _, spec := range job.ReplicaSpecs() {
		spec.RestartPolicy = rp
		tmpl := &spec.Template
		if tmpl.Labels == nil {
			tmpl.Labels = map[string]string{}
		}
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Labels[userLabel], tmpl.Annotations[userAnnotation] = "a", "b"
	}
	return job
}

// checkReplicaTypes: the engine makes pods of the types fw lists only.
func checkReplicaTypes[J engine.Job[J]](t *testing.T, fw engine.Framework[J], job J) {
	listed := map[kubeflowv1.ReplicaType]bool{}
	for _, rt := range fw.ReplicaTypes(job) {
		listed[rt] = true
	}
	for rt := range job.ReplicaSpecs() {
		if !listed[rt] {
			t.Errorf("ReplicaTypes = %v misses %s: its pods would never be made", fw.ReplicaTypes(job), rt)
		}
	}
}

// slot is one replica: its type and index.
type slot struct {
	rtype kubeflowv1.ReplicaType
	index int
}

// slotOf reads a v1 child's replica type and index; v1's MPI launcher has
// no index label and is index 0.
func slotOf(t *testing.T, job kubeflowv1.Job, labels map[string]string) slot {
	t.Helper()
	for rt := range job.ReplicaSpecs() {
		if labels[kubeflowv1.ReplicaTypeLabel] != strings.ToLower(string(rt)) {
			continue
		}
		i, err := strconv.Atoi(labels[kubeflowv1.ReplicaIndexLabel])
		if err != nil {
			i = 0
		}
		return slot{rt, i}
	}
	t.Fatalf("v1 child with labels %v matches no replica type", labels)
	return slot{}
}

func checkPods[J engine.Job[J]](t *testing.T, fw engine.Framework[J], job J) {
	specs := job.ReplicaSpecs()
	v1 := testjobs.V1Pods(job)
	if want, got := len(v1), replicaCount(job); want != got {
		t.Fatalf("v1 made %d pods, the spec has %d replicas", want, got)
	}
	for _, want := range v1 {
		s := slotOf(t, job, want.Labels)
		// Our children all carry the replica index (the engine adds it to
		// an adopted v1 MPI launcher).
		want.Labels[kubeflowv1.ReplicaIndexLabel] = strconv.Itoa(s.index)
		got, _, err := engine.BuildPod(fw, job, s.rtype, s.index, specs[s.rtype])
		if err != nil {
			t.Errorf("%s %d: BuildPod: %v", s.rtype, s.index, err)
			continue
		}
		if diff := cmp.Diff(want.ObjectMeta, got.ObjectMeta); diff != "" {
			t.Errorf("%s %d: pod metadata (-v1 +got):\n%s", s.rtype, s.index, diff)
		}
		if got.Spec.RestartPolicy != want.Spec.RestartPolicy {
			t.Errorf("%s %d: pod restartPolicy = %q, want %q (replica restartPolicy %s)",
				s.rtype, s.index, got.Spec.RestartPolicy, want.Spec.RestartPolicy, specs[s.rtype].RestartPolicy)
		}
		if diff := cmp.Diff(containerShapes(want.Spec.Containers), containerShapes(got.Spec.Containers)); diff != "" {
			t.Errorf("%s %d: the template's containers must stay, in order, with their images and ports (-template +got):\n%s", s.rtype, s.index, diff)
		}
	}
}

func checkServices[J engine.Job[J]](t *testing.T, fw engine.Framework[J], job J) {
	v1 := testjobs.V1Services(job)
	if sl, ok := fw.(engine.ServiceLess); ok && !sl.NeedsServices() {
		if len(v1) != 0 {
			t.Errorf("%s is ServiceLess, but v1 made %d Services for this kind", job.KindInfo().Kind, len(v1))
		}
		return
	}
	if want, got := len(v1), replicaCount(job); want != got {
		t.Fatalf("v1 made %d Services, the spec has %d replicas", want, got)
	}
	for _, want := range v1 {
		s := slotOf(t, job, want.Labels)
		got := engine.BuildService(fw, job, s.rtype, s.index, job.ReplicaSpecs()[s.rtype])
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %d: Service (-v1 +got):\n%s", s.rtype, s.index, diff)
		}
	}
}

// containerShape is what an adapter must leave of a template container; it
// may add env, mounts and init containers.
type containerShape struct {
	Name, Image string
	Ports       []corev1.ContainerPort
}

func containerShapes(cs []corev1.Container) []containerShape {
	out := make([]containerShape, 0, len(cs))
	for _, c := range cs {
		out = append(out, containerShape{c.Name, c.Image, c.Ports})
	}
	return out
}

func replicaCount(job kubeflowv1.Job) int {
	n := 0
	for _, spec := range job.ReplicaSpecs() {
		n += int(spec.ReplicaCount())
	}
	return n
}
