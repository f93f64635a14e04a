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

package main

import (
	"cmp"
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// apiProxy is an HTTPS (HTTP/2) reverse proxy on 127.0.0.1 in front of the
// apiserver, authenticating upstream as the cluster admin. The operator gets
// a kubeconfig pointing at it, so every request the operator sends — and
// only those — is counted by verb, resource and response code. This works
// for any operator binary, needs no apiserver flags (audit policy) and, unlike
// the operator's rest_client_requests_total (method and code only), sees the
// resource. Watches are counted once, when their response starts.
//
// It speaks TLS with HTTP/2 like the apiserver, so clients multiplex their
// requests on one connection as they would in a cluster. Plain HTTP/1.1 made
// them dial a connection per concurrent request beyond client-go's idle pool:
// in the operator's CPU profile of a 500-job burst, dialing was 8%.
type apiProxy struct {
	srv *httptest.Server

	mu     sync.Mutex
	counts map[requestKey]int
}

type requestKey struct {
	verb, resource string
	code           int
}

func startProxy(upstream *rest.Config) (*apiProxy, error) {
	target, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, err
	}
	p := &apiProxy{counts: map[requestKey]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     transport,
		FlushInterval: -1, // stream watches
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, context.Canceled) {
				w.WriteHeader(http.StatusBadGateway)
			}
		},
	}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verb, resource := classify(r)
		rp.ServeHTTP(&countingWriter{ResponseWriter: w, record: func(code int) { p.add(verb, resource, code) }}, r)
	}))
	p.srv.EnableHTTP2 = true
	p.srv.StartTLS()
	return p, nil
}

// URL is the proxy's base URL for the operator's kubeconfig.
func (p *apiProxy) URL() string { return p.srv.URL }

// CAData is the PEM certificate clients must trust (self-signed, for
// 127.0.0.1).
func (p *apiProxy) CAData() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
}

// RESTConfig is a client configuration for the proxy; the proxy adds the
// credentials.
func (p *apiProxy) RESTConfig() *rest.Config {
	return &rest.Config{Host: p.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData()}}
}

func (p *apiProxy) Close() { p.srv.Close() }

func (p *apiProxy) add(verb, resource string, code int) {
	p.mu.Lock()
	p.counts[requestKey{verb, resource, code}]++
	p.mu.Unlock()
}

// snapshot copies the counters.
func (p *apiProxy) snapshot() map[requestKey]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[requestKey]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// diffCounts returns after-before as APICounts sorted by count (descending),
// then verb, resource and code, and their total.
func diffCounts(before, after map[requestKey]int) ([]APICount, int) {
	var out []APICount
	total := 0
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out = append(out, APICount{Verb: k.verb, Resource: k.resource, Code: k.code, Count: d})
			total += d
		}
	}
	slices.SortFunc(out, func(a, b APICount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Verb, b.Verb),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Code, b.Code))
	})
	return out, total
}

// countingWriter records the status code when the response header is written.
type countingWriter struct {
	http.ResponseWriter
	record  func(code int)
	written bool
}

func (w *countingWriter) WriteHeader(code int) {
	if !w.written {
		w.written = true
		w.record(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// classify maps a request to the apiserver's verb and to
// resource[.group][/subresource], e.g. ("patch", "pytorchjobs.kubeflow.org/status").
// Requests outside /api and /apis/<group>/<version>/ (discovery, /version,
// /openapi, ...) are verb "get"/"..." with resource "nonresource".
func classify(r *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return strings.ToLower(r.Method), "nonresource"
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // namespaced resource
	}
	resource = parts[0]
	if group != "" {
		resource += "." + group
	}
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			verb = "apply"
		}
	case http.MethodDelete:
		verb = "deletecollection"
		if named {
			verb = "delete"
		}
	default:
		verb = strings.ToLower(r.Method)
	}
	return verb, resource
}
