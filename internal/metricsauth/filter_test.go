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

package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The end-to-end proof (401/403/200 against a real API server with the
// chart's RBAC) is the security integration suite. These tests pin what it
// cannot reach: caching, retries and the API server's failures.

// fakeAPI answers reviews: tokens maps a token to its user, allowed lists
// the users allowed GET /metrics.
type fakeAPI struct {
	tokens      map[string]authnv1.UserInfo
	allowed     map[string]bool
	failures    []error // returned by the next reviews, in order
	tokenCalls  int
	accessCalls int
	lastSpec    authzv1.SubjectAccessReviewSpec
}

func (f *fakeAPI) fail() error {
	if len(f.failures) == 0 {
		return nil
	}
	err := f.failures[0]
	f.failures = f.failures[1:]
	return err
}

func (f *fakeAPI) reviewer(now *time.Time) *reviewer {
	return &reviewer{
		tokenReview: func(_ context.Context, tr *authnv1.TokenReview) (*authnv1.TokenReview, error) {
			f.tokenCalls++
			if err := f.fail(); err != nil {
				return nil, err
			}
			out := tr.DeepCopy()
			if u, ok := f.tokens[tr.Spec.Token]; ok {
				out.Status = authnv1.TokenReviewStatus{Authenticated: true, User: u}
			} else {
				out.Status.Error = "invalid bearer token"
			}
			return out, nil
		},
		accessReview: func(_ context.Context, sar *authzv1.SubjectAccessReview) (*authzv1.SubjectAccessReview, error) {
			f.accessCalls++
			if err := f.fail(); err != nil {
				return nil, err
			}
			f.lastSpec = sar.Spec
			out := sar.DeepCopy()
			out.Status.Allowed = f.allowed[sar.Spec.User] && sar.Spec.NonResourceAttributes.Path == "/metrics"
			return out, nil
		},
		backoff: wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5},
		now:     func() time.Time { return *now },
	}
}

func serve(r *reviewer, token string) (int, string, http.Header) {
	var seen http.Header
	next := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen = req.Header.Clone()
		_, _ = w.Write([]byte("a 1\n"))
	})
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	r.handler(logr.Discard(), next).ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), seen
}

func newAPI() *fakeAPI {
	return &fakeAPI{
		tokens: map[string]authnv1.UserInfo{
			"prom":   {Username: "system:serviceaccount:monitoring:prometheus", UID: "u1", Groups: []string{"system:serviceaccounts"}, Extra: map[string]authnv1.ExtraValue{"k": {"v"}}},
			"nobody": {Username: "system:serviceaccount:default:nobody"},
		},
		allowed: map[string]bool{"system:serviceaccount:monitoring:prometheus": true},
	}
}

func TestStatusCodes(t *testing.T) {
	cases := []struct {
		name     string
		token    string
		wantCode int
		wantBody string
	}{
		{"no token", "", http.StatusUnauthorized, "Unauthorized\n"},
		{"rejected token", "not-a-token", http.StatusUnauthorized, "Unauthorized\n"},
		{"user without the grant", "nobody", http.StatusForbidden, "Authorization denied for user system:serviceaccount:default:nobody\n"},
		{"user with the grant", "prom", http.StatusOK, "a 1\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			r := newAPI().reviewer(&now)
			code, body, _ := serve(r, tc.token)
			if code != tc.wantCode || body != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", code, body, tc.wantCode, tc.wantBody)
			}
		})
	}
}

func TestTheReviewCarriesTheUserAndTheRequest(t *testing.T) {
	now := time.Unix(0, 0)
	api := newAPI()
	_, _, seen := serve(api.reviewer(&now), "prom")
	want := authzv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:monitoring:prometheus", UID: "u1",
		Groups:                []string{"system:serviceaccounts"},
		Extra:                 map[string]authzv1.ExtraValue{"k": {"v"}},
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}
	if d := cmp.Diff(want, api.lastSpec); d != "" {
		t.Errorf("SubjectAccessReview spec (-want +got):\n%s", d)
	}
	if seen.Get("Authorization") != "" {
		t.Error("the metrics handler got the caller's token")
	}
}

