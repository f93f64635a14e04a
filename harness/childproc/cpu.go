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

package childproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUSeconds is utime+stime of a process from /proc/<pid>/stat.
func CPUSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseProcStatCPU(string(data))
}

// ParseProcStatCPU reads utime+stime (fields 14 and 15) of a /proc stat line.
func ParseProcStatCPU(s string) (float64, error) {
	// The command name (field 2) may contain spaces; fields after ")" start at field 3.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat: %q", s)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc stat: %q", s)
	}
	const clockTicks = 100 // USER_HZ; 100 on every Linux platform Go supports
	return (utime + stime) / clockTicks, nil
}
