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

package config

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/seed-d8a409e9/training-operator/apis/config/v1alpha1"
)

// The API server compresses a response only for a client that sends
// Accept-Encoding: gzip, which Go's transport adds unless compression is
// disabled: check what the operator's HTTP client really sends. Over TLS,
// as to a real API server: client-go gives a plain-HTTP config Go's default
// transport, which ignores the setting.
func TestApplyClientConnection(t *testing.T) {
	cases := map[string]struct {
		disable      bool
		wantEncoding string
	}{
		"default: uncompressed": {disable: true, wantEncoding: ""},
		"compression kept":      {disable: false, wantEncoding: "gzip"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := make(chan string, 1)
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Get("Accept-Encoding")
			}))
			defer srv.Close()

			cfg := &configv1alpha1.Configuration{}
			configv1alpha1.SetDefaults_Configuration(cfg)
			cfg.ClientConnection.DisableCompression = &tc.disable
			rc := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
			ApplyClientConnection(rc, cfg.ClientConnection)
			if rc.QPS != configv1alpha1.DefaultQPS || rc.Burst != int(configv1alpha1.DefaultBurst) {
				t.Errorf("QPS, Burst = %v, %d, want %v, %d", rc.QPS, rc.Burst, configv1alpha1.DefaultQPS, configv1alpha1.DefaultBurst)
			}
			hc, err := rest.HTTPClientFor(rc)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Get(srv.URL + "/api/v1/pods")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if enc := <-got; enc != tc.wantEncoding {
				t.Errorf("Accept-Encoding = %q, want %q", enc, tc.wantEncoding)
			}
		})
	}
}
