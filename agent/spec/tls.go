package spec

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// This file reads the certificates and keys of a connection: the PEM of
// tls.ca_pem, tls.cert_pem and tls.key_pem, the PKCS#12 store of
// tls.keystore_p12_base64 and the registry's ca_pem. Validate and the
// agent's Kafka and registry clients use the same functions, so what
// passes validation is what the clients load.

// Security protocols of [Connection.SecurityProtocol].
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// jksMagic starts every Java KeyStore (JKS) file.
var jksMagic = []byte{0xFE, 0xED, 0xFE, 0xED}

// errJKS is the error for a JKS store where a PKCS#12 one is expected.
var errJKS = errors.New("the key store is a Java KeyStore (JKS), which the agent cannot read; convert it to PKCS#12 with " +
	"`keytool -importkeystore -srckeystore client.jks -srcstoretype JKS -destkeystore client.p12 -deststoretype PKCS12` " +
	"and set keystore_p12_base64 to the base64 of client.p12 (in Terraform: filebase64(\"client.p12\"))")

// CertPool returns a pool of the CA certificates in pemText, which holds
// one or more PEM CERTIFICATE blocks and nothing else. Its errors never
// quote the text.
func CertPool(pemText string) (*x509.CertPool, error) {
	certs, err := parseCertificates(pemText)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// parseCertificates decodes the PEM CERTIFICATE blocks of pemText, which
// must hold at least one and nothing but them.
func parseCertificates(pemText string) ([]*x509.Certificate, error) {
	rest := []byte(pemText)
	var certs []*x509.Certificate
	for i := 1; ; i++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %d is a %q; only CERTIFICATE blocks belong here", i, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is not a valid certificate: %w", i, err)
		}
		certs = append(certs, c)
	}
	switch {
	case len(certs) == 0:
		return nil, errors.New("no PEM certificate found; give one or more \"-----BEGIN CERTIFICATE-----\" blocks")
	case len(bytes.TrimSpace(rest)) > 0:
		return nil, errors.New("text after the last PEM certificate is not PEM; give only \"-----BEGIN CERTIFICATE-----\" blocks")
	}
	return certs, nil
}

// keyPair returns the client certificate of certPEM (its chain, leaf
// first) and keyPEM. Its error says which of the two is wrong.
func keyPair(certPEM, keyPEM string) (tls.Certificate, *tlsFieldError) {
	if _, err := parseCertificates(certPEM); err != nil {
		return tls.Certificate{}, &tlsFieldError{"cert_pem", err}
	}
	pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		// The certificates parse, so the key is what is wrong; the tls
		// package's messages do not quote the key.
		return tls.Certificate{}, &tlsFieldError{"key_pem", fmt.Errorf("the key does not parse or does not match cert_pem: %w", err)}
	}
	return pair, nil
}

// keystore returns the client certificate of a PKCS#12 store, in base64,
// opened with password. A JKS store, raw or in base64, gets an error
// saying how to convert it.
func keystore(p12Base64, password string) (tls.Certificate, *tlsFieldError) {
	const attr = "keystore_p12_base64"
	if strings.HasPrefix(p12Base64, string(jksMagic)) {
		return tls.Certificate{}, &tlsFieldError{attr, errJKS}
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(p12Base64), ""))
	if err != nil {
		return tls.Certificate{}, &tlsFieldError{attr, errors.New("the value is not base64; give the base64 of the .p12 file (in Terraform: filebase64(\"client.p12\"))")}
	}
	if bytes.HasPrefix(der, jksMagic) {
		return tls.Certificate{}, &tlsFieldError{attr, errJKS}
	}
	if len(der) > MaxP12Bytes {
		return tls.Certificate{}, &tlsFieldError{attr, fmt.Errorf("the PKCS#12 key store is %d bytes, more than the %d accepted; "+
			"it should hold only the client's key, its certificate and their chain", len(der), MaxP12Bytes)}
	}
	if sum, largest, ok := p12Iterations(der); ok && sum > MaxP12Iterations {
		return tls.Certificate{}, &tlsFieldError{attr, p12IterationsError(sum, largest)}
	}
	key, leaf, chain, err := pkcs12.DecodeChain(der, password)
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return tls.Certificate{}, &tlsFieldError{"keystore_password", errors.New("the password does not open the PKCS#12 key store")}
	case err != nil:
		return tls.Certificate{}, &tlsFieldError{attr, fmt.Errorf("the PKCS#12 key store does not hold one private key and its certificate "+
			"(a trust store of CA certificates goes in ca_pem, as PEM: `openssl pkcs12 -in truststore.p12 -nokeys`): %w", err)}
	}
	out := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, c := range chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, nil
}

// tlsFieldError is a problem of one attribute of a tls block.
type tlsFieldError struct {
	attr string
	err  error
}

func (e *tlsFieldError) Error() string { return e.attr + ": " + e.err.Error() }
func (e *tlsFieldError) Unwrap() error { return e.err }

// UsesTLS reports whether the connection's protocol is SSL or SASL_SSL.
func (c *Connection) UsesTLS() bool {
	return c.SecurityProtocol == ProtocolSSL || c.SecurityProtocol == ProtocolSASLSSL
}

// TLSConfig returns the TLS configuration of the connection's brokers: nil
// when its protocol does not use TLS, else one that trusts tls.ca_pem (or
// the system's CAs) and presents the client certificate of tls.cert_pem
// and tls.key_pem or of the PKCS#12 key store, if any. Its errors name the
// attribute and never quote a secret; a valid connection has none.
func (c *Connection) TLSConfig() (*tls.Config, error) {
	if !c.UsesTLS() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	t := c.TLS
	if t == nil {
		return cfg, nil
	}
	cfg.ServerName = t.ServerName
	cfg.InsecureSkipVerify = t.InsecureSkipVerify
	if t.CAPEM != "" {
		pool, err := CertPool(t.CAPEM)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_pem: %w", err)
		}
		cfg.RootCAs = pool
	}
	cert, fe := t.clientCertificate()
	if fe != nil {
		return nil, fmt.Errorf("tls.%w", fe)
	}
	if cert != nil {
		// The certificate is sent whatever CAs the broker names as
		// acceptable, so that a broker that does not trust it says so
		// (rather than that a certificate is required).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return cfg, nil
}

// clientCertificate returns the client certificate of t, nil when it has
// none, or the problem of the attribute that is wrong.
func (t *TLS) clientCertificate() (*tls.Certificate, *tlsFieldError) {
	var (
		cert tls.Certificate
		fe   *tlsFieldError
	)
	switch {
	case t.KeystoreP12Base64 != "":
		cert, fe = keystore(t.KeystoreP12Base64, t.KeystorePassword)
	case t.CertPEM != "" || t.KeyPEM != "":
		cert, fe = keyPair(t.CertPEM, t.KeyPEM)
	default:
		return nil, nil
	}
	if fe != nil {
		return nil, fe
	}
	return &cert, nil
}
