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
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAnswer: only the library's failed authentication (500 "Authentication
// failed") becomes 401; every other answer keeps its status, with or
// without a body.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  func(w http.ResponseWriter)
		status int
	}{
		{"failed authentication", func(w http.ResponseWriter) { http.Error(w, "Authentication failed", http.StatusInternalServerError) }, http.StatusUnauthorized},
		{"failed authorization check", func(w http.ResponseWriter) { http.Error(w, "Authorization failed", http.StatusInternalServerError) }, http.StatusInternalServerError},
		{"denied", func(w http.ResponseWriter) { http.Error(w, "Authorization denied", http.StatusForbidden) }, http.StatusForbidden},
		{"status without a body", func(w http.ResponseWriter) { w.WriteHeader(http.StatusForbidden) }, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			a := &answer{ResponseWriter: rec}
			tc.write(a)
			a.finish()
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d (body %q)", rec.Code, tc.status, rec.Body.String())
			}
		})
	}
}
