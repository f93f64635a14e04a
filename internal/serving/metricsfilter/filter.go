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

// Package metricsfilter protects the secure metrics endpoint as
// controller-runtime's filters.WithAuthenticationAndAuthorization does, with
// the same k8s.io/apiserver delegating authenticator and authorizer (a
// TokenReview for the caller's bearer token, a SubjectAccessReview for GET
// /metrics, both cached, de-duplicated and retried, with the same settings),
// and answers as kube-rbac-proxy (which guarded v1's metrics) and the API
// server do: 401 for credentials the API server rejects, 403 for a caller
// not allowed, and 503 when the review could not be made (the API server
// unreachable or failing), where the library answers 500 for the first
// and the last alike. Prometheus then shows an outage as one, not as a bad
// token.
package metricsfilter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/seed-d8a409e9/training-operator/internal/kube/apiretry"
)

// retryAfterSeconds is the Retry-After of a 503: the reviews' own retries
// (about 6 s in all) have already failed.
const retryAfterSeconds = "10"

// reviewBackoff retries a review the API server did not answer: the API
// server's own default for delegated authentication
// (k8s.io/apiserver/pkg/server/options), as controller-runtime uses it.
var reviewBackoff = &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// Filter is a metricsserver.FilterProvider. The operator needs create on
// tokenreviews and subjectaccessreviews (the chart's
// training-operator-metrics-auth ClusterRole); Prometheus' ServiceAccount
// needs get on the non-resource URL /metrics.
func Filter(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	backoff := reviewBackoff
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authn,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authenticator: %w", err)
	}
	authorizerImpl, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authorizer: %w", err)
	}
	return func(log logr.Logger, metrics http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			res, ok, err := authenticator.AuthenticateRequest(r)
			if err != nil || !ok {
				code := authnStatus(err)
				if code != http.StatusUnauthorized {
					log.Error(err, "The caller's token could not be reviewed")
				}
				answer(w, code, "Unauthorized")
				return
			}
			attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
			decision, reason, err := authorizerImpl.Authorize(r.Context(), attrs)
			if err != nil {
				log.Error(err, "The caller's access could not be reviewed", "user", attrs.User.GetName())
				code := reviewStatus(err)
				if code == http.StatusUnauthorized { // not about credentials here
					code = http.StatusInternalServerError
				}
				answer(w, code, "")
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(4).Info("Metrics denied", "user", attrs.User.GetName(), "reason", reason)
				http.Error(w, fmt.Sprintf("Authorization denied for user %s", attrs.User.GetName()), http.StatusForbidden)
				return
			}
			metrics.ServeHTTP(w, r)
		}), nil
	}, nil
}

// answer writes an error status; a 503 says when to come back and why.
func answer(w http.ResponseWriter, code int, msg string) {
	switch code {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfterSeconds)
		msg = "The API server could not review the request; try again later"
	case http.StatusInternalServerError:
		msg = "The request could not be reviewed"
	}
	http.Error(w, msg, code)
}

// authnStatus is the answer to a failed authentication: 401 when the API
// server (or the request) says the credentials are not valid, else what
// reviewStatus says of the error that kept the review from being made.
func authnStatus(err error) int {
	if err == nil {
		return http.StatusUnauthorized
	}
	code := http.StatusUnauthorized
	for _, e := range flatten(err) {
		if c := reviewStatus(e); c != http.StatusUnauthorized {
			code = max(code, c)
		}
	}
	return code
}

// reviewStatus is the answer to a review that failed with err: 503 when
// the API server was unreachable or failing (transport errors, timeouts,
// 429 and 5xx), 500 when it refused the review itself (e.g. the operator
// may not create TokenReviews), and 401 for any other error: the
// authenticators' own verdicts on the credentials ("invalid bearer token",
// the TokenReview's status.error) are plain errors.
func reviewStatus(err error) int {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if apiretry.Retriable(err) {
			return http.StatusServiceUnavailable
		}
		return http.StatusInternalServerError
	}
	var urlErr *url.Error
	var netErr net.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return http.StatusServiceUnavailable
	}
	return http.StatusUnauthorized
}

// flatten lists the errors of (nested) aggregates, which the union of
// authenticators returns, and of errors.Join.
func flatten(err error) []error {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		var out []error
		for _, e := range agg.Errors() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
