package prometheus

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/seed-d8a409e9/training-operator/test/prometheus/promtool"
)

// TestRuleUnitTests runs testdata/alerts_test.yaml with promtool's own
// rule unit-test code against the chart's rules as a user installs them
// (default thresholds, two replicas so the leader alert is included).
func TestRuleUnitTests(t *testing.T) {
	dir := t.TempDir()
	renderRules(t, dir, "replicas=2")
	data, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := filepath.Join(dir, "alerts_test.yaml")
	if err := os.WriteFile(tests, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// promtool prints failures to stdout and returns its exit code (the
	// writer gets its JUnit report).
	if code := promtool.RulesUnitTestResult(io.Discard, promqltest.LazyLoaderOpts{EnableAtModifier: true, EnableNegativeOffset: true},
		parser.NewParser(parser.Options{}), nil, true, false, false, tests); code != 0 {
		t.Fatalf("promtool test rules: exit code %d (failures above)", code)
	}
}
