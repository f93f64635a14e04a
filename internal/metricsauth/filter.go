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

// Package metricsauth protects the secure metrics endpoint with the API
// server's delegated authentication (TokenReview) and authorization
// (SubjectAccessReview), both from k8s.io/apiserver, which also caches the
// reviews and retries them. It lives outside package main so that the
// integration tests run exactly the filter the binary runs.
//
// controller-runtime's filters.WithAuthenticationAndAuthorization builds on
// the same authenticator but answers 500 to a bearer token the API server
// rejects (the authenticator reports a rejected token as an error); callers
// with a bad token get 401 here, as from the API server itself.
package metricsauth

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	// Reviews are cached so that every scrape does not cost two API calls;
	// denials briefly, so that a newly bound scraper gets through soon.
	tokenCacheTTL = time.Minute
	allowCacheTTL = time.Minute
	denyCacheTTL  = 10 * time.Second
	reviewTimeout = 10 * time.Second
)

// reviewBackoff retries reviews that fail on the API server for about
// three seconds before the request fails.
var reviewBackoff = wait.Backoff{Duration: 300 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 4}

// Filter is a metricsserver.FilterProvider: the caller's bearer token must
// authenticate and the user be allowed the verb on the non-resource URL
// (GET /metrics), which is what Prometheus' ServiceAccount needs RBAC for.
// The operator needs create on tokenreviews and subjectaccessreviews.
func Filter(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserverconfig.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient:  authn,
		TokenAccessReviewTimeout: reviewTimeout,
		WebhookRetryBackoff:      &reviewBackoff,
		CacheTTL:                 tokenCacheTTL,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authenticator: %w", err)
	}
	authorize, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       &reviewBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authorizer: %w", err)
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			res, ok, err := authenticator.AuthenticateRequest(req)
			if err != nil || !ok {
				// A failing TokenReview call is logged by the authenticator.
				log.V(1).Info("metrics request not authenticated", "error", err)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(req.Method), Path: req.URL.Path}
			decision, reason, err := authorize.Authorize(req.Context(), attrs)
			if err != nil {
				log.Error(err, "metrics authorization failed", "user", res.User.GetName())
				http.Error(w, "Authorization failed", http.StatusInternalServerError)
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(1).Info("metrics request forbidden", "user", res.User.GetName(), "reason", reason)
				http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, path=%s)", res.User.GetName(), attrs.Verb, attrs.Path), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}
