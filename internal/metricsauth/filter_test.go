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
	"net/http"
	"net/http/httptest"
	"testing"
)

// The end-to-end proof (401/403/200 against a real API server) is the
// security integration suite; this pins the status translation alone.
func TestUnauthorizedTranslation(t *testing.T) {
	cases := []struct {
		name     string
		handler  http.HandlerFunc
		wantCode int
		wantBody string
	}{
		{"rejected token", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
		}, http.StatusUnauthorized, "Unauthorized\n"},
		{"authorization error stays 500", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Authorization for user x failed", http.StatusInternalServerError)
		}, http.StatusInternalServerError, "Authorization for user x failed\n"},
		{"500 without a body", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusInternalServerError, ""},
		{"forbidden", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Authorization denied for user x", http.StatusForbidden)
		}, http.StatusForbidden, "Authorization denied for user x\n"},
		{"metrics", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("a 1\n"))
		}, http.StatusOK, "a 1\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			u := &unauthorized{ResponseWriter: rec}
			tc.handler(u, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			u.flush()
			if rec.Code != tc.wantCode || rec.Body.String() != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}
