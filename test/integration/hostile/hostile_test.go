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

package hostile_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/harness/cluster"
	"github.com/seed-d8a409e9/training-operator/test/testjobs"
)

const ns = "hostile"

// Replica types used below.
const (
	master   = kubeflowv1.PyTorchJobReplicaTypeMaster
	worker   = kubeflowv1.PyTorchJobReplicaTypeWorker
	launcher = kubeflowv1.MPIJobReplicaTypeLauncher
	chief    = kubeflowv1.TFJobReplicaTypeChief
)

// Builders of valid jobs that the cases below break in one way each.
func pytorch(name string) *testjobs.PyTorchJobWrapper {
	return testjobs.MakePyTorchJob(name, ns).Master(1).Workers(1)
}

// exit0 makes KWOK finish every pod of the job with exit code 0, so that
// accepted jobs run to completion and go quiet.
func exit0[T client.Object](obj T) T {
	for _, s := range testjobs.ReplicaSpecs(obj) {
		if s == nil {
			continue
		}
		if s.Template.Annotations == nil {
			s.Template.Annotations = map[string]string{}
		}
		s.Template.Annotations[cluster.ExitCodeAnnotation] = "0"
	}
	return obj
}

// edit applies a change to one replica spec of a typed job.
func edit[T client.Object](obj T, rt kubeflowv1.ReplicaType, change func(*kubeflowv1.ReplicaSpec)) T {
	change(testjobs.ReplicaSpecs(obj)[rt])
	return obj
}

func container(s *kubeflowv1.ReplicaSpec) *corev1.Container { return &s.Template.Spec.Containers[0] }

// hostileCase is one malformed or hostile object. Exactly one of rejected
// and handled is set.
type hostileCase struct {
	name string
	obj  func(t *testing.T) client.Object
	opts []client.CreateOption
	// rejected are the field paths the API's error must name, in its
	// causes or its message ([Key] and .Key spellings are equivalent: the
	// webhooks use the former, the CRD schema the latter).
	rejected []string
	// code is the HTTP status of the rejection (default 422).
	code int32
	// handled waits for what the operator does with the accepted job and
	// describes it.
	handled func(ctx context.Context, s *suite, obj client.Object) (string, error)
}

// Outcomes of accepted jobs.

func succeeds(ctx context.Context, s *suite, obj client.Object) (string, error) {
	return s.waitCondition(ctx, obj, kubeflowv1.JobSucceeded)
}

// succeedsNeverFailed waits for the job to finish and wants Succeeded.
// Failed is sticky, so a job that was failed at any point of its run (for
// example by a deadline check on every reconcile after startTime) can
// never end Succeeded; a fixed wait for the absence of Failed could not
// tell that from a failure that comes late.
func succeedsNeverFailed(ctx context.Context, s *suite, obj client.Object) (string, error) {
	got, err := s.waitCondition(ctx, obj, kubeflowv1.JobSucceeded, kubeflowv1.JobFailed)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(got, string(kubeflowv1.JobSucceeded)) {
		return "", fmt.Errorf("job finished %s, want Succeeded", got)
	}
	return got, nil
}

// eventAndSucceeds waits for an event reason, then success.
func eventAndSucceeds(reason string) func(ctx context.Context, s *suite, obj client.Object) (string, error) {
	return func(ctx context.Context, s *suite, obj client.Object) (string, error) {
		msg, err := s.waitEvent(ctx, obj, reason)
		if err != nil {
			return "", err
		}
		done, err := succeeds(ctx, s, obj)
		return fmt.Sprintf("event %s (%s); %s", reason, msg, done), err
	}
}

// scaleRejected sets the job's replicas through the scale subresource, as
// kubectl scale and an HPA do. Admission webhooks are not called for it, so
// the CRD schema's maximum must reject the count, naming the field.
func scaleRejected(replicas int32, field string) func(ctx context.Context, s *suite, obj client.Object) (string, error) {
	return func(ctx context.Context, s *suite, obj client.Object) (string, error) {
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
		err := s.k8s.SubResource("scale").Update(ctx, obj, client.WithSubResourceBody(scale))
		if err == nil {
			return "", fmt.Errorf("scale to %d accepted, want a 422 naming %s", replicas, field)
		}
		if got := statusCode(err); got != http.StatusUnprocessableEntity || !strings.Contains(normalizePath(err.Error()), normalizePath(field)) {
			return "", fmt.Errorf("scale to %d: got %v (HTTP %d), want a 422 naming %s", replicas, err, got, field)
		}
		rejected := err.Error()
		done, err := succeeds(ctx, s, obj)
		return fmt.Sprintf("scale to %d rejected (%.120s); %s", replicas, rejected, done), err
	}
}

