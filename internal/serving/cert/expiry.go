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
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"time"
)

// NotAfter returns the expiry of the serving certificate the webhook server
// reads now (the leaf of tls.crt in the cert dir), whoever provides it: the
// operator, cert-manager, or a Secret mounted by hand. ok is false until
// the files exist.
func (p *Provider) NotAfter() (time.Time, bool, error) {
	if !p.isReady() {
		return time.Time{}, false, nil
	}
	data, err := os.ReadFile(p.certFile(TLSCertKey))
	if err != nil {
		return time.Time{}, false, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return time.Time{}, false, errors.New("no certificate in " + p.certFile(TLSCertKey))
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return time.Time{}, false, err
	}
	return c.NotAfter, true, nil
}
