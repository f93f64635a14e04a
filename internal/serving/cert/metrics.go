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
	"context"
	"crypto/tls"
	"errors"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// servedCert serves the webhook serving certificate on another server (the
// secure metrics endpoint), so that a scraper can verify it with the
// operator's CA (or cert-manager's) and the Service's name instead of
// skipping verification. The files exist only once the provider is ready,
// so controller-runtime's certwatcher is started then.
type servedCert struct {
	p   *Provider
	ctx context.Context
	mu  sync.Mutex
	w   *certwatcher.CertWatcher
}

// MetricsTLS is a metrics server TLS option: serve the webhook serving
// certificate, reloaded as it rotates. ctx bounds the certificate watcher.
func (p *Provider) MetricsTLS(ctx context.Context) func(*tls.Config) {
	s := &servedCert{p: p, ctx: ctx}
	return func(cfg *tls.Config) { cfg.GetCertificate = s.get }
}

var errNotReady = errors.New("the serving certificate is not issued yet")

func (s *servedCert) get(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if !s.p.isReady() {
		return nil, errNotReady
	}
	s.mu.Lock()
	if s.w == nil {
		// A failure (files caught mid-rotation) is retried on the next handshake.
		w, err := certwatcher.New(s.p.certFile(TLSCertKey), s.p.certFile(TLSKeyKey))
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.w = w
		go func() {
			if err := w.Start(s.ctx); err != nil {
				s.p.log.Error(err, "watching the serving certificate for metrics")
			}
		}()
	}
	w := s.w
	s.mu.Unlock()
	return w.GetCertificate(hello)
}