// operatorEnvWins checks that in every pod the last definition of each
// variable (the one the kubelet uses) is the operator's, then waits for
// success.
func operatorEnvWins(userValue string, names ...string) func(ctx context.Context, s *suite, obj client.Object) (string, error) {
	return func(ctx context.Context, s *suite, obj client.Object) (string, error) {
		var pods []corev1.Pod
		deadline := time.Now().Add(timeout)
		for len(pods) == 0 && time.Now().Before(deadline) {
			var err error
			if pods, err = s.jobPods(ctx, obj.GetName()); err != nil {
				return "", err
			}
			time.Sleep(poll)
		}
		if len(pods) == 0 {
			return "", fmt.Errorf("no pods")
		}
		var effective []string
		for _, p := range pods {
			for _, c := range p.Spec.Containers {
				last := map[string]string{}
				for _, e := range c.Env {
					last[e.Name] = e.Value
				}
				for _, n := range names {
					v, ok := last[n]
					if !ok || v == userValue {
						return "", fmt.Errorf("pod %s container %s: effective %s=%q, want the operator's value", p.Name, c.Name, n, v)
					}
					effective = append(effective, fmt.Sprintf("%s/%s=%.40s", p.Name, n, v))
				}
			}
		}
		done, err := succeeds(ctx, s, obj)
		return fmt.Sprintf("operator's values appended last and effective (%s); %s", strings.Join(effective[:min(3, len(effective))], ", "), done), err
	}
}

