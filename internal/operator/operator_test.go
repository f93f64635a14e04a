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

package operator

import (
	"context"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
	kubeflowv1 "github.com/seed-d8a409e9/training-operator/apis/kubeflow.org/v1"
)

func configuration() *configv1alpha1.Configuration {
	cfg := &configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults_Configuration(cfg)
	return cfg
}

// New with a cluster is tested through the harnesses (test/util).

func TestNewRefusesSecureMetricsWithoutCertificates(t *testing.T) {
	cfg := configuration()
	cfg.Metrics.Secure = true
	if _, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, cfg, Overrides{NoWebhooks: true}); err == nil {
		t.Error("want an error")
	}
}

func TestSchemeKnowsEveryOperatorType(t *testing.T) {
	s := NewScheme()
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Pod"},
		kubeflowv1.GroupVersion.WithKind("PyTorchJob"),
		configv1alpha1.GroupVersion.WithKind("Configuration"),
		{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"},
		{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"},
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("scheme does not know %s", gvk)
		}
	}
}

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

// The Lease is renewed over a connection of its own: client-go shares one
// transport (and its HTTP/2 connection) among clients of equal TLS settings,
// and leaseConfig's must not be that one.
func TestLeaseHasItsOwnConnection(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	shared, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rest.TransportFor(rest.CopyConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if again != shared {
		t.Fatal("equal configs got different transports: the check below proves nothing")
	}
	lease, err := rest.TransportFor(leaseConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if lease == shared {
		t.Error("the Lease's config shares the controllers' transport")
	}
}
