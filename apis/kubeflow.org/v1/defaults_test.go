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

package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// ---- builders ----

func i32(v int32) *int32 { return &v }

func str(v string) *string { return &v }

func port(name string, n int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: n}
}

func container(name string, ports ...corev1.ContainerPort) corev1.Container {
	return corev1.Container{Name: name, Image: "img", Ports: ports}
}

// replica builds a ReplicaSpec; replicas may be nil and restart may be "".
func replica(replicas *int32, restart RestartPolicy, containers ...corev1.Container) *ReplicaSpec {
	return &ReplicaSpec{
		Replicas:      replicas,
		RestartPolicy: restart,
		Template:      corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers}},
	}
}

type specs = map[ReplicaType]*ReplicaSpec

func cleanPolicy(p CleanPodPolicy) *CleanPodPolicy { return &p }

func makePyTorchJob(rs specs, mutate ...func(*PyTorchJob)) *PyTorchJob {
	j := &PyTorchJob{Spec: PyTorchJobSpec{PyTorchReplicaSpecs: rs}}
	j.Name, j.Namespace = "job", "ns"
	for _, m := range mutate {
		m(j)
	}
	return j
}

func makeTFJob(rs specs, mutate ...func(*TFJob)) *TFJob {
	j := &TFJob{Spec: TFJobSpec{TFReplicaSpecs: rs}}
	j.Name, j.Namespace = "job", "ns"
	for _, m := range mutate {
		m(j)
	}
	return j
}

func makeMPIJob(rs specs, mutate ...func(*MPIJob)) *MPIJob {
	j := &MPIJob{Spec: MPIJobSpec{MPIReplicaSpecs: rs}}
	j.Name, j.Namespace = "job", "ns"
	for _, m := range mutate {
		m(j)
	}
	return j
}

func makeXGBoostJob(rs specs, mutate ...func(*XGBoostJob)) *XGBoostJob {
	j := &XGBoostJob{Spec: XGBoostJobSpec{XGBReplicaSpecs: rs}}
	j.Name, j.Namespace = "job", "ns"
	for _, m := range mutate {
		m(j)
	}
	return j
}

func makePaddleJob(rs specs, mutate ...func(*PaddleJob)) *PaddleJob {
	j := &PaddleJob{Spec: PaddleJobSpec{PaddleReplicaSpecs: rs}}
	j.Name, j.Namespace = "job", "ns"
	for _, m := range mutate {
		m(j)
	}
	return j
}

func makeJAXJob(rs specs, mutate ...func(*JAXJob)) *JAXJob {
	j := &JAXJob{Spec: JAXJobSpec{JAXReplicaSpecs: rs}}
	j.Name, j.Namespace = "job", "ns"
	for _, m := range mutate {
		m(j)
	}
	return j
}

// ---- runner ----

type defaultCase[T any] struct {
	name string
	in   T
	want T
}

// runDefaultCases applies fn to each input, compares with want, then applies
// fn again to check idempotency.
func runDefaultCases[T interface{ DeepCopy() T }](t *testing.T, cases []defaultCase[T], fn func(T)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			fn(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("defaulted object mismatch (-want +got):\n%s", diff)
			}
			again := got.DeepCopy()
			fn(again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Fatalf("defaulting is not idempotent (-first +second):\n%s", diff)
			}
		})
	}
}

// ---- PyTorchJob ----

