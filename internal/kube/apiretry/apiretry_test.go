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

package apiretry

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRetriable(t *testing.T) {
	gr := schema.GroupResource{Resource: "events"}
	cases := []struct {
		name      string
		err       error
		retriable bool
	}{
		{"transport error", errors.New("connection refused"), true},
		{"503", apierrors.NewServiceUnavailable("busy"), true},
		{"500", apierrors.NewInternalError(errors.New("boom")), true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"504", apierrors.NewTimeoutError("slow", 1), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "create", 1), true},
		{"wrapped 503", fmt.Errorf("creating: %w", apierrors.NewServiceUnavailable("busy")), true},
		{"403", apierrors.NewForbidden(gr, "x", errors.New("no")), false},
		{"422", apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, "x", nil), false},
		{"404", apierrors.NewNotFound(gr, "x"), false},
	}
	for _, tc := range cases {
		if got := Retriable(tc.err); got != tc.retriable {
			t.Errorf("%s: Retriable = %v, want %v", tc.name, got, tc.retriable)
		}
		if got := Refused(tc.err); got == tc.retriable {
			t.Errorf("%s: Refused = %v, want %v", tc.name, got, !tc.retriable)
		}
	}
}