func TestAnswersAreCachedForTheirTTL(t *testing.T) {
	now := time.Unix(0, 0)
	api := newAPI()
	r := api.reviewer(&now)
	for range 3 {
		serve(r, "prom")
		serve(r, "not-a-token")
		serve(r, "nobody")
	}
	if api.tokenCalls != 3 || api.accessCalls != 2 {
		t.Fatalf("reviews within the TTLs: %d token, %d access; want 3, 2", api.tokenCalls, api.accessCalls)
	}
	now = now.Add(denyTTL)
	serve(r, "nobody") // token cached, deny expired
	serve(r, "prom")   // both cached
	if api.tokenCalls != 3 || api.accessCalls != 3 {
		t.Fatalf("after the deny TTL: %d token, %d access; want 3, 3", api.tokenCalls, api.accessCalls)
	}
	now = now.Add(tokenTTL)
	serve(r, "prom") // token expired, allow cached
	if api.tokenCalls != 4 || api.accessCalls != 3 {
		t.Fatalf("after the token TTL: %d token, %d access; want 4, 3", api.tokenCalls, api.accessCalls)
	}
	api.allowed = nil // the grant is revoked: seen once the allow expires
	now = now.Add(allowTTL)
	if code, _, _ := serve(r, "prom"); code != http.StatusForbidden {
		t.Fatalf("after the grant was revoked and the allow TTL passed: %d, want 403", code)
	}
}

func TestAPIServerTrouble(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("busy")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"}, "", errors.New("no RBAC"))
	cases := []struct {
		name      string
		failures  []error
		wantCode  int
		wantCalls int
	}{
		{"transport error, then an answer", []error{errors.New("connection refused")}, http.StatusOK, 3},
		{"503 four times, then an answer", []error{unavailable, unavailable, unavailable, unavailable}, http.StatusOK, 6},
		{"503 on every try", []error{unavailable, unavailable, unavailable, unavailable, unavailable}, http.StatusInternalServerError, 5},
		{"operator not allowed to review: not retried", []error{forbidden}, http.StatusInternalServerError, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			api := newAPI()
			api.failures = tc.failures
			code, body, _ := serve(api.reviewer(&now), "prom")
			if code != tc.wantCode {
				t.Errorf("got %d %q, want %d", code, body, tc.wantCode)
			}
			if calls := api.tokenCalls + api.accessCalls; calls != tc.wantCalls {
				t.Errorf("%d reviews, want %d", calls, tc.wantCalls)
			}
		})
	}
}

func TestCacheIsBounded(t *testing.T) {
	var c ttlCache[bool]
	now := time.Unix(0, 0)
	for i := range maxCached + 10 {
		c.put(fmt.Sprint(i), true, now, time.Minute)
	}
	if len(c.m) != maxCached {
		t.Fatalf("%d entries, want %d", len(c.m), maxCached)
	}
	// Once they expire, room is made for new answers.
	c.put("new", true, now.Add(time.Minute), time.Minute)
	if _, ok := c.get("new", now.Add(time.Minute)); !ok || len(c.m) != 1 {
		t.Fatalf("expired entries not evicted: %d entries", len(c.m))
	}
}

func TestBearerToken(t *testing.T) {
	cases := map[string]struct {
		header string
		token  string
		ok     bool
	}{
		"bearer":       {"Bearer abc", "abc", true},
		"lower case":   {"bearer abc", "abc", true},
		"basic":        {"Basic abc", "", false},
		"empty":        {"Bearer ", "", false},
		"two words":    {"Bearer a b", "", false},
		"no header":    {"", "", false},
		"scheme only":  {"Bearer", "", false},
		"extra spaces": {"  Bearer   abc  ", "abc", true},
	}
	for name, tc := range cases {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		token, ok := bearerToken(req)
		if token != tc.token && tc.ok || ok != tc.ok {
			t.Errorf("%s: got %q %v, want %q %v", name, token, ok, tc.token, tc.ok)
		}
	}
}
