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

package webhooks_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	tj "github.com/seed-d8a409e9/training-operator/internal/testjobs"
	"github.com/seed-d8a409e9/training-operator/test/seed"
	"github.com/seed-d8a409e9/training-operator/webhooks"
)

// The fuzz targets feed arbitrary specs of one kind through the webhooks'
// defaulting and validation, as the API server would call them, and check:
//   - neither panics;
//   - defaulting is idempotent, also across the JSON round trip the mutating
//     webhook's patch and the API server's storage put between it and the
//     validating webhook;
//   - a job valid after defaulting stays valid when defaulted again, and an
//     unchanged update of it is accepted too (else a stored job could never
//     be relabelled);
//   - every rejection names a field, so the API server's answer points at it.
//
// make fuzz runs each for a minute; go test runs the seeds below.

func FuzzPyTorchJob(f *testing.F) {
	fuzzKind(f, "PyTorchJob", kubeflowv1.SetDefaults_PyTorchJob, webhooks.ValidatePyTorchJob,
		tj.MakePyTorchJob("pt", "ns").Master(1).Workers(3).Obj(),
		tj.MakePyTorchJob("pt-elastic", "ns").Workers(2).Elastic(1, 4, tj.CPUMetric(80)).NprocPerNode("2").Obj(),
		tj.MakePyTorchJob("pt-policy", "ns").Master(1).Workers(1).BackoffLimit(2).ActiveDeadlineSeconds(30).
			TTLSecondsAfterFinished(60).CleanPodPolicy(kubeflowv1.CleanPodPolicyAll).Suspend(true).
			ManagedBy(kubeflowv1.MultiKueueController).Obj(),
		tj.MakePyTorchJob("pt-bad", "ns").Master(2).Workers(0).Obj(),
		tj.MakePyTorchJob("pt-fp", "ns").Master(1).Workers(2).FailurePolicy(fuzzFailurePolicy("pytorch")).Obj(),
		tj.MakePyTorchJob("pt-fp-bad", "ns").Workers(2).Elastic(1, 2).FailurePolicy(badFailurePolicy()).Obj(),
	)
}

func FuzzTFJob(f *testing.F) {
	fuzzKind(f, "TFJob", kubeflowv1.SetDefaults_TFJob, webhooks.ValidateTFJob,
		tj.MakeTFJob("tf", "ns").Chief(1).PS(1).Workers(2).Evaluator(1).Obj(),
		tj.MakeTFJob("tf-dyn", "ns").Workers(3).EnableDynamicWorker(true).SuccessPolicy(kubeflowv1.SuccessPolicyAllWorkers).Obj(),
		tj.MakeTFJob("tf-bad", "ns").Chief(2).Master(1).Obj(),
		tj.WithFailurePolicy(tj.MakeTFJob("tf-fp", "ns").Chief(1).Workers(2).Obj(), fuzzFailurePolicy("tensorflow")),
	)
}

func FuzzMPIJob(f *testing.F) {
	fuzzKind(f, "MPIJob", kubeflowv1.SetDefaults_MPIJob, webhooks.ValidateMPIJob,
		tj.MakeMPIJob("mpi", "ns").Launcher().Workers(2).SlotsPerWorker(4).GPUs(kubeflowv1.MPIJobReplicaTypeWorker, 1).Obj(),
		tj.MakeMPIJob("mpi-clean", "ns").Launcher().Workers(1).CleanPodPolicy(kubeflowv1.CleanPodPolicyRunning).Suspend(true).Obj(),
		tj.MakeMPIJob("mpi-bad", "ns").Workers(1).Obj(),
		tj.WithFailurePolicy(tj.MakeMPIJob("mpi-fp", "ns").Launcher().Workers(2).Obj(), fuzzFailurePolicy("mpi")),
	)
}

func FuzzXGBoostJob(f *testing.F) {
	fuzzKind(f, "XGBoostJob", kubeflowv1.SetDefaults_XGBoostJob, webhooks.ValidateXGBoostJob,
		tj.MakeXGBoostJob("xgb", "ns").Master(1).Workers(3).Obj(),
		tj.MakeXGBoostJob("xgb-port", "ns").Master(1).Workers(1).Port(kubeflowv1.XGBoostJobReplicaTypeMaster, 9999).Obj(),
		tj.MakeXGBoostJob("xgb-bad", "ns").Workers(2).Obj(),
		tj.WithFailurePolicy(tj.MakeXGBoostJob("xgb-fp", "ns").Master(1).Workers(1).Obj(), badFailurePolicy()),
	)
}

func FuzzPaddleJob(f *testing.F) {
	fuzzKind(f, "PaddleJob", kubeflowv1.SetDefaults_PaddleJob, webhooks.ValidatePaddleJob,
		tj.MakePaddleJob("pd", "ns").Master(1).Workers(2).Obj(),
		tj.MakePaddleJob("pd-elastic", "ns").Workers(2).Elastic(1, 3, tj.CPUMetric(50)).Obj(),
		tj.MakePaddleJob("pd-bad", "ns").Master(3).Obj(),
		tj.WithFailurePolicy(tj.MakePaddleJob("pd-fp", "ns").Master(1).Workers(2).Obj(), fuzzFailurePolicy("paddle")),
	)
}

