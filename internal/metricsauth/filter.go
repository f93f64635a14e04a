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
// server's authentication and authorization. It lives outside package main
// so that the integration tests run exactly the filter the binary runs.
package metricsauth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Filter is a metricsserver.FilterProvider: the caller's bearer token is
// authenticated with a TokenReview and the request authorized with a
// SubjectAccessReview on the non-resource URL (e.g. GET /metrics), which is
// what Prometheus' ServiceAccount needs RBAC for. It is a small stand-in for
// controller-runtime's filters package, which would link the whole
// k8s.io/apiserver module into the binary.
func Filter(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			if !ok || token == "" {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			tr, err := authn.TokenReviews().Create(req.Context(), &authenticationv1.TokenReview{
				Spec: authenticationv1.TokenReviewSpec{Token: token},
			}, metav1.CreateOptions{})
			if err != nil {
				log.Error(err, "metrics authentication failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			}
			if !tr.Status.Authenticated {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			user := tr.Status.User
			extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
			for k, v := range user.Extra {
				extra[k] = authorizationv1.ExtraValue(v)
			}
			sar, err := authz.SubjectAccessReviews().Create(req.Context(), &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   user.Username,
					UID:    user.UID,
					Groups: user.Groups,
					Extra:  extra,
					NonResourceAttributes: &authorizationv1.NonResourceAttributes{
						Path: req.URL.Path,
						Verb: strings.ToLower(req.Method),
					},
				},
			}, metav1.CreateOptions{})
			if err != nil {
				log.Error(err, "metrics authorization failed")
				http.Error(w, "Authorization failed", http.StatusInternalServerError)
				return
			}
			if !sar.Status.Allowed {
				http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, path=%s)", user.Username, strings.ToLower(req.Method), req.URL.Path), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}
