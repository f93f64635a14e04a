package util

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// KeyPair is a test certificate, its key and its PEM encoding.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// NewCA returns a self-signed CA valid for a day.
func NewCA(commonName string) (*KeyPair, error) {
	return issue(&x509.Certificate{
		Subject: pkix.Name{CommonName: commonName}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
}

// ServingCert returns a server certificate signed by ca, valid for a day,
// for 127.0.0.1, localhost and dnsNames (servers the tests reach locally).
func (ca *KeyPair) ServingCert(commonName string, dnsNames ...string) (*KeyPair, error) {
	return issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		DNSNames:    append([]string{"localhost"}, dnsNames...),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
}

// Renew returns the CA renewed as cert-manager renews a CA Certificate:
// the same subject, a new serial number and validity, and the same key if
// reuseKey (privateKey.rotationPolicy Never) or a new one (Always).
func (ca *KeyPair) Renew(reuseKey bool) (*KeyPair, error) {
	var key *ecdsa.PrivateKey
	if reuseKey {
		key = ca.Key
	}
	return issueWithKey(&x509.Certificate{
		Subject: ca.Cert.Subject, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: ca.Cert.KeyUsage,
	}, nil, key)
}

// ServingCertFor is ServingCert valid for validity (the alert on a
// certificate near expiry needs both sides of its threshold).
func (ca *KeyPair) ServingCertFor(validity time.Duration, commonName string, dnsNames ...string) (*KeyPair, error) {
	return issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		DNSNames:    append([]string{"localhost"}, dnsNames...),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotAfter:    time.Now().Add(validity),
	}, ca)
}

func issue(tmpl *x509.Certificate, parent *KeyPair) (*KeyPair, error) {
	return issueWithKey(tmpl, parent, nil)
}

// issueWithKey is issue with the certificate's key given (nil: a new one).
func issueWithKey(tmpl *x509.Certificate, parent *KeyPair, key *ecdsa.PrivateKey) (*KeyPair, error) {
	var err error
	if key == nil {
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, err
		}
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, big.NewInt(1<<62)); err != nil {
		return nil, err
	}
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// WriteTLSFiles replaces tls.crt and tls.key in dir as the kubelet
// refreshes a mounted Secret: each written beside and renamed into place,
// the key first, so a reader that sees the new certificate finds its key.
func WriteTLSFiles(dir string, kp *KeyPair) error {
	der, err := x509.MarshalECPrivateKey(kp.Key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"tls.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600},
		{"tls.crt", kp.CertPEM, 0o644},
	} {
		tmp := filepath.Join(dir, "."+f.name+".tmp")
		if err := os.WriteFile(tmp, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, f.name)); err != nil {
			return err
		}
	}
	return nil
}
