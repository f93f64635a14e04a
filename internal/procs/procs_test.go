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

package procs

import (
	"runtime"
	"testing"
)

func TestSet(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })

	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(4)
	if got := Set(); got != Default || runtime.GOMAXPROCS(0) != Default {
		t.Errorf("Set() = %d with 4 processors and GOMAXPROCS unset; want %d", got, Default)
	}

	// The user's GOMAXPROCS stands.
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	if got := Set(); got != 3 {
		t.Errorf("Set() = %d with GOMAXPROCS=3; want 3", got)
	}
}