func TestSetDefaultsPyTorchJob(t *testing.T) {
	ptPort := port(PyTorchJobDefaultPortName, PyTorchJobDefaultPort)
	withDefaults := func(j *PyTorchJob) {
		j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone)
		j.Spec.NprocPerNode = str("auto")
	}
	cases := []defaultCase[*PyTorchJob]{
		{
			name: "empty spec",
			in:   makePyTorchJob(nil),
			want: makePyTorchJob(nil, withDefaults),
		},
		{
			name: "master and worker get replicas, restartPolicy OnFailure and port",
			in: makePyTorchJob(specs{
				"Master": replica(nil, "", container("pytorch")),
				"Worker": replica(nil, "", container("pytorch")),
			}),
			want: makePyTorchJob(specs{
				"Master": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort)),
				"Worker": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort)),
			}, withDefaults),
		},
		{
			name: "user values are kept",
			in: makePyTorchJob(specs{
				"Worker": replica(i32(3), RestartPolicyExitCode, container("pytorch", port("pytorchjob-port", 1234))),
			}, func(j *PyTorchJob) {
				j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll)
				j.Spec.NprocPerNode = str("gpu")
			}),
			want: makePyTorchJob(specs{
				"Worker": replica(i32(3), RestartPolicyExitCode, container("pytorch", port("pytorchjob-port", 1234))),
			}, func(j *PyTorchJob) {
				j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll)
				j.Spec.NprocPerNode = str("gpu")
			}),
		},
		{
			// Unset means the failure policy's cleanup (the engine's
			// finish), so it is told apart from a None the user set.
			name: "with a failure policy, cleanPodPolicy is left unset",
			in:   makePyTorchJob(nil, func(j *PyTorchJob) { j.Spec.RunPolicy.FailurePolicy = &FailurePolicy{} }),
			want: makePyTorchJob(nil, func(j *PyTorchJob) {
				j.Spec.RunPolicy.FailurePolicy = &FailurePolicy{RestartStrategy: RestartStrategyBlockingRecreate}
				j.Spec.NprocPerNode = str("auto")
			}),
		},
		{
			name: "with a failure policy, a cleanPodPolicy None the user set is kept",
			in: makePyTorchJob(nil, func(j *PyTorchJob) {
				j.Spec.RunPolicy.FailurePolicy = &FailurePolicy{}
				j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone)
			}),
			want: makePyTorchJob(nil, withDefaults, func(j *PyTorchJob) {
				j.Spec.RunPolicy.FailurePolicy = &FailurePolicy{RestartStrategy: RestartStrategyBlockingRecreate}
			}),
		},
		{
			name: "replica type names are normalized",
			in: makePyTorchJob(specs{
				"master": replica(nil, "", container("pytorch")),
				"WORKER": replica(i32(2), "", container("pytorch")),
			}),
			want: makePyTorchJob(specs{
				"Master": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort)),
				"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort)),
			}, withDefaults),
		},
		{
			name: "canonical key is never overwritten by another spelling",
			in: makePyTorchJob(specs{
				"Worker": replica(i32(2), "", container("pytorch")),
				"worker": replica(i32(5), "", container("pytorch")),
			}),
			want: makePyTorchJob(specs{
				"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort)),
				"worker": replica(i32(5), RestartPolicyOnFailure, container("pytorch", ptPort)),
			}, withDefaults),
		},
		{
			name: "port goes to the container named pytorch",
			in: makePyTorchJob(specs{
				"Worker": replica(i32(1), "", container("sidecar"), container("pytorch")),
			}),
			want: makePyTorchJob(specs{
				"Worker": replica(i32(1), RestartPolicyOnFailure, container("sidecar"), container("pytorch", ptPort)),
			}, withDefaults),
		},
		{
			name: "port goes to container 0 when none is named pytorch",
			in: makePyTorchJob(specs{
				"Worker": replica(i32(1), "", container("main", port("http", 80)), container("sidecar")),
			}),
			want: makePyTorchJob(specs{
				"Worker": replica(i32(1), RestartPolicyOnFailure, container("main", port("http", 80), ptPort), container("sidecar")),
			}, withDefaults),
		},
		{
			name: "nil replica spec and pod without containers do not panic",
			in: makePyTorchJob(specs{
				"Master": nil,
				"Worker": replica(nil, ""),
			}),
			want: makePyTorchJob(specs{
				"Master": nil,
				"Worker": replica(i32(1), RestartPolicyOnFailure),
			}, withDefaults),
		},
		{
			name: "suspend and managedBy are never touched",
			in: makePyTorchJob(specs{"Worker": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort))},
				func(j *PyTorchJob) {
					j.Spec.RunPolicy.Suspend = new(bool)
					j.Spec.RunPolicy.ManagedBy = str(MultiKueueController)
				}),
			want: makePyTorchJob(specs{"Worker": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort))},
				withDefaults, func(j *PyTorchJob) {
					j.Spec.RunPolicy.Suspend = new(bool)
					j.Spec.RunPolicy.ManagedBy = str(MultiKueueController)
				}),
		},
		{
			name: "elastic: min and max set are kept",
			in: makePyTorchJob(specs{"Worker": replica(i32(2), "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(4)}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(4)}
			}),
		},
		{
			name: "elastic: only max set is kept, min stays unset",
			in: makePyTorchJob(specs{"Worker": replica(i32(2), "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MaxReplicas: i32(4)}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MaxReplicas: i32(4)}
			}),
		},
		{
			name: "elastic: only min set is kept, max stays unset",
			in: makePyTorchJob(specs{"Worker": replica(i32(2), "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(3)}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(3)}
			}),
		},
		{
			name: "elastic: neither set stays unset (they follow the Worker replicas at use time)",
			in: makePyTorchJob(specs{"worker": replica(i32(5), "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(5), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
		},
		{
			name: "elastic: neither set stays unset with defaulted Worker replicas",
			in: makePyTorchJob(specs{"Worker": replica(nil, "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
		},
		{
			name: "elastic without Worker is skipped",
			in: makePyTorchJob(specs{"Master": replica(nil, "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
			want: makePyTorchJob(specs{"Master": replica(i32(1), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
		},
		{
			name: "elastic with nil Worker is skipped",
			in: makePyTorchJob(specs{"Worker": nil}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
			want: makePyTorchJob(specs{"Worker": nil}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{}
			}),
		},
		{
			name: "deprecated elastic nProcPerNode prevents nprocPerNode auto",
			in: makePyTorchJob(specs{"Worker": replica(i32(2), "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(2), NProcPerNode: i32(4)}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort))}, func(j *PyTorchJob) {
				j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone)
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(2), NProcPerNode: i32(4)}
			}),
		},
		{
			name: "elastic without nProcPerNode still gets nprocPerNode auto",
			in: makePyTorchJob(specs{"Worker": replica(i32(2), "", container("pytorch"))}, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(2)}
			}),
			want: makePyTorchJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("pytorch", ptPort))}, withDefaults, func(j *PyTorchJob) {
				j.Spec.ElasticPolicy = &ElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(2)}
			}),
		},
	}
	runDefaultCases(t, cases, SetDefaults_PyTorchJob)
}

// ---- TFJob ----

func TestSetDefaultsTFJob(t *testing.T) {
	tfPort := port(TFJobDefaultPortName, TFJobDefaultPort)
	withDefaults := func(j *TFJob) {
		j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone)
		sp := SuccessPolicyDefault
		j.Spec.SuccessPolicy = &sp
	}
	cases := []defaultCase[*TFJob]{
		{
			name: "empty spec gets cleanPodPolicy None and successPolicy pointer to empty",
			in:   makeTFJob(nil),
			want: makeTFJob(nil, withDefaults),
		},
		{
			name: "every type is normalized and defaulted",
			in: makeTFJob(specs{
				"ps":        replica(nil, "", container("tensorflow")),
				"WORKER":    replica(i32(4), "", container("tensorflow")),
				"chief":     replica(nil, "", container("tensorflow")),
				"evaluator": replica(nil, "", container("tensorflow")),
			}),
			want: makeTFJob(specs{
				"PS":        replica(i32(1), RestartPolicyNever, container("tensorflow", tfPort)),
				"Worker":    replica(i32(4), RestartPolicyNever, container("tensorflow", tfPort)),
				"Chief":     replica(i32(1), RestartPolicyNever, container("tensorflow", tfPort)),
				"Evaluator": replica(i32(1), RestartPolicyNever, container("tensorflow", tfPort)),
			}, withDefaults),
		},
		{
			name: "master is normalized",
			in:   makeTFJob(specs{"mAsTeR": replica(nil, "", container("tensorflow"))}),
			want: makeTFJob(specs{"Master": replica(i32(1), RestartPolicyNever, container("tensorflow", tfPort))}, withDefaults),
		},
		{
			name: "user values are kept",
			in: makeTFJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("tensorflow", port("tfjob-port", 3333)))},
				func(j *TFJob) {
					sp := SuccessPolicyAllWorkers
					j.Spec.SuccessPolicy = &sp
					j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyRunning)
				}),
			want: makeTFJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("tensorflow", port("tfjob-port", 3333)))},
				func(j *TFJob) {
					sp := SuccessPolicyAllWorkers
					j.Spec.SuccessPolicy = &sp
					j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyRunning)
				}),
		},
		{
			name: "port falls back to container 0",
			in:   makeTFJob(specs{"Worker": replica(nil, "", container("main"), container("side"))}),
			want: makeTFJob(specs{"Worker": replica(i32(1), RestartPolicyNever, container("main", tfPort), container("side"))}, withDefaults),
		},
		{
			name: "nil spec, no containers, suspend and managedBy",
			in: makeTFJob(specs{"PS": nil, "Worker": replica(nil, "")}, func(j *TFJob) {
				j.Spec.RunPolicy.Suspend = func() *bool { b := true; return &b }()
				j.Spec.RunPolicy.ManagedBy = str(KubeflowJobsController)
			}),
			want: makeTFJob(specs{"PS": nil, "Worker": replica(i32(1), RestartPolicyNever)}, withDefaults, func(j *TFJob) {
				j.Spec.RunPolicy.Suspend = func() *bool { b := true; return &b }()
				j.Spec.RunPolicy.ManagedBy = str(KubeflowJobsController)
			}),
		},
	}
	runDefaultCases(t, cases, SetDefaults_TFJob)
}

