// Package seed reads the sample job manifests of the seed document. It
// imports nothing beyond the standard library so that fuzz targets, whose
// every dependency is instrumented, stay cheap to build.
package seed

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Path is the vendored copy of the seed document in test/testdata/seed.
func Path() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "seed", "training-operator-v1.txt")
}

// Manifests returns the sample job manifests of the seed document, keyed
// by kind, exactly as written there.
func Manifests() (map[string]string, error) {
	data, err := os.ReadFile(Path())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var cur []string
	flush := func() {
		if len(cur) == 0 {
			return
		}
		doc := strings.Join(cur, "\n") + "\n"
		for _, l := range cur {
			if strings.HasPrefix(l, "kind: ") {
				out[strings.TrimPrefix(l, "kind: ")] = doc
			}
		}
		cur = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "apiVersion: "):
			flush()
			cur = []string{line}
		case cur != nil && (line == "" || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "kind:") ||
			strings.HasPrefix(line, "metadata:") || strings.HasPrefix(line, "spec:")):
			cur = append(cur, line)
		default:
			flush()
		}
	}
	flush()
	return out, nil
}