func hostileCases() []hostileCase {
	long := func(n int) string { return "j" + strings.Repeat("x", n-1) }
	workerPath := "spec.pytorchReplicaSpecs[Worker]"
	masterPath := "spec.pytorchReplicaSpecs[Master]"
	return []hostileCase{
		// --- sizes ---
		{
			name:     "huge replica count (100000 workers)",
			obj:      func(*testing.T) client.Object { return pytorch("huge-replicas").Workers(100000).Obj() },
			rejected: []string{workerPath + ".replicas"},
		},
		{
			name: "max int32 replicas (TFJob)",
			obj: func(*testing.T) client.Object {
				return testjobs.MakeTFJob("maxint-replicas", ns).Chief(1).Workers(math.MaxInt32).Obj()
			},
			rejected: []string{"spec.tfReplicaSpecs[Worker].replicas"},
		},
		{
			name: "elastic maxReplicas 1000000",
			obj: func(*testing.T) client.Object {
				return testjobs.MakePyTorchJob("huge-elastic", ns).Workers(1).Elastic(1, 1000000).Obj()
			},
			rejected: []string{"spec.elasticPolicy.maxReplicas"},
		},
		{
			name:    "kubectl scale to 100000 workers (the scale subresource skips webhooks)",
			obj:     func(*testing.T) client.Object { return exit0(pytorch("scale-beyond-cap").Workers(1).Obj()) },
			handled: scaleRejected(100000, workerPath+".replicas"),
		},
		{
			name:     "name longer than 253 characters",
			obj:      func(*testing.T) client.Object { return pytorch(long(254)).Obj() },
			rejected: []string{"metadata.name"},
		},
		{
			name:     "name whose pod names would exceed 63 characters",
			obj:      func(*testing.T) client.Object { return pytorch(long(60)).Obj() },
			rejected: []string{"metadata.name"},
		},
		{
			name: "job annotations of 300 KiB",
			obj: func(*testing.T) client.Object {
				j := pytorch("huge-annotations").Obj()
				j.Annotations = map[string]string{"big": strings.Repeat("x", 300*1024)}
				return j
			},
			rejected: []string{"metadata.annotations"},
		},
		{
			name: "pod-template annotations of 300 KiB",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("huge-template-annotations").Obj(), worker, func(s *kubeflowv1.ReplicaSpec) {
					s.Template.Annotations = map[string]string{"big": strings.Repeat("x", 300*1024)}
				})
			},
			rejected: []string{workerPath + ".template.metadata.annotations"},
		},
		// --- unicode ---
		{
			name:     "unicode job name",
			obj:      func(*testing.T) client.Object { return pytorch("jöb-ünïcode").Obj() },
			rejected: []string{"metadata.name"},
		},
		{
			name: "unicode job label",
			obj: func(*testing.T) client.Object {
				j := pytorch("unicode-label").Obj()
				j.Labels = map[string]string{"team": "maschinelles-lernen-ü"}
				return j
			},
			rejected: []string{"metadata.labels"},
		},
		{
			name: "unicode pod-template label",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("unicode-template-label").Obj(), master, func(s *kubeflowv1.ReplicaSpec) {
					s.Template.Labels = map[string]string{"团队": "ml"}
				})
			},
			rejected: []string{masterPath + ".template.metadata.labels"},
		},
		{
			name: "unicode annotation values",
			obj: func(*testing.T) client.Object {
				j := exit0(pytorch("unicode-annotations").Obj())
				j.Annotations = map[string]string{"description": "训练任务 🚀 ünïcode"}
				return edit(j, worker, func(s *kubeflowv1.ReplicaSpec) { s.Template.Annotations["note"] = "ñ 🚀" })
			},
			handled: succeeds,
		},
		// --- ports ---
		{
			name: "container port 70000",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("port-out-of-range").Obj(), master, func(s *kubeflowv1.ReplicaSpec) {
					container(s).Ports = []corev1.ContainerPort{{Name: kubeflowv1.PyTorchJobDefaultPortName, ContainerPort: 70000}}
				})
			},
			rejected: []string{masterPath + ".template.spec.containers[0].ports[0].containerPort"},
		},
		{
			name: "negative container port",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("port-negative").Obj(), worker, func(s *kubeflowv1.ReplicaSpec) {
					container(s).Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: -1}}
				})
			},
			rejected: []string{workerPath + ".template.spec.containers[0].ports[0].containerPort"},
		},
		{
			name: "duplicate port names",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("duplicate-ports").Obj(), master, func(s *kubeflowv1.ReplicaSpec) {
					container(s).Ports = []corev1.ContainerPort{
						{Name: kubeflowv1.PyTorchJobDefaultPortName, ContainerPort: 23456},
						{Name: kubeflowv1.PyTorchJobDefaultPortName, ContainerPort: 23457},
					}
				})
			},
			rejected: []string{masterPath + ".template.spec.containers[0].ports[1].name"},
		},
		{
			name: "port name longer than 15 characters",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("port-name-long").Obj(), master, func(s *kubeflowv1.ReplicaSpec) {
					container(s).Ports = []corev1.ContainerPort{{Name: "pytorchjob-port-renamed", ContainerPort: 29500}}
				})
			},
			rejected: []string{masterPath + ".template.spec.containers[0].ports[0].name"},
		},
		{
			// The defaulter adds pytorchjob-port next to the user's port.
			name: "port named differently",
			obj: func(*testing.T) client.Object {
				j := exit0(pytorch("port-renamed").Obj())
				for _, rt := range []kubeflowv1.ReplicaType{master, worker} {
					edit(j, rt, func(s *kubeflowv1.ReplicaSpec) {
						container(s).Ports = []corev1.ContainerPort{{Name: "torch", ContainerPort: 29500}}
					})
				}
				return j
			},
			handled: operatorEnvWins("29500", "MASTER_PORT"),
		},
		// --- env collisions ---
		{
			name: "user sets MASTER_ADDR, RANK, WORLD_SIZE",
			obj: func(*testing.T) client.Object {
				j := exit0(pytorch("env-collision").Obj())
				for _, rt := range []kubeflowv1.ReplicaType{master, worker} {
					edit(j, rt, func(s *kubeflowv1.ReplicaSpec) {
						container(s).Env = testjobs.Env("MASTER_ADDR", "evil", "RANK", "evil", "WORLD_SIZE", "evil", "MASTER_PORT", "evil")
					})
				}
				return j
			},
			handled: operatorEnvWins("evil", "MASTER_ADDR", "RANK", "WORLD_SIZE", "MASTER_PORT"),
		},
		{
			name: "user sets TF_CONFIG",
			obj: func(*testing.T) client.Object {
				j := exit0(testjobs.MakeTFJob("tf-config-collision", ns).Chief(1).Workers(1).Obj())
				for _, s := range j.Spec.TFReplicaSpecs {
					container(s).Env = testjobs.Env("TF_CONFIG", "evil")
				}
				return j
			},
			handled: operatorEnvWins("evil", "TF_CONFIG"),
		},
		// --- missing and empty specs ---
		{
			name:     "no replica specs",
			obj:      func(*testing.T) client.Object { return testjobs.MakePyTorchJob("no-specs", ns).Obj() },
			rejected: []string{"spec.pytorchReplicaSpecs"},
		},
		{
			name: "no spec at all",
			obj: func(t *testing.T) client.Object {
				u := toUnstructured(t, testjobs.MakePyTorchJob("nil-spec", ns).Obj())
				delete(u.Object, "spec")
				return u
			},
			rejected: []string{"spec.pytorchReplicaSpecs"},
		},
		{
			name: "null replica spec",
			obj: func(t *testing.T) client.Object {
				u := toUnstructured(t, testjobs.MakePyTorchJob("null-spec", ns).Obj())
				setField(t, u, map[string]any{"Worker": nil}, "spec", "pytorchReplicaSpecs")
				return u
			},
			rejected: []string{"spec.pytorchReplicaSpecs"},
		},
		{
			name: "empty template",
			obj: func(t *testing.T) client.Object {
				return edit(pytorch("empty-template").Obj(), worker, func(s *kubeflowv1.ReplicaSpec) { s.Template = corev1.PodTemplateSpec{} })
			},
			rejected: []string{workerPath + ".template.spec.containers"},
		},
		{
			name: "no containers (MPIJob)",
			obj: func(t *testing.T) client.Object {
				return edit(testjobs.MakeMPIJob("no-containers", ns).Launcher().Workers(1).Obj(), worker, func(s *kubeflowv1.ReplicaSpec) {
					s.Template.Spec.Containers = []corev1.Container{}
				})
			},
			rejected: []string{"spec.mpiReplicaSpecs[Worker].template.spec.containers"},
		},
		{
			name: "container without image",
			obj: func(t *testing.T) client.Object {
				return edit(pytorch("no-image").Obj(), master, func(s *kubeflowv1.ReplicaSpec) { container(s).Image = "" })
			},
			rejected: []string{masterPath + ".template.spec.containers[0].image"},
		},
		{
			name: "container name other than the default",
			obj: func(t *testing.T) client.Object {
				return edit(pytorch("other-container").Obj(), master, func(s *kubeflowv1.ReplicaSpec) { container(s).Name = "trainer" })
			},
			rejected: []string{masterPath + ".template.spec.containers"},
		},
		{
			name: "duplicate container names",
			obj: func(t *testing.T) client.Object {
				return edit(pytorch("duplicate-containers").Obj(), worker, func(s *kubeflowv1.ReplicaSpec) {
					s.Template.Spec.Containers = append(s.Template.Spec.Containers, *container(s))
				})
			},
			// The CRD's listType=map on containers (key name) answers first.
			rejected: []string{workerPath + ".template.spec.containers[1]"},
		},
		// --- run policy ---
		{
			name:     "negative backoffLimit",
			obj:      func(*testing.T) client.Object { return pytorch("neg-backoff").BackoffLimit(-1).Obj() },
			rejected: []string{"spec.runPolicy.backoffLimit"},
		},
		{
			name:     "negative activeDeadlineSeconds",
			obj:      func(*testing.T) client.Object { return pytorch("neg-deadline").ActiveDeadlineSeconds(-5).Obj() },
			rejected: []string{"spec.runPolicy.activeDeadlineSeconds"},
		},
		{
			name:     "negative ttlSecondsAfterFinished",
			obj:      func(*testing.T) client.Object { return pytorch("neg-ttl").TTLSecondsAfterFinished(-1).Obj() },
			rejected: []string{"spec.runPolicy.ttlSecondsAfterFinished"},
		},
		{
			name: "negative schedulingPolicy.minAvailable",
			obj: func(*testing.T) client.Object {
				j := pytorch("neg-min-available").Obj()
				j.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{MinAvailable: ptr.To[int32](-3)}
				return j
			},
			rejected: []string{"spec.runPolicy.schedulingPolicy.minAvailable"},
		},
		{
			// time.Duration(seconds) * time.Second overflows beyond ~292
			// years; the overflowed deadline failed the job at once.
			name: "activeDeadlineSeconds max int64",
			obj: func(*testing.T) client.Object {
				return exit0(pytorch("max-deadline").ActiveDeadlineSeconds(math.MaxInt64).Obj())
			},
			handled: succeedsNeverFailed,
		},
		{
			name:     "managedBy empty string",
			obj:      func(*testing.T) client.Object { return pytorch("managed-by-empty").ManagedBy("").Obj() },
			rejected: []string{"spec.runPolicy.managedBy"},
		},
		{
			name: "invalid cleanPodPolicy",
			obj: func(*testing.T) client.Object {
				return pytorch("bad-clean-policy").CleanPodPolicy("Sometimes").Obj()
			},
			rejected: []string{"spec.runPolicy.cleanPodPolicy"},
		},
		// --- replicas and replica types ---
		{
			name:     "zero PyTorch workers",
			obj:      func(*testing.T) client.Object { return pytorch("zero-workers").Workers(0).Obj() },
			rejected: []string{workerPath + ".replicas"},
		},
		{
			name:     "zero PyTorch master",
			obj:      func(*testing.T) client.Object { return pytorch("zero-master").Master(0).Obj() },
			rejected: []string{masterPath + ".replicas"},
		},
		{
			name:     "negative MPI workers",
			obj:      func(*testing.T) client.Object { return testjobs.MakeMPIJob("neg-mpi", ns).Launcher().Workers(-2).Obj() },
			rejected: []string{"spec.mpiReplicaSpecs[Worker].replicas"},
		},
		{
			name: "zero TF workers",
			obj: func(*testing.T) client.Object {
				return exit0(testjobs.MakeTFJob("tf-zero-workers", ns).Chief(1).Workers(0).Obj())
			},
			handled: succeeds,
		},
		{
			name: "zero MPI workers",
			obj: func(*testing.T) client.Object {
				return exit0(testjobs.MakeMPIJob("mpi-zero-workers", ns).Launcher().Workers(0).Obj())
			},
			handled: succeeds,
		},
		{
			name: "unknown PyTorch replica type",
			obj: func(*testing.T) client.Object {
				j := pytorch("unknown-type").Obj()
				j.Spec.PyTorchReplicaSpecs["Foo"] = j.Spec.PyTorchReplicaSpecs[worker].DeepCopy()
				return j
			},
			rejected: []string{"spec.pytorchReplicaSpecs[Foo]"},
		},
		{
			name: "unknown TF replica type",
			obj: func(*testing.T) client.Object {
				return testjobs.MakeTFJob("tf-unknown-type", ns).Chief(1).Replicas("Foo", 1).Obj()
			},
			rejected: []string{"spec.tfReplicaSpecs[Foo]"},
		},
		{
			name:     "MPIJob without a Launcher",
			obj:      func(*testing.T) client.Object { return testjobs.MakeMPIJob("mpi-master", ns).Workers(1).Obj() },
			rejected: []string{"spec.mpiReplicaSpecs[Launcher]"},
		},
		{
			name:     "XGBoostJob without Master",
			obj:      func(*testing.T) client.Object { return testjobs.MakeXGBoostJob("xgb-no-master", ns).Workers(2).Obj() },
			rejected: []string{"spec.xgbReplicaSpecs[Master]"},
		},
		{
			name: "TFJob with both Chief and Master",
			obj: func(*testing.T) client.Object {
				return testjobs.MakeTFJob("tf-two-chiefs", ns).Chief(1).Master(1).Obj()
			},
			rejected: []string{"spec.tfReplicaSpecs"},
		},
		{
			name: "invalid replica restartPolicy",
			obj: func(*testing.T) client.Object {
				return pytorch("bad-restart-policy").RestartPolicy("Sometimes").Obj()
			},
			rejected: []string{"spec.pytorchReplicaSpecs.Master.restartPolicy"},
		},
		{
			// The replica's restartPolicy wins, with a warning event.
			name: "pod-template restartPolicy differs from the replica's",
			obj: func(*testing.T) client.Object {
				j := exit0(pytorch("template-restart-policy").RestartPolicy(kubeflowv1.RestartPolicyOnFailure).Obj())
				return edit(j, worker, func(s *kubeflowv1.ReplicaSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways })
			},
			handled: eventAndSucceeds("SetPodTemplateRestartPolicy"),
		},
		// --- malformed JSON shapes ---
		{
			name: "replicas of the wrong type",
			obj: func(t *testing.T) client.Object {
				u := toUnstructured(t, pytorch("replicas-string").Obj())
				setField(t, u, "three", "spec", "pytorchReplicaSpecs", "Worker", "replicas")
				return u
			},
			rejected: []string{"spec.pytorchReplicaSpecs.Worker.replicas"},
		},
		{
			name: "replicas beyond int32",
			obj: func(t *testing.T) client.Object {
				u := toUnstructured(t, pytorch("replicas-int64").Obj())
				setField(t, u, int64(3000000000), "spec", "pytorchReplicaSpecs", "Worker", "replicas")
				return u
			},
			rejected: []string{"spec.pytorchReplicaSpecs.Worker.replicas"},
		},
		{
			// The API server's strict decoding answers 400, naming the field.
			name: "deeply nested unknown fields with strict field validation",
			obj: func(t *testing.T) client.Object {
				u := toUnstructured(t, pytorch("nested-strict").Obj())
				setField(t, u, nested(50), "spec", "pytorchReplicaSpecs", "Master", "template", "spec", "bogus")
				return u
			},
			opts:     []client.CreateOption{client.FieldValidation("Strict")},
			code:     http.StatusBadRequest,
			rejected: []string{"spec.pytorchReplicaSpecs.Master.template.spec.bogus"},
		},
		{
			// Pruned by the structural schema, with a warning.
			name: "deeply nested unknown fields",
			obj: func(t *testing.T) client.Object {
				u := toUnstructured(t, exit0(pytorch("nested-pruned").Obj()))
				setField(t, u, nested(50), "spec", "pytorchReplicaSpecs", "Master", "template", "spec", "bogus")
				setField(t, u, nested(50), "spec", "runPolicy", "bogus")
				return u
			},
			handled: succeeds,
		},
		{
			// Accepted (the webhook does not re-implement pod validation):
			// every pod creation fails, reported as events with backoff.
			name: "volume mount of a missing volume",
			obj: func(*testing.T) client.Object {
				return edit(pytorch("missing-volume").Obj(), master, func(s *kubeflowv1.ReplicaSpec) {
					container(s).VolumeMounts = []corev1.VolumeMount{{Name: "nowhere", MountPath: "/data"}}
				})
			},
			handled: func(ctx context.Context, s *suite, obj client.Object) (string, error) {
				msg, err := s.waitEvent(ctx, obj, "FailedCreatePod")
				return "event FailedCreatePod: " + msg, err
			},
		},
		{
			// Same-named jobs of two kinds want the same pod names.
			name: "pod-name collision between kinds",
			obj: func(t *testing.T) client.Object {
				// Its pods keep running, holding the names.
				first := testjobs.MakeXGBoostJob("collide", ns).Master(1).Workers(1).Obj()
				if err := sharedClient.Create(t.Context(), first); err != nil {
					t.Fatal(err)
				}
				return pytorch("collide").Obj()
			},
			handled: func(ctx context.Context, s *suite, obj client.Object) (string, error) {
				return s.waitCondition(ctx, obj, "ChildConflict")
			},
		},
	}
}