// ---- MPIJob ----

func TestSetDefaultsMPIJob(t *testing.T) {
	specPolicy := func(p CleanPodPolicy) func(*MPIJob) {
		return func(j *MPIJob) { j.Spec.CleanPodPolicy = cleanPolicy(p) }
	}
	runPolicy := func(p CleanPodPolicy) func(*MPIJob) {
		return func(j *MPIJob) { j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(p) }
	}
	cases := []defaultCase[*MPIJob]{
		{
			// The stored default goes to the field of lower precedence, so a
			// later update of either field still takes effect.
			name: "empty spec: spec.cleanPodPolicy None, runPolicy's left unset",
			in:   makeMPIJob(nil),
			want: makeMPIJob(nil, specPolicy(CleanPodPolicyNone)),
		},
		{
			name: "launcher 1, worker 0, restartPolicy Never, no port, no normalization",
			in: makeMPIJob(specs{
				"Launcher": replica(nil, "", container("mpi")),
				"Worker":   replica(nil, "", container("mpi")),
				"worker":   replica(nil, "", container("mpi")),
			}),
			want: makeMPIJob(specs{
				"Launcher": replica(i32(1), RestartPolicyNever, container("mpi")),
				"Worker":   replica(i32(0), RestartPolicyNever, container("mpi")),
				"worker":   replica(nil, "", container("mpi")),
			}, specPolicy(CleanPodPolicyNone)),
		},
		{
			name: "user replicas and restartPolicy are kept",
			in: makeMPIJob(specs{
				"Launcher": replica(i32(1), RestartPolicyOnFailure, container("mpi")),
				"Worker":   replica(i32(4), RestartPolicyExitCode, container("mpi")),
			}),
			want: makeMPIJob(specs{
				"Launcher": replica(i32(1), RestartPolicyOnFailure, container("mpi")),
				"Worker":   replica(i32(4), RestartPolicyExitCode, container("mpi")),
			}, specPolicy(CleanPodPolicyNone)),
		},
		{
			name: "with a failure policy, neither cleanPodPolicy is defaulted",
			in:   makeMPIJob(nil, func(j *MPIJob) { j.Spec.RunPolicy.FailurePolicy = &FailurePolicy{} }),
			want: makeMPIJob(nil, func(j *MPIJob) {
				j.Spec.RunPolicy.FailurePolicy = &FailurePolicy{RestartStrategy: RestartStrategyBlockingRecreate}
			}),
		},
		{
			name: "only deprecated spec.cleanPodPolicy set: kept, not copied to runPolicy",
			in:   makeMPIJob(nil, specPolicy(CleanPodPolicyRunning)),
			want: makeMPIJob(nil, specPolicy(CleanPodPolicyRunning)),
		},
		{
			name: "only runPolicy.cleanPodPolicy set: kept, not copied to spec",
			in:   makeMPIJob(nil, runPolicy(CleanPodPolicyAll)),
			want: makeMPIJob(nil, runPolicy(CleanPodPolicyAll)),
		},
		{
			name: "both set and different: both kept",
			in:   makeMPIJob(nil, specPolicy(CleanPodPolicyAll), runPolicy(CleanPodPolicyRunning)),
			want: makeMPIJob(nil, specPolicy(CleanPodPolicyAll), runPolicy(CleanPodPolicyRunning)),
		},
		{
			name: "nil replica specs, suspend and managedBy",
			in: makeMPIJob(specs{"Launcher": nil, "Worker": nil}, func(j *MPIJob) {
				j.Spec.RunPolicy.Suspend = new(bool)
				j.Spec.RunPolicy.ManagedBy = str(MultiKueueController)
			}),
			want: makeMPIJob(specs{"Launcher": nil, "Worker": nil}, specPolicy(CleanPodPolicyNone), func(j *MPIJob) {
				j.Spec.RunPolicy.Suspend = new(bool)
				j.Spec.RunPolicy.ManagedBy = str(MultiKueueController)
			}),
		},
	}
	runDefaultCases(t, cases, SetDefaults_MPIJob)
}

