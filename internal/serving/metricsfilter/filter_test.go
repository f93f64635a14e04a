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

package metricsfilter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// TestAuthnStatus: the authenticators' verdicts on the credentials are 401;
// a review the API server could not answer is 503, one it refused 500,
// also inside the union authenticator's aggregate.
func TestAuthnStatus(t *testing.T) {
	invalid := errors.New("invalid bearer token")
	refused := &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/apis/authentication.k8s.io/v1/tokenreviews", Err: syscall.ECONNREFUSED}
	tokenReviews := schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"no credentials", nil, http.StatusUnauthorized},
		{"token rejected", invalid, http.StatusUnauthorized},
		{"TokenReview status.error", utilerrors.NewAggregate([]error{errors.New("[invalid bearer token, token expired]")}), http.StatusUnauthorized},
		{"API server unreachable", utilerrors.NewAggregate([]error{refused}), http.StatusServiceUnavailable},
		{"unreachable beside a rejection", utilerrors.NewAggregate([]error{invalid, fmt.Errorf("review: %w", refused)}), http.StatusServiceUnavailable},
		{"review timed out", context.DeadlineExceeded, http.StatusServiceUnavailable},
		{"API server failing", apierrors.NewInternalError(errors.New("etcd")), http.StatusServiceUnavailable},
		{"API server overloaded", apierrors.NewTooManyRequests("slow down", 1), http.StatusServiceUnavailable},
		{"API server timeout", apierrors.NewTimeoutError("review", 10), http.StatusServiceUnavailable},
		{"operator may not review tokens", apierrors.NewForbidden(tokenReviews, "", errors.New("RBAC")), http.StatusInternalServerError},
	} {
		if got := authnStatus(tc.err); got != tc.want {
			t.Errorf("%s: authnStatus(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}
