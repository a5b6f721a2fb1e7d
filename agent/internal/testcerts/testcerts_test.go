package testcerts_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
)

func TestIssueVerifies(t *testing.T) {
	ca, err := testcerts.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(testcerts.Loopback("broker"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(server.CertPEM, server.KeyPEM); err != nil {
		t.Fatalf("server pair: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	if _, err := server.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Fatalf("server certificate does not verify for 127.0.0.1: %v", err)
	}
	expired, err := ca.Issue(testcerts.Leaf{CommonName: "old", Client: true, NotBefore: time.Now().AddDate(0, 0, -2), NotAfter: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = expired.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err == nil {
		t.Fatal("an expired client certificate verified")
	}
}
