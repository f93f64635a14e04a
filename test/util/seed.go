package util

import (
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

// SeedDocument is the path of the seed document with the four sample jobs.
func SeedDocument() string {
	return filepath.Join(RepoRoot(), "..", "shared", "seed", "training-operator-v1.txt")
}

// SeedManifests returns the sample job manifests of the seed document, keyed
// by kind, exactly as written there. The samples are also vendored in
// test/testdata/seed so a clone without the shared folder still has them.
func SeedManifests() (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "test", "testdata", "seed", "training-operator-v1.txt"))
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

// SeedPyTorchJob is the seed document's PyTorchJob in the namespace.
func SeedPyTorchJob(ns string) *kubeflowv1.PyTorchJob {
	m, err := SeedManifests()
	if err != nil {
		panic(err)
	}
	var j kubeflowv1.PyTorchJob
	if err := yaml.UnmarshalStrict([]byte(m["PyTorchJob"]), &j); err != nil {
		panic(err)
	}
	j.Namespace = ns
	return &j
}
