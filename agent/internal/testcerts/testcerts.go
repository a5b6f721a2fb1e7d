// Package testcerts makes throw-away certificate authorities and the
// certificates they sign, for tests and for the test brokers and registry
// of tools/: a CA, server certificates for loopback names, client
// certificates, expired ones. Keys are ECDSA P-256 in PKCS#8 PEM, which
// both Go and Java (Kafka's PEM key stores) read. Nothing here is meant to
// protect anything.
package testcerts

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority that signs leaf certificates.
type CA struct {
	// Cert is the CA's self-signed certificate.
	Cert *x509.Certificate
	// CertPEM is Cert in PEM, what a client or server trusts.
	CertPEM []byte
	key     crypto.Signer
}

// Leaf describes a certificate for [CA.Issue] to sign.
type Leaf struct {
	// CommonName is the subject's CN, e.g. "tributary-client".
	CommonName string
	// DNSNames and IPs are the subject alternative names a server
	// certificate is valid for.
	DNSNames []string
	IPs      []net.IP
	// Client makes a client certificate (extended key usage clientAuth);
	// otherwise it is a server certificate (serverAuth).
	Client bool
	// NotBefore and NotAfter bound the validity; zero values mean from an
	// hour ago to a year from now. An expired certificate has NotAfter in
	// the past.
	NotBefore, NotAfter time.Time
}

// Pair is a signed certificate and its private key, both in PEM.
type Pair struct {
	CertPEM []byte
	KeyPEM  []byte
	// Key is the private key, for encoders (PKCS#12) that want it parsed.
	Key crypto.Signer
	// Cert is the parsed certificate.
	Cert *x509.Certificate
}

// NewCA returns a new CA whose subject is name, valid for ten years.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign the CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse the CA certificate: %w", err)
	}
	return &CA{Cert: cert, CertPEM: pemBlock("CERTIFICATE", der), key: key}, nil
}

// Issue signs a new key pair for l.
func (ca *CA) Issue(l Leaf) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the key of %q: %w", l.CommonName, err)
	}
	notBefore, notAfter := l.NotBefore, l.NotAfter
	if notBefore.IsZero() {
		notBefore = time.Now().Add(-time.Hour)
	}
	if notAfter.IsZero() {
		notAfter = time.Now().AddDate(1, 0, 0)
	}
	usage := x509.ExtKeyUsageServerAuth
	if l.Client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: l.CommonName},
		DNSNames:     l.DNSNames,
		IPAddresses:  l.IPs,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign the certificate of %q: %w", l.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse the certificate of %q: %w", l.CommonName, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode the key of %q: %w", l.CommonName, err)
	}
	return &Pair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", pkcs8), Key: key, Cert: cert}, nil
}

// Loopback is a server certificate's names for a service on this machine:
// localhost, 127.0.0.1 and ::1.
func Loopback(commonName string) Leaf {
	return Leaf{CommonName: commonName, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// serial returns a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
