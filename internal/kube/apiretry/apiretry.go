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

// Package apiretry tells the API server's trouble from a refusal of the
// request, for the operator's own writers that retry (the Event sink).
package apiretry

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Refused reports whether err is the API server's answer about the request
// itself (invalid, forbidden, not found, ...): trying again cannot help.
func Refused(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && !Retriable(err)
}

// Retriable reports whether err may pass on a second try: no answer from the
// API server (a transport error), or its own trouble (5xx, 429, timeouts).
func Retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err)
}
