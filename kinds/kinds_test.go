package kinds

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	"github.com/seed-d8a409e9/training-operator/controllers/engine"
)

// v1 announced a job's TTL deletion with the pod reasons for PyTorch, Paddle
// and JAX and with the job reasons for the others (B4 §4.10).
func TestJobDeleteEventReasons(t *testing.T) {
	want := map[string][2]string{
		configv1alpha1.SchemePyTorchJob: {"SuccessfulDeletePod", "FailedDeletePod"},
		configv1alpha1.SchemePaddleJob:  {"SuccessfulDeletePod", "FailedDeletePod"},
		configv1alpha1.SchemeJAXJob:     {"SuccessfulDeletePod", "FailedDeletePod"},
		configv1alpha1.SchemeTFJob:      {"SuccessfulDeleteJob", "FailedDeleteJob"},
		configv1alpha1.SchemeXGBoostJob: {"SuccessfulDeleteJob", "FailedDeleteJob"},
		configv1alpha1.SchemeMPIJob:     {"SuccessfulDeleteJob", "FailedDeleteJob"},
	}
	got := map[string][2]string{}
	for _, k := range All() {
		scheme := k.Info.Kind
		fw, err := k.framework(&configv1alpha1.Configuration{})
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		// The engine's default when a framework does not say otherwise.
		reasons := [2]string{"SuccessfulDeleteJob", "FailedDeleteJob"}
		if d, ok := fw.(engine.JobDeleteEvents); ok {
			reasons[0], reasons[1] = d.JobDeleteReasons()
		}
		got[scheme] = reasons
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TTL delete event reasons (-want +got):\n%s", diff)
	}
}

// The table and the Configuration API's list of scheme names (which its
// defaulting and the config validation use) name the same kinds in the
// same order.
func TestNamesAreTheConfigurationSchemes(t *testing.T) {
	if diff := cmp.Diff(configv1alpha1.AllSchemes(), Names()); diff != "" {
		t.Errorf("kinds (-AllSchemes +table):\n%s", diff)
	}
}

// Each entry's adapter and webhooks are of the entry's kind.
func TestEntriesAreOfOneKind(t *testing.T) {
	cfg := &configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults_Configuration(cfg)
	seen := map[string]bool{}
	for _, k := range All() {
		if seen[k.Info.Kind] {
			t.Errorf("%s registered twice", k.Info.Kind)
		}
		seen[k.Info.Kind] = true
		fw, err := k.NewFramework(cfg)
		if err != nil {
			t.Fatalf("%s: %v", k.Info.Kind, err)
		}
		if got, want := reflect.TypeOf(fw.NewJob()), reflect.TypeOf(k.newJob()); got != want {
			t.Errorf("%s: adapter jobs are %v, want %v", k.Info.Kind, got, want)
		}
		if info := fw.NewJob().KindInfo(); !reflect.DeepEqual(info, k.Info) {
			t.Errorf("%s: adapter of %+v, want %+v", k.Info.Kind, info, k.Info)
		}
		if !reflect.DeepEqual(k.Webhooks.Info(), k.Info) {
			t.Errorf("%s: webhooks of %+v", k.Info.Kind, k.Webhooks.Info())
		}
	}
}

// make fuzz runs every Fuzz target go test lists in webhooks/ (written by
// hand): each kind of the table has one, with a seed corpus, and no target
// is left of a kind the table no longer has.
func TestFuzzTargetPerKind(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "webhooks", "fuzz_test.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
			targets = append(targets, fn.Name.Name)
		}
	}
	var want []string
	for _, name := range Names() {
		want = append(want, "Fuzz"+name)
		if _, err := os.Stat(filepath.Join("..", "webhooks", "testdata", "corpus", name)); err != nil {
			t.Errorf("no seed corpus for %s: %v", name, err)
		}
	}
	if diff := cmp.Diff(want, targets, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("fuzz targets in webhooks/fuzz_test.go (-want +got):\n%s", diff)
	}
}