func TestEffectiveCleanPodPolicyMPIJob(t *testing.T) {
	cases := map[string]struct {
		mutate []func(*MPIJob)
		want   CleanPodPolicy
	}{
		"neither":        {want: CleanPodPolicyNone},
		"only spec":      {mutate: []func(*MPIJob){func(j *MPIJob) { j.Spec.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll) }}, want: CleanPodPolicyAll},
		"only runPolicy": {mutate: []func(*MPIJob){func(j *MPIJob) { j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyRunning) }}, want: CleanPodPolicyRunning},
		"runPolicy wins": {mutate: []func(*MPIJob){func(j *MPIJob) {
			j.Spec.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll)
			j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyRunning)
		}}, want: CleanPodPolicyRunning},
		"empty is unset": {mutate: []func(*MPIJob){func(j *MPIJob) {
			j.Spec.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll)
			j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy("")
		}}, want: CleanPodPolicyAll},
		"both empty: None": {mutate: []func(*MPIJob){func(j *MPIJob) {
			j.Spec.CleanPodPolicy = cleanPolicy("")
			j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy("")
		}}, want: CleanPodPolicyNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EffectiveCleanPodPolicy(makeMPIJob(nil, tc.mutate...)); got != tc.want {
				t.Errorf("EffectiveCleanPodPolicy = %q, want %q", got, tc.want)
			}
		})
	}
}

