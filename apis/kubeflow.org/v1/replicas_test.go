package v1

import "testing"

func TestReplicaName(t *testing.T) {
	if got := ReplicaName("my-job", "Worker", 3); got != "my-job-worker-3" {
		t.Errorf("got %q", got)
	}
}

func TestReplicaCount(t *testing.T) {
	three := int32(3)
	for _, c := range []struct {
		spec *ReplicaSpec
		want int32
	}{{nil, 0}, {&ReplicaSpec{}, 1}, {&ReplicaSpec{Replicas: &three}, 3}} {
		if got := c.spec.ReplicaCount(); got != c.want {
			t.Errorf("ReplicaCount(%v) = %d, want %d", c.spec, got, c.want)
		}
	}
}
