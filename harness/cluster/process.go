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

package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-d8a409e9/training-operator/harness/childproc"
)

// startProcess starts bin with args; stdout and stderr go to logDir/<name>.log
// (truncated) after a line with the command. The child gets its own process
// group, so a signal reaches what it forks.
func startProcess(name, bin string, args []string, logDir string, env []string) (*childproc.Process, error) {
	return childproc.Start(childproc.Spec{
		Name:         name,
		Bin:          bin,
		Args:         args,
		Env:          env,
		LogPath:      filepath.Join(logDir, name+".log"),
		Header:       fmt.Sprintf("# %s %s\n", bin, strings.Join(args, " ")),
		ProcessGroup: true,
	})
}

// exitError describes an early exit, with the tail of the log.
func exitError(p *childproc.Process) error {
	return fmt.Errorf("%s exited early (%v); last lines of %s:\n%s", p.Name(), p.Err(), p.LogPath(), p.Tail(30))
}

// isExecutable reports whether path is a regular executable file.
func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
