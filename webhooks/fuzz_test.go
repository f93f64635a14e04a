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
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/seed"
	tj "github.com/seed-d8a409e9/training-operator/test/testjobs"
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
//   - every rejection names a field, so the API server's answer points at it,
//     and that field exists in the JSON form of the validated job (for
//     Required and NotFound, its parent), so the answer points at the user's
//     mistake and not at a made-up or misspelt path;
//   - validation is deterministic across the JSON storage round trip: the
//     stored defaulted job gets the same errors and warnings as the job the
//     mutating webhook returned, rejected or not.
//
// make fuzz runs each for a minute; go test runs the seeds: the builder jobs
// below and testdata/corpus/<Kind>/*.yaml (v1's examples, which must be
// accepted, and reject-*.yaml, which must be rejected for the fields their
// "# want:" lines name).

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
// (when it has one), the kind's files in testdata/corpus, the builder jobs,
// and their defaulted forms, then runs the checks on every input that
// decodes into the kind.
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
	// The corpus files' verdicts are checked in the fuzz function, after the
	// properties, for the input that is the file.
	corpus := map[string]corpusFile{}
	for _, c := range readCorpus(f, kind) {
		if err := yaml.UnmarshalStrict(c.data, T(new(J))); err != nil {
			f.Fatalf("%s: %v", c.path, err) // a misspelt field would be dropped silently
		}
		corpus[string(c.data)] = c
		f.Add(c.data)
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
		c, isCorpusFile := corpus[string(data)]
		if isCorpusFile {
			t.Logf("input: %s", c.path) // shown on failure
		}
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

		errs, warnings := validate(nil, once)
		requireFieldPaths(t, "create", errs)
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("decoding the defaulted job %s: %v", raw, err)
		}
		requireExistingFields(t, doc, raw, errs)

		// The validating webhook judges the stored form, defaulted again;
		// either must get the verdict the mutating webhook's output gets.
		for _, j := range []struct {
			name string
			job  T
		}{{"stored", stored}, {"stored and defaulted again", storedDefaulted}} {
			jErrs, jWarnings := validate(nil, j.job)
			if diff := cmp.Diff(errorStrings(errs), errorStrings(jErrs)); diff != "" {
				t.Fatalf("validation of the %s job differs (-defaulted +%s):\n%s", j.name, j.name, diff)
			}
			if diff := cmp.Diff(warnings, jWarnings, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("warnings of the %s job differ (-defaulted +%s):\n%s", j.name, j.name, diff)
			}
		}
		if isCorpusFile {
			requireVerdict(t, c, errs)
		}
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

func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// requireExistingFields fails unless every error's field path resolves in
// doc, the JSON form of the validated job; raw is that form, for the
// message. Required and NotFound errors name what is missing, so only
// their parent must exist.
func requireExistingFields(t *testing.T, doc any, raw []byte, errs field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		parentOnly := e.Type == field.ErrorTypeRequired || e.Type == field.ErrorTypeNotFound
		if !resolvePath(doc, e.Field, true, parentOnly) {
			what := "field"
			if parentOnly {
				what = "parent of the field"
			}
			t.Fatalf("the %s of a rejection is not in the validated job:\n  %v\njob: %s", what, e, raw)
		}
	}
}

// resolvePath reports whether path, in field.Path's string form
// (spec.tfReplicaSpecs[Worker].template.spec.containers[0].image), names a
// value in node, a JSON document decoded into any. Map keys may hold '.',
// '[' and ']' (replica types and label keys are user input), so the path is
// matched against the document's keys rather than split. first is true at
// the start of the path, which has no leading '.'. With parentOnly the last
// element may be missing from a value that exists, null included (a nil map
// is stored as null: spec.pytorchReplicaSpecs[Worker] may be required of it).
func resolvePath(node any, path string, first, parentOnly bool) bool {
	if path == "" {
		return true
	}
	if node == nil {
		return parentOnly && isLastElement(path, first)
	}
	if rest, ok := strings.CutPrefix(path, "["); ok {
		switch n := node.(type) {
		case []any:
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return false
			}
			i, err := strconv.Atoi(rest[:end])
			if err != nil || i < 0 {
				return false
			}
			if i < len(n) {
				return resolvePath(n[i], rest[end+1:], false, parentOnly)
			}
			return parentOnly && rest[end+1:] == ""
		case map[string]any:
			for k, v := range n {
				if after, ok := strings.CutPrefix(rest, k+"]"); ok && resolvePath(v, after, false, parentOnly) {
					return true
				}
			}
			return parentOnly && isLastElement(path, first)
		}
		return false
	}
	if !first {
		var ok bool
		if path, ok = strings.CutPrefix(path, "."); !ok {
			return false
		}
	}
	n, ok := node.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range n {
		after, ok := strings.CutPrefix(path, k)
		if ok && (after == "" || after[0] == '.' || after[0] == '[') && resolvePath(v, after, false, parentOnly) {
			return true
		}
	}
	return parentOnly && isLastElement(path, true) // path has lost its '.'
}

