package util

import (
	"net/http"
	"net/url"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Positive signals for tests that check that the operator did not do
// something: such a check passes as well when the operator is slow or
// stopped, so it is made only once the operator has shown that it handled
// the change (a request it made, a metric it counted).

// Request is one API request an operator made, as answered.
type Request struct {
	Method string
	// Path is the URL path, e.g. /api/v1/namespaces/ns/pods.
	Path  string
	Query url.Values
	// Code is the response's status code; 0 when no response came (the
	// request failed or was cancelled, as a stopping operator's are).
	Code int
}

// Resource is the request's resource path below its namespace (e.g.
// "pods", "pods/p-0", "pytorchjobs/j/status"), or "" for a request outside
// a namespace.
func (r Request) Resource() string {
	_, after, ok := strings.Cut(r.Path, "/namespaces/")
	if !ok {
		return ""
	}
	_, res, _ := strings.Cut(after, "/")
	return res
}

// RequestLog holds the requests recorded by RecordRequests.
type RequestLog struct {
	mu   sync.Mutex
	reqs []Request
}

// RecordRequests returns a copy of cfg whose requests in namespace ns are
// recorded in the log once answered, so a recorded request is one the API
// server has handled.
func RecordRequests(cfg *rest.Config, ns string) (*rest.Config, *RequestLog) {
	log := &RequestLog{}
	prefix := "/namespaces/" + ns + "/"
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if strings.Contains(req.URL.Path, prefix) {
				r := Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query()}
				if err == nil {
					r.Code = resp.StatusCode
				}
				log.mu.Lock()
				log.reqs = append(log.reqs, r)
				log.mu.Unlock()
			}
			return resp, err
		})
	})
	return out, log
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Count is how many recorded requests match.
func (l *RequestLog) Count(match func(Request) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if match(r) {
			n++
		}
	}
	return n
}

// Matching are the recorded requests that match, in order.
func (l *RequestLog) Matching(match func(Request) bool) []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Request
	for _, r := range l.reqs {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// MetricSum is the sum of the in-process operator's counters and gauges
// named name whose labels include every pair of labels (controller-runtime's
// registry, where the engine's job metrics live too).
func MetricSum(name string, labels map[string]string) (float64, error) {
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			matches := true
			for k, v := range labels {
				if have[k] != v {
					matches = false
					break
				}
			}
			if !matches {
				continue
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum, nil
}
