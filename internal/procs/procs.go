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

// Package procs sets how many threads run the operator's Go code at once
// (GOMAXPROCS).
package procs

import (
	"os"
	"runtime"
)

// Default is the operator's GOMAXPROCS unless the GOMAXPROCS environment
// variable says otherwise. The operator spends its time waiting on the API
// server: its work comes in small pieces (a watch event, a reconcile pass,
// an admission review), and a second processor mostly adds the runtime's
// cost of keeping it busy (threads spinning for work and woken by futex,
// GC workers on both). make bench's burst-500, three runs each: 18.4-22.1 ms of operator
// CPU per job with 2 processors, 15.3-15.7 ms with 1, and the bursts were
// no slower (all pods and Services in 53.0-78.2 s against 46.5-51.1 s).
const Default = 1

// Set applies Default, unless GOMAXPROCS is set or the runtime's own choice
// (the CPUs, or the container's CPU limit) is lower already, and returns
// the value in effect.
func Set() int {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > Default {
		runtime.GOMAXPROCS(Default)
	}
	return runtime.GOMAXPROCS(0)
}