// ---- XGBoostJob ----

func TestSetDefaultsXGBoostJob(t *testing.T) {
	xgbPort := port(XGBoostJobDefaultPortName, XGBoostJobDefaultPort)
	withDefaults := func(j *XGBoostJob) { j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone) }
	cases := []defaultCase[*XGBoostJob]{
		{
			name: "empty spec",
			in:   makeXGBoostJob(nil),
			want: makeXGBoostJob(nil, withDefaults),
		},
		{
			name: "normalized and defaulted",
			in: makeXGBoostJob(specs{
				"master": replica(nil, "", container("xgboost")),
				"Worker": replica(i32(2), "", container("xgboost")),
			}),
			want: makeXGBoostJob(specs{
				"Master": replica(i32(1), RestartPolicyNever, container("xgboost", xgbPort)),
				"Worker": replica(i32(2), RestartPolicyNever, container("xgboost", xgbPort)),
			}, withDefaults),
		},
		{
			name: "user port 9991 with the default name is kept",
			in:   makeXGBoostJob(specs{"Master": replica(i32(1), "", container("xgboost", port("xgboostjob-port", 9991)))}),
			want: makeXGBoostJob(specs{"Master": replica(i32(1), RestartPolicyNever, container("xgboost", port("xgboostjob-port", 9991)))}, withDefaults),
		},
		{
			name: "port falls back to container 0; nil spec skipped",
			in:   makeXGBoostJob(specs{"Master": replica(nil, "", container("main")), "Worker": nil}),
			want: makeXGBoostJob(specs{"Master": replica(i32(1), RestartPolicyNever, container("main", xgbPort)), "Worker": nil}, withDefaults),
		},
	}
	runDefaultCases(t, cases, SetDefaults_XGBoostJob)
}

