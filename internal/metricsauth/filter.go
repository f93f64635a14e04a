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

// Package metricsauth protects the secure metrics endpoint with
// controller-runtime's filters.WithAuthenticationAndAuthorization (delegated
// TokenReview and SubjectAccessReview, cached). It lives outside package
// main so that the integration tests run exactly the filter the binary runs.
//
// The one thing added: that filter answers 500 "Authentication failed" when
// the API server rejects a bearer token, because the delegated authenticator
// reports a rejected token as an error. A scraper with a bad token gets 401
// here, as from the API server itself and from v1's kube-rbac-proxy.
package metricsauth

import (
	"bytes"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// authnFailed is the body controller-runtime's filter writes (through
// http.Error) when authentication returns an error.
var authnFailed = []byte("Authentication failed")

// Filter is a metricsserver.FilterProvider: the caller's bearer token must
// authenticate and the user be allowed the verb on the non-resource URL
// (GET /metrics), which is what Prometheus' ServiceAccount needs RBAC for.
// The operator needs create on tokenreviews and subjectaccessreviews.
func Filter(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	inner, err := filters.WithAuthenticationAndAuthorization(c, httpClient)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		h, err := inner(log, next)
		if err != nil {
			return nil, err
		}
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			rw := &unauthorized{ResponseWriter: w}
			h.ServeHTTP(rw, req)
			rw.flush()
		}), nil
	}, nil
}

// unauthorized holds back a 500 until its body shows whether it is the
// filter's authentication failure, which it turns into a 401.
type unauthorized struct {
	http.ResponseWriter
	held bool // a 500 is held back
	done bool // status decided
}

func (u *unauthorized) WriteHeader(code int) {
	if u.done || u.held {
		return
	}
	if code == http.StatusInternalServerError {
		u.held = true
		return
	}
	u.done = true
	u.ResponseWriter.WriteHeader(code)
}

func (u *unauthorized) Write(b []byte) (int, error) {
	if u.held {
		u.held, u.done = false, true
		if bytes.HasPrefix(b, authnFailed) {
			u.ResponseWriter.WriteHeader(http.StatusUnauthorized)
			_, err := u.ResponseWriter.Write([]byte("Unauthorized\n"))
			return len(b), err
		}
		u.ResponseWriter.WriteHeader(http.StatusInternalServerError)
	}
	u.done = true
	return u.ResponseWriter.Write(b)
}

// flush sends a held 500 that had no body.
func (u *unauthorized) flush() {
	if u.held {
		u.held, u.done = false, true
		u.ResponseWriter.WriteHeader(http.StatusInternalServerError)
	}
}

// Flush lets the metrics handler stream.
func (u *unauthorized) Flush() {
	if f, ok := u.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
