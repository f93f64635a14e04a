package util

import (
	"testing"

	"sigs.k8s.io/yaml"
)

func TestSeedManifests(t *testing.T) {
	m, err := SeedManifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob"} {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(m[kind]), &obj); err != nil || obj["kind"] != kind {
			t.Errorf("%s: %v, %v\n%s", kind, err, obj["kind"], m[kind])
		}
	}
	if j := SeedPyTorchJob("ns"); *j.Spec.PyTorchReplicaSpecs["Worker"].Replicas != 3 {
		t.Errorf("seed PyTorchJob = %+v", j.Spec)
	}
}