// isLastElement reports whether path is a single element: "[key]" (a key
// without ']'), or a name with the leading '.' unless first.
func isLastElement(path string, first bool) bool {
	if rest, ok := strings.CutPrefix(path, "["); ok {
		key, ok := strings.CutSuffix(rest, "]")
		return ok && !strings.Contains(key, "]")
	}
	if !first {
		var ok bool
		if path, ok = strings.CutPrefix(path, "."); !ok {
			return false
		}
	}
	return path != "" && !strings.ContainsAny(path, ".[")
}

// TestResolvePath pins the path check the fuzz targets rely on: a resolver
// that accepted everything would let every made-up path pass.
func TestResolvePath(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"j","labels":{"a.b/c":"x"}},"spec":{
		"tfReplicaSpecs":{"Worker":{"template":{"spec":{"containers":[{"name":"tensorflow"}]}}},"a]b.c":{},"Chief":null},
		"pytorchReplicaSpecs":null}}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path             string
		exists, required bool
	}{
		{path: "metadata.name", exists: true, required: true},
		{path: "metadata.namespace", required: true},
		{path: "metadata.labels[a.b/c]", exists: true, required: true},
		{path: "metadata.labels[a]", required: true},
		{path: "metadata.nam", required: true},
		{path: "metadata", exists: true, required: true},
		{path: "metadata.name.first"},
		{path: "spec.tfReplicaSpecs[Worker].template.spec.containers[0].name", exists: true, required: true},
		{path: "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image", required: true},
		{path: "spec.tfReplicaSpecs[Worker].template.spec.containers[1]", required: true},
		{path: "spec.tfReplicaSpecs[Worker].template.spec.containers[1].image"},
		{path: "spec.tfReplicaSpecs[Worker].template.spec.containers[x]"},
		{path: "spec.tfReplicaSpecs[Worker].template.spec.containers.name"},
		{path: "spec.tfReplicaSpecs[Worker].template.specs.containers"},
		{path: "spec.tfReplicaSpecs[a]b.c]", exists: true, required: true},
		{path: "spec.tfReplicaSpecs[a]b.c].replicas", required: true},
		{path: "spec.tfReplicaSpecs[PS]", required: true},
		{path: "spec.tfReplicaSpecs[PS].replicas"},
		{path: "spec.tfReplicaSpecs[Chief]", exists: true, required: true},
		{path: "spec.tfReplicaSpecs[Chief].template", required: true},
		{path: "spec.tfReplicaSpecs[Chief].template.spec"},
		{path: "spec.pytorchReplicaSpecs[Worker]", required: true},
		{path: "spec.pytorchReplicaSpecs[Worker].replicas"},
		{path: "spec..tfReplicaSpecs"},
		{path: "status.conditions"},
	} {
		if got := resolvePath(doc, tc.path, true, false); got != tc.exists {
			t.Errorf("%s exists: got %v, want %v", tc.path, got, tc.exists)
		}
		if got := resolvePath(doc, tc.path, true, true); got != tc.required {
			t.Errorf("%s parent exists: got %v, want %v", tc.path, got, tc.required)
		}
	}
}

// requireVerdict fails unless a v1 example is accepted and a reject-*.yaml
// file is rejected with an error for each field its "# want:" lines name.
func requireVerdict(t *testing.T, c corpusFile, errs field.ErrorList) {
	t.Helper()
	switch {
	case len(c.want) == 0 && len(errs) > 0:
		t.Fatalf("%s: a v1 example is rejected: %v", c.path, errs.ToAggregate())
	case len(c.want) > 0 && len(errs) == 0:
		t.Fatalf("%s: accepted, want a rejection of %q", c.path, c.want)
	}
	for _, w := range c.want {
		if !slices.ContainsFunc(errs, func(e *field.Error) bool { return e.Field == w }) {
			t.Errorf("%s: no error for %s; got %v", c.path, w, errs.ToAggregate())
		}
	}
}

// corpusFile is one file of testdata/corpus/<Kind>.
type corpusFile struct {
	path string
	data []byte
	// want are the field paths of its "# want: <path>" lines: the errors it
	// must be rejected with. Files named reject-*.yaml must have some, the
	// others (v1's examples) none.
	want []string
}

// readCorpus reads testdata/corpus/<kind>/*.yaml and fails unless there is
// at least one file.
func readCorpus(f *testing.F, kind string) []corpusFile {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", kind, "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	if len(paths) == 0 {
		f.Fatalf("no seed corpus for %s: testdata/corpus/%s/*.yaml is missing or empty", kind, kind)
	}
	var out []corpusFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		c := corpusFile{path: p, data: data}
		for line := range strings.Lines(string(data)) {
			if w, ok := strings.CutPrefix(line, "# want: "); ok {
				c.want = append(c.want, strings.TrimSpace(w))
			}
		}
		if reject := strings.HasPrefix(filepath.Base(p), "reject-"); reject != (len(c.want) > 0) {
			f.Fatalf("%s: a reject-*.yaml file names the fields it is rejected for in \"# want: <path>\" lines, and only such a file", p)
		}
		out = append(out, c)
	}
	return out
}
