package util

import (
	"path/filepath"

	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
	"github.com/seed-d8a409e9/training-operator/test/seed"
)

// SeedDocument is the path of the seed document with the four sample jobs.
func SeedDocument() string {
	return filepath.Join(RepoRoot(), "..", "shared", "seed", "training-operator-v1.txt")
}

// SeedManifests returns the sample job manifests of the seed document, keyed
// by kind, exactly as written there. The samples are also vendored in
// test/testdata/seed so a clone without the shared folder still has them.
func SeedManifests() (map[string]string, error) { return seed.Manifests() }

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
