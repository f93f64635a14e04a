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

package cert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
)

// TestMetricsTLS: the metrics endpoint refuses handshakes until the
// serving certificate exists, then serves exactly that certificate.
func TestMetricsTLS(t *testing.T) {
	p, cl := newTestProvider(t, &clock{now: t0}, nil)
	cfg := &tls.Config{}
	p.MetricsTLS(t.Context())(cfg)
	if _, err := cfg.GetCertificate(&tls.ClientHelloInfo{}); !errors.Is(err, errNotReady) {
		t.Fatalf("before the certificates exist: %v, want errNotReady", err)
	}
	if err := p.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	served, err := x509.ParseCertificate(got.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseCerts(getSecret(t, cl).Data[TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	if !served.Equal(want[0]) {
		t.Errorf("metrics serve %s, want the webhook serving certificate %s", served.Subject, want[0].Subject)
	}
}
