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
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxWriteAttempts bounds the get/update retries on conflicts with other
// replicas writing the same Secret.
const maxWriteAttempts = 5

// secretKey is the Secret's entry in Provider.existed.
const secretKey = "Secret"

// ensureSecret makes the Secret hold a usable CA and serving certificate,
// creating or updating it as needed, and returns its certificate data.
func (p *Provider) ensureSecret(ctx context.Context) (map[string][]byte, error) {
	key := client.ObjectKey{Namespace: p.opts.Namespace, Name: p.opts.SecretName}
	for range maxWriteAttempts {
		var secret corev1.Secret
		err := p.reader.Get(ctx, key, &secret)
		notFound := apierrors.IsNotFound(err)
		if err != nil && !notFound {
			return nil, err
		}
		if notFound && p.existed[secretKey] {
			return nil, errors.New("the Secret was deleted; the operator fills it but does not create it again: " +
				"re-install it (helm upgrade, or kubectl apply -k)")
		}
		if !notFound {
			p.existed[secretKey] = true
		}
		data, reasons, err := p.desiredSecretData(secret.Data)
		if err != nil {
			return nil, err
		}
		if len(reasons) == 0 {
			return data, nil
		}
		p.log.Info("issuing webhook certificates", "secret", key.String(), "reasons", reasons)
		if notFound {
			secret = corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Type:       corev1.SecretTypeOpaque,
				Data:       data,
			}
			err = p.writer.Create(ctx, &secret)
			if err == nil {
				p.existed[secretKey] = true
			}
			if apierrors.IsAlreadyExists(err) {
				continue // another replica was first; use its certificates
			}
			if apierrors.IsForbidden(err) {
				// Installed RBAC names the Secret and grants no create.
				return nil, fmt.Errorf("the Secret is missing and the operator may only fill it, not create it: "+
					"re-install it (helm upgrade, or kubectl apply -k): %w", err)
			}
		} else {
			if secret.Data == nil {
				secret.Data = map[string][]byte{}
			}
			for k, v := range data {
				secret.Data[k] = v
			}
			err = p.writer.Update(ctx, &secret)
			if apierrors.IsConflict(err) {
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		return data, nil
	}
	return nil, errors.New("too many conflicting writes")
}

// desiredSecretData returns the certificate data the Secret should hold,
// given what it holds now, and why it differs (nil if it does not).
//   - The CA is kept while it is valid for more than CARenewBefore; a new
//     CA is issued otherwise. Older CAs that have not expired stay in
//     ca.crt after the current one so that serving certificates they
//     signed keep working during a rotation; expired ones are dropped.
//   - The serving certificate is kept while it is signed by the current
//     CA, valid for more than CertRenewBefore and carries every name.
//   - After a CA rotation the serving certificate of the previous CA is
//     kept (while it is valid and carries every name) until the new CA has
//     been in both webhook configurations' caBundle for BundlePropagation
//     (see mayServeFrom): a leaf the API servers' bundle cannot verify
//     would fail admission.
func (p *Provider) desiredSecretData(cur map[string][]byte) (map[string][]byte, []string, error) {
	now := p.opts.Now()
	var reasons []string

	var previous []*x509.Certificate
	if certs, err := parseCerts(cur[CACertKey]); err == nil {
		previous = certs
	}
	ca, err := parseKeyPair(cur[CACertKey], cur[CAKeyKey])
	switch {
	case err != nil:
		reasons = append(reasons, fmt.Sprintf("no usable CA: %v", err))
		ca = nil
	case !ca.cert.IsCA:
		reasons = append(reasons, "CA certificate is not a CA")
		ca = nil
	case now.Add(p.opts.CARenewBefore).After(ca.cert.NotAfter):
		reasons = append(reasons, fmt.Sprintf("CA expires at %s", ca.cert.NotAfter.UTC()))
		ca = nil
	}
	if ca == nil {
		if ca, err = newCA(now, p.opts.CAValidity); err != nil {
			return nil, nil, err
		}
	}
	bundle := []*x509.Certificate{ca.cert}
	for _, c := range previous {
		if c.Equal(ca.cert) || !now.Before(c.NotAfter) {
			continue
		}
		bundle = append(bundle, c)
	}
	caPEM := encodeCerts(bundle)
	if len(reasons) == 0 && !bytes.Equal(caPEM, cur[CACertKey]) {
		reasons = append(reasons, "CA bundle changed")
	}

	serving, err := parseKeyPair(cur[TLSCertKey], cur[TLSKeyKey])
	if err == nil {
		err = verifyServing(serving, []*x509.Certificate{ca.cert}, p.names, now, p.opts.CertRenewBefore)
		if errors.Is(err, errOtherCA) && !p.mayServeFrom(ca.cert) &&
			verifyServing(serving, bundle[1:], p.names, now, 0) == nil {
			err = nil
		}
	}
	if err != nil {
		reasons = append(reasons, fmt.Sprintf("serving certificate: %v", err))
		if serving, err = newServingCert(ca, p.names, now, p.opts.CertValidity); err != nil {
			return nil, nil, err
		}
	}
	return map[string][]byte{
		CACertKey:  caPEM,
		CAKeyKey:   ca.keyPEM,
		TLSCertKey: serving.certPEM,
		TLSKeyKey:  serving.keyPEM,
	}, reasons, nil
}

func (p *Provider) certFile(name string) string { return filepath.Join(p.opts.CertDir, name) }

// syncFiles makes tls.crt, tls.key and ca.crt in the cert dir match data
// and reports whether the serving certificate files are in place. When the
// directory is read-only (the Secret is mounted there) it does not write
// but waits for the kubelet to update the mounted files.
func (p *Provider) syncFiles(data map[string][]byte) (bool, error) {
	if p.filesMatch(data) {
		return true, nil
	}
	if err := os.MkdirAll(p.opts.CertDir, 0o755); err != nil && !readOnly(err) {
		return false, err
	}
	// The key first: until both are written the watcher keeps the old pair.
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{TLSKeyKey, 0o600}, {TLSCertKey, 0o644}, {CACertKey, 0o644}} {
		if err := writeFileAtomic(p.certFile(f.name), data[f.name], f.mode); err != nil {
			if readOnly(err) {
				p.log.Info("certificate directory is read-only; waiting for the mounted Secret to be updated", "certDir", p.opts.CertDir)
				return false, nil
			}
			return false, err
		}
	}
	return true, nil
}

// filesMatch reports whether tls.crt and tls.key hold data's certificate.
func (p *Provider) filesMatch(data map[string][]byte) bool {
	for _, name := range []string{TLSCertKey, TLSKeyKey} {
		got, err := os.ReadFile(p.certFile(name))
		if err != nil || !bytes.Equal(got, data[name]) {
			return false
		}
	}
	return true
}

func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// writeFileAtomic writes data to a temporary file in the same directory and
// renames it over path, so readers never see a partial file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) //nolint:errcheck // gone after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close() //nolint:errcheck,gosec // the write error matters
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close() //nolint:errcheck,gosec // the chmod error matters
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
