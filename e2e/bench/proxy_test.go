package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// The operator must reach the proxy as it reaches an apiserver: over TLS
// with HTTP/2, its requests multiplexed on one connection, and each counted.
func TestProxyServesHTTP2AndCounts(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"kind":"PodList","items":[]}`))
	}))
	defer upstream.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})
	p, err := startProxy(&rest.Config{Host: upstream.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	hc, err := rest.HTTPClientFor(p.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp, err := hc.Get(p.URL() + "/api/v1/namespaces/default/pods")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			t.Fatalf("status %d over %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
		}
	}
	if got := p.snapshot()[requestKey{verb: "list", resource: "pods", code: http.StatusOK}]; got != 3 {
		t.Errorf("counted %d pod lists, want 3 (counts: %v)", got, p.snapshot())
	}
}
