package lazylog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/zapr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newJSONLogger logs JSON lines with callers into buf.
func newJSONLogger(buf *bytes.Buffer) *zap.Logger {
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg", NameKey: "logger", CallerKey: "caller",
		EncodeCaller: zapcore.ShortCallerEncoder})
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(buf), zapcore.DebugLevel), zap.AddCaller())
}

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// Lazy values must come out exactly as eager ones would, with the caller
// of the log call (not this package) and branches kept apart.
func TestLazyValuesLogLikeEagerOnes(t *testing.T) {
	var lazyBuf, eagerBuf bytes.Buffer
	lazy := New(zapr.NewLogger(newJSONLogger(&lazyBuf)))
	eager := zapr.NewLogger(newJSONLogger(&eagerBuf))

	for _, l := range []*bytes.Buffer{&lazyBuf, &eagerBuf} {
		base := eager
		if l == &lazyBuf {
			base = lazy
		}
		parent := base.WithName("ctrl").WithValues("controller", "pytorchjob")
		a := parent.WithValues("job", "a")
		b := parent.WithValues("job", "b")
		a.Info("pass", "n", 1)
		b.Error(errors.New("boom"), "failed")
		parent.WithName("sub").V(0).Info("named")
	}
	got, want := lines(t, &lazyBuf), lines(t, &eagerBuf)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lazy output differs from eager (-eager +lazy):\n%s", diff)
	}
	if c, _ := got[0]["caller"].(string); !strings.HasPrefix(c, "lazylog/lazylog_test.go") {
		t.Errorf("caller = %q, want this test file", c)
	}
}

func TestEnabledFollowsTheSink(t *testing.T) {
	var buf bytes.Buffer
	l := New(zapr.NewLogger(newJSONLogger(&buf))).WithValues("k", "v")
	if !l.V(0).Enabled() {
		t.Error("V(0) disabled")
	}
	if l.V(5).Enabled() {
		t.Error("V(5) enabled on a debug-level core")
	}
}
