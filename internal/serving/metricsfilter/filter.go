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

// Package metricsfilter protects the secure metrics endpoint with
// controller-runtime's filters.WithAuthenticationAndAuthorization (a
// TokenReview for the caller's bearer token, a SubjectAccessReview for GET
// /metrics, both cached, de-duplicated and bounded by k8s.io/apiserver's
// delegating authenticator and authorizer). It changes one answer only: a
// token the API server rejects is 401, as kube-rbac-proxy (which guarded
// v1's metrics) and the API server answer, where the library says 500.
package metricsfilter

import (
	"bytes"
	"context"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// authnFailed is the body the library's filter answers a failed
// authentication with (status 500).
var authnFailed = []byte("Authentication failed")

// Filter is a metricsserver.FilterProvider. The operator needs create on
// tokenreviews and subjectaccessreviews (the chart's
// training-operator-metrics-auth ClusterRole); Prometheus' ServiceAccount
// needs get on the non-resource URL /metrics.
func Filter(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	library, err := filters.WithAuthenticationAndAuthorization(c, httpClient)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, metrics http.Handler) (http.Handler, error) {
		// An admitted request is answered on the original writer.
		guarded, err := library(log, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			metrics.ServeHTTP(r.Context().Value(writerKey{}).(http.ResponseWriter), r)
		}))
		if err != nil {
			return nil, err
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := &answer{ResponseWriter: w}
			guarded.ServeHTTP(a, r.WithContext(context.WithValue(r.Context(), writerKey{}, w)))
			a.finish()
		}), nil
	}, nil
}

// answer holds back the status of a request the library turns away until
// its body shows why.
type answer struct {
	http.ResponseWriter
	status int
	sent   bool
}

type writerKey struct{}

func (a *answer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *answer) Write(b []byte) (int, error) {
	if !a.sent {
		a.sent = true
		if a.status == 0 {
			a.status = http.StatusOK
		}
		if a.status == http.StatusInternalServerError && bytes.HasPrefix(b, authnFailed) {
			a.ResponseWriter.WriteHeader(http.StatusUnauthorized)
			_, err := a.ResponseWriter.Write([]byte("Unauthorized\n"))
			return len(b), err
		}
		a.ResponseWriter.WriteHeader(a.status)
	}
	return a.ResponseWriter.Write(b)
}

// finish sends the status of a refusal that wrote no body.
func (a *answer) finish() {
	if a.status != 0 && !a.sent {
		a.sent = true
		a.ResponseWriter.WriteHeader(a.status)
	}
}
