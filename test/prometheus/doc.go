// Package prometheus proves the chart's alert rules and Grafana dashboard
// on Prometheus' own code (v0.316.0): its rule unit tests in promtool's
// format, and its scraper, storage, PromQL engine and rule manager run
// against the operator on a real local control plane. It is a module of
// its own so that Prometheus' dependencies never reach the operator's
// go.mod or binary.
package prometheus