// ---- PaddleJob ----

func TestSetDefaultsPaddleJob(t *testing.T) {
	pdPort := port(PaddleJobDefaultPortName, PaddleJobDefaultPort)
	withDefaults := func(j *PaddleJob) { j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone) }
	cases := []defaultCase[*PaddleJob]{
		{
			name: "empty spec",
			in:   makePaddleJob(nil),
			want: makePaddleJob(nil, withDefaults),
		},
		{
			name: "normalized and defaulted with OnFailure and port master:36543",
			in: makePaddleJob(specs{
				"MASTER": replica(nil, "", container("paddle")),
				"worker": replica(nil, "", container("paddle")),
			}),
			want: makePaddleJob(specs{
				"Master": replica(i32(1), RestartPolicyOnFailure, container("paddle", pdPort)),
				"Worker": replica(i32(1), RestartPolicyOnFailure, container("paddle", pdPort)),
			}, withDefaults),
		},
		{
			name: "user port 37777 named master is kept",
			in:   makePaddleJob(specs{"Worker": replica(i32(2), RestartPolicyNever, container("paddle", port("master", 37777)))}),
			want: makePaddleJob(specs{"Worker": replica(i32(2), RestartPolicyNever, container("paddle", port("master", 37777)))}, withDefaults),
		},
		{
			name: "elastic: only max",
			in: makePaddleJob(specs{"Worker": replica(i32(2), "", container("paddle"))}, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{MaxReplicas: i32(6)}
			}),
			want: makePaddleJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("paddle", pdPort))}, withDefaults, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{MaxReplicas: i32(6)}
			}),
		},
		{
			name: "elastic: only min",
			in: makePaddleJob(specs{"Worker": replica(i32(2), "", container("paddle"))}, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{MinReplicas: i32(1)}
			}),
			want: makePaddleJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("paddle", pdPort))}, withDefaults, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{MinReplicas: i32(1)}
			}),
		},
		{
			name: "elastic: both set",
			in: makePaddleJob(specs{"Worker": replica(i32(2), "", container("paddle"))}, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(3), MaxRestarts: i32(2)}
			}),
			want: makePaddleJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("paddle", pdPort))}, withDefaults, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{MinReplicas: i32(1), MaxReplicas: i32(3), MaxRestarts: i32(2)}
			}),
		},
		{
			name: "elastic: neither set stays unset",
			in: makePaddleJob(specs{"Worker": replica(i32(3), "", container("paddle"))}, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{}
			}),
			want: makePaddleJob(specs{"Worker": replica(i32(3), RestartPolicyOnFailure, container("paddle", pdPort))}, withDefaults, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{}
			}),
		},
		{
			name: "elastic without Worker is skipped",
			in: makePaddleJob(specs{"Master": replica(i32(1), "", container("paddle"))}, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{}
			}),
			want: makePaddleJob(specs{"Master": replica(i32(1), RestartPolicyOnFailure, container("paddle", pdPort))}, withDefaults, func(j *PaddleJob) {
				j.Spec.ElasticPolicy = &PaddleElasticPolicy{}
			}),
		},
		{
			name: "nil spec, suspend and managedBy",
			in: makePaddleJob(specs{"Worker": nil}, func(j *PaddleJob) {
				j.Spec.RunPolicy.Suspend = new(bool)
				j.Spec.RunPolicy.ManagedBy = str(MultiKueueController)
			}),
			want: makePaddleJob(specs{"Worker": nil}, withDefaults, func(j *PaddleJob) {
				j.Spec.RunPolicy.Suspend = new(bool)
				j.Spec.RunPolicy.ManagedBy = str(MultiKueueController)
			}),
		},
	}
	runDefaultCases(t, cases, SetDefaults_PaddleJob)
}

