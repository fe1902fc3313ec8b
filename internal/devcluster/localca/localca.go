// Package localca makes a throwaway certificate authority and a serving
// certificate for webhooks that listen on loopback: what `karpgate run` and
// the end-to-end tests register with the API server. Clusters get their
// certificates from cert-manager instead (see manifests/).
package localca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// File names inside the certificate folder; they are the names
// controller-runtime's webhook server and certwatcher look for by default.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Bundle is a CA and one serving certificate it signed.
type Bundle struct {
	CAPEM   []byte // for a webhook configuration's caBundle
	CertPEM []byte
	KeyPEM  []byte

	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// New signs a serving certificate for the given hosts (IP addresses or DNS
// names) with a fresh CA. Both are valid from an hour ago, so clock skew
// between processes does not matter, for validFor.
func New(hosts []string, validFor time.Duration) (*Bundle, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("localca: at least one host is needed")
	}
	notBefore := time.Now().Add(-time.Hour)
	notAfter := notBefore.Add(validFor + time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "karpgate local CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	b := &Bundle{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), caCert: caCert, caKey: caKey}
	return b, b.sign(hosts, notBefore, notAfter)
}

// Reissue signs a new serving certificate, with a new key, from the same
// CA: what cert-manager does when it renews, so clients that trust the CA
// keep trusting the server.
func (b *Bundle) Reissue(hosts []string, validFor time.Duration) (*Bundle, error) {
	notBefore := time.Now().Add(-time.Hour)
	next := &Bundle{CAPEM: b.CAPEM, caCert: b.caCert, caKey: b.caKey}
	return next, next.sign(hosts, notBefore, notBefore.Add(validFor+time.Hour))
}

func (b *Bundle) sign(hosts []string, notBefore, notAfter time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, b.caCert, &key.PublicKey, b.caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	b.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	b.KeyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return nil
}

// ClientCertificate signs a client certificate for cn with the CA, as
// the API server's for a webhook that verifies its callers.
func (b *Bundle) ClientCertificate(cn string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	notBefore := time.Now().Add(-time.Hour)
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(2 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, b.caCert, &key.PublicKey, b.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// ClientTLS is a client certificate for cn signed by the CA
// (ClientCertificate), ready for a tls.Config's Certificates.
func (b *Bundle) ClientTLS(cn string) (tls.Certificate, error) {
	certPEM, keyPEM, err := b.ClientCertificate(cn)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// CertPool holds the bundle's CA: a client's RootCAs to trust the serving
// certificate, a server's ClientCAs to verify ClientTLS certificates.
func (b *Bundle) CertPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(b.caCert)
	return pool
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// WriteDir writes tls.crt, tls.key and ca.crt into dir, key readable by the
// owner only. Files are replaced atomically so a certwatcher never sees a
// half-written pair.
func (b *Bundle) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{CAFile, b.CAPEM, 0o644}, {KeyFile, b.KeyPEM, 0o600}, {CertFile, b.CertPEM, 0o644}} {
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