func FuzzJAXJob(f *testing.F) {
	fuzzKind(f, "JAXJob", kubeflowv1.SetDefaults_JAXJob, webhooks.ValidateJAXJob,
		tj.MakeJAXJob("jax", "ns").Workers(2).Port(6666).Obj(),
		tj.MakeJAXJob("jax-bad", "ns").Workers(0).Obj(),
		tj.WithFailurePolicy(tj.MakeJAXJob("jax-fp", "ns").Workers(2).Obj(), fuzzFailurePolicy("jax")),
	)
}

// fuzzFailurePolicy is a valid policy with every kind of rule; container is
// the kind's default container.
func fuzzFailurePolicy(container string) *kubeflowv1.FailurePolicy {
	return tj.MakeFailurePolicy(2).Strategy(kubeflowv1.RestartStrategyRecreate).
		Rule("infra", kubeflowv1.RestartJobAndIgnoreMaxRestartsAction).OnPodCondition(corev1.DisruptionTarget).
		Rule("user", kubeflowv1.FailJobAction).OnExitCodes(container, kubeflowv1.FailurePolicyOnExitCodesOpIn, 1, 2).
		Rule("oom", kubeflowv1.UseReplicaRestartPolicyAction).OnExitCodes("", kubeflowv1.FailurePolicyOnExitCodesOpIn, 137).
		Rule("rest", kubeflowv1.RestartJobAction).Obj()
}

// badFailurePolicy has one of each rejection that names a field.
func badFailurePolicy() *kubeflowv1.FailurePolicy {
	return tj.MakeFailurePolicy(-1).Strategy("Sometimes").
		Rule("dup", "Retry", "Nobody").OnExitCodes("nosuch", "Gt", 0, 256, 3, 3).
		Rule("dup", kubeflowv1.FailJobAction).Obj()
}

// fuzzKind seeds the corpus with the seed document's manifest of the kind
// (when it has one), the builder jobs, and their defaulted forms, then runs
// the checks on every input that decodes into the kind.
func fuzzKind[T interface {
	*J
	client.Object
}, J any](f *testing.F, kind string, setDefaults func(T), validate func(old, new T) (field.ErrorList, admission.Warnings), builtJobs ...T) {
	manifests, err := seed.Manifests()
	if err != nil {
		f.Fatalf("reading the seed manifests: %v", err)
	}
	if m, ok := manifests[kind]; ok {
		f.Add([]byte(m))
	}
	for _, j := range builtJobs {
		raw, err := json.Marshal(j)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
		d := deepCopy(j)
		setDefaults(d)
		if raw, err = yaml.Marshal(d); err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		in := T(new(J))
		// sigs.k8s.io/yaml reads JSON and YAML, as kubectl would send either.
		if err := yaml.Unmarshal(data, in); err != nil {
			t.Skip()
		}

		once := deepCopy(in)
		setDefaults(once)
		twice := deepCopy(once)
		setDefaults(twice)
		if !equality.Semantic.DeepEqual(once, twice) {
			t.Fatalf("defaulting is not idempotent (-once +twice):\n%s", cmp.Diff(once, twice))
		}

		// The defaulted job as the validating webhook decodes it after storage.
		raw, err := json.Marshal(once)
		if err != nil {
			t.Fatalf("encoding the defaulted job: %v", err)
		}
		stored := T(new(J))
		if err := json.Unmarshal(raw, stored); err != nil {
			t.Fatalf("decoding the defaulted job %s: %v", raw, err)
		}
		storedDefaulted := deepCopy(stored)
		setDefaults(storedDefaulted)
		if !equality.Semantic.DeepEqual(stored, storedDefaulted) {
			t.Fatalf("defaulting changes the stored defaulted job (-stored +defaulted again):\n%s", cmp.Diff(stored, storedDefaulted))
		}

		errs, _ := validate(nil, once)
		requireFieldPaths(t, "create", errs)
		if len(errs) > 0 {
			return
		}
		errs, _ = validate(nil, twice)
		requireFieldPaths(t, "create after defaulting again", errs)
		if len(errs) > 0 {
			t.Fatalf("a valid defaulted job is rejected after defaulting again: %v", errs.ToAggregate())
		}
		errs, _ = validate(once, storedDefaulted)
		requireFieldPaths(t, "unchanged update", errs)
		if len(errs) > 0 {
			t.Fatalf("an unchanged update of a valid job is rejected: %v", errs.ToAggregate())
		}
	})
}

// requireFieldPaths fails unless every error names a field and a type.
func requireFieldPaths(t *testing.T, op string, errs field.ErrorList) {
	t.Helper()
	for i, e := range errs {
		if e == nil {
			t.Fatalf("%s: error %d of %d is nil", op, i+1, len(errs))
		}
		if e.Field == "" || e.Type == "" {
			t.Fatalf("%s: error without a field path or type: %q", op, e.Error())
		}
	}
}

func deepCopy[T client.Object](obj T) T { return obj.DeepCopyObject().(T) }