// nested is an object nested depth levels deep.
func nested(depth int) map[string]any {
	m := map[string]any{"leaf": "x"}
	for i := 0; i < depth; i++ {
		m = map[string]any{fmt.Sprintf("l%d", i): m}
	}
	return m
}

// sharedClient lets a case create a companion object.
var sharedClient client.Client

func TestHostileInput(t *testing.T) {
	s := start(t)
	sharedClient = s.k8s
	ctx := t.Context()
	before := readMetrics(t)

	var report []string
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj(t)
			s.warnings.take()
			err := s.k8s.Create(ctx, obj, tc.opts...)
			warnings := s.warnings.take()
			switch {
			case tc.rejected != nil:
				if err == nil {
					t.Fatalf("accepted, want a 422 naming %v", tc.rejected)
				}
				want := tc.code
				if want == 0 {
					want = http.StatusUnprocessableEntity
				}
				if got := statusCode(err); got != want {
					t.Fatalf("got %v (HTTP %d), want HTTP %d", err, got, want)
				}
				causes := fieldPaths(err)
				for _, p := range tc.rejected {
					if !containsField(causes, p) && !strings.Contains(normalizePath(err.Error()), normalizePath(p)) {
						t.Errorf("the error does not name %s: causes %v, message %.300s", p, causes, err.Error())
					}
				}
				report = append(report, fmt.Sprintf("REJECTED %-55s %v  |  %.160s", tc.name, causes, err.Error()))
			default:
				if err != nil {
					t.Fatalf("rejected (%v), want accepted and handled", err)
				}
				what, err := tc.handled(ctx, s, obj)
				if err != nil {
					t.Fatal(err)
				}
				if len(warnings) > 0 {
					what += fmt.Sprintf("; API warnings: %.120s", strings.Join(warnings, "; "))
				}
				report = append(report, fmt.Sprintf("HANDLED  %-55s %s", tc.name, what))
			}
		})
	}

	// A quiet window: nothing changes, so the operator should barely
	// reconcile. A hot loop shows up as many reconciles per job. Under load
	// (make test runs packages in parallel) the last jobs' pods may still be
	// finishing, so the window opens once reconciles have settled (at most
	// 2 in 2 s); a hot loop never settles and still shows in the window.
	settleBy := time.Now().Add(30 * time.Second)
	for prev := sum(readMetrics(t).total); time.Now().Before(settleBy); {
		time.Sleep(2 * time.Second)
		cur := sum(readMetrics(t).total)
		if cur-prev <= 2 {
			break
		}
		prev = cur
	}
	start := readMetrics(t)
	const window = 10 * time.Second
	time.Sleep(window)
	end := readMetrics(t)

	t.Logf("outcomes:\n%s", strings.Join(report, "\n"))
	total, errs, panics := delta(end.total, before.total), delta(end.errors, before.errors), delta(end.panics, before.panics)
	quiet := delta(end.total, start.total)
	jobsPerController := s.jobsPerController(ctx, t)
	// Allowance per job in the window: a couple of timer requeues and
	// the backoff retries of a job whose pods cannot be created.
	const perJob, slack = 3, 5
	var lines []string
	for _, c := range sortedKeys(total) {
		rate := 0.0
		if total[c] > 0 {
			rate = errs[c] / total[c]
		}
		lines = append(lines, fmt.Sprintf("%-24s reconciles %4.0f  errors %3.0f (rate %.2f)  panics %.0f  in the %s quiet window %3.0f (jobs %d)",
			c, total[c], errs[c], rate, panics[c], window, quiet[c], jobsPerController[c]))
		if panics[c] > 0 {
			t.Errorf("%s: %v reconcile panics", c, panics[c])
		}
		if limit := float64(perJob*jobsPerController[c] + slack); quiet[c] > limit {
			t.Errorf("%s: %v reconciles in a %s quiet window with %d jobs (limit %v): hot loop", c, quiet[c], window, jobsPerController[c], limit)
		}
	}
	t.Logf("controller-runtime reconcile metrics:\n%s", strings.Join(lines, "\n"))
	if p := end.webhookPanics - before.webhookPanics; p > 0 {
		t.Errorf("%v webhook panics", p)
	}
	if err := s.operator.Readyz(nil); err != nil {
		t.Errorf("operator not ready after the hostile input: %v", err)
	}
}

func containsField(fields []string, want string) bool {
	want = normalizePath(want)
	for _, f := range fields {
		f = normalizePath(f)
		if f == want || strings.HasPrefix(f, want+".") || strings.HasPrefix(f, want+"[") {
			return true
		}
	}
	return false
}

// mapKey is a field path's [Key] subscript that is not a list index.
var mapKey = regexp.MustCompile(`\[([A-Za-z][^\]]*)\]`)

// normalizePath spells map keys as the CRD schema does: spec.x[Worker] -> spec.x.Worker.
func normalizePath(p string) string { return mapKey.ReplaceAllString(p, ".$1") }

func statusCode(err error) int32 {
	if se, ok := err.(apierrors.APIStatus); ok {
		return se.Status().Code
	}
	return 0
}