// ---- JAXJob ----

func TestSetDefaultsJAXJob(t *testing.T) {
	jaxPort := port(JAXJobDefaultPortName, JAXJobDefaultPort)
	withDefaults := func(j *JAXJob) { j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyNone) }
	cases := []defaultCase[*JAXJob]{
		{
			name: "empty spec",
			in:   makeJAXJob(nil),
			want: makeJAXJob(nil, withDefaults),
		},
		{
			name: "worker normalized and defaulted",
			in:   makeJAXJob(specs{"worker": replica(nil, "", container("jax"))}),
			want: makeJAXJob(specs{"Worker": replica(i32(1), RestartPolicyNever, container("jax", jaxPort))}, withDefaults),
		},
		{
			name: "user values kept",
			in: makeJAXJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("jax", port("jaxjob-port", 7777)))}, func(j *JAXJob) {
				j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll)
			}),
			want: makeJAXJob(specs{"Worker": replica(i32(2), RestartPolicyOnFailure, container("jax", port("jaxjob-port", 7777)))}, func(j *JAXJob) {
				j.Spec.RunPolicy.CleanPodPolicy = cleanPolicy(CleanPodPolicyAll)
			}),
		},
		{
			name: "port falls back to container 0; nil spec skipped",
			in:   makeJAXJob(specs{"Worker": replica(nil, "", container("main"), container("jax-sidecar"))}),
			want: makeJAXJob(specs{"Worker": replica(i32(1), RestartPolicyNever, container("main", jaxPort), container("jax-sidecar"))}, withDefaults),
		},
		{
			name: "nil spec",
			in:   makeJAXJob(specs{"Worker": nil}),
			want: makeJAXJob(specs{"Worker": nil}, withDefaults),
		},
	}
	runDefaultCases(t, cases, SetDefaults_JAXJob)
}

func TestSetDefaultsNilJob(t *testing.T) {
	SetDefaults_PyTorchJob(nil)
	SetDefaults_TFJob(nil)
	SetDefaults_MPIJob(nil)
	SetDefaults_XGBoostJob(nil)
	SetDefaults_PaddleJob(nil)
	SetDefaults_JAXJob(nil)
}

func TestIsChiefOrMaster(t *testing.T) {
	for typ, want := range map[ReplicaType]bool{
		"Chief": true, "Master": true, "chief": false, "Worker": false, "PS": false, "Evaluator": false,
	} {
		if got := IsChiefOrMaster(typ); got != want {
			t.Errorf("IsChiefOrMaster(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestSetDefaultContainerNames(t *testing.T) {
	cases := map[string]struct {
		in, want []string
	}{
		"seed MPIJob: one unnamed container": {in: []string{""}, want: []string{"mpi"}},
		"default name taken":                 {in: []string{"mpi", ""}, want: []string{"mpi", "mpi-1"}},
		"several unnamed":                    {in: []string{"", "", "side"}, want: []string{"mpi", "mpi-1", "side"}},
		"all named untouched":                {in: []string{"a", "b"}, want: []string{"a", "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var spec corev1.PodSpec
			for _, n := range tc.in {
				spec.Containers = append(spec.Containers, corev1.Container{Name: n})
			}
			setDefaultContainerNames(&spec, "mpi")
			var got []string
			for _, c := range spec.Containers {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}
