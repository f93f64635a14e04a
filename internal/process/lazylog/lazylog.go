// Package lazylog wraps a logr.Logger so that WithValues only records its
// key/value pairs and hands them to the underlying sink when a message is
// written. zap's With encodes fields at once, and controller-runtime (plus
// our Reconcile) adds values to the logger of every reconcile, most of
// which log nothing, so encoding them at once is work for nothing.
package lazylog

import "github.com/go-logr/logr"

// New returns l with lazy WithValues.
func New(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	// Messages pass through one more frame (ours): keep the caller right.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(&lazySink{sink: sink})
}

type lazySink struct {
	sink logr.LogSink
	kv   []any // recorded by WithValues, not yet given to sink
}

// Init is a no-op: the wrapped sink was initialised by its own logger.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *lazySink) Info(level int, msg string, kv ...any) { s.resolved().Info(level, msg, kv...) }

func (s *lazySink) Error(err error, msg string, kv ...any) { s.resolved().Error(err, msg, kv...) }

func (s *lazySink) WithValues(kv ...any) logr.LogSink {
	n := len(s.kv)
	return &lazySink{sink: s.sink, kv: append(s.kv[:n:n], kv...)}
}

func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{sink: s.sink.WithName(name), kv: s.kv}
}

func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	cd, ok := s.sink.(logr.CallDepthLogSink)
	if !ok {
		return s
	}
	return &lazySink{sink: cd.WithCallDepth(depth), kv: s.kv}
}

// resolved is the sink with the recorded values applied.
func (s *lazySink) resolved() logr.LogSink {
	if len(s.kv) == 0 {
		return s.sink
	}
	return s.sink.WithValues(s.kv...)
}
