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

package main

import (
	"context"
	"net/http/httptest"
	"testing"
)

type syncState bool

func (s syncState) WaitForCacheSync(context.Context) bool { return bool(s) }

func TestCacheSyncedReadiness(t *testing.T) {
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := cacheSynced(syncState(false))(req); err == nil {
		t.Error("not synced: want not ready")
	}
	if err := cacheSynced(syncState(true))(req); err != nil {
		t.Errorf("synced: want ready, got %v", err)
	}
}
