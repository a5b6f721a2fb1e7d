package provider_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// TestAccProviderClientCertificate runs the provider against an agent that
// serves HTTPS and requires client certificates (serve --tls-cert,
// --tls-key, --tls-client-ca): with ca_certificate, client_certificate and
// client_key it manages a connection; without the client certificate the
// agent refuses it.
func TestAccProviderClientCertificate(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1 (make test and make testacc do)", resource.EnvTfAcc)
	}
	dir := provider.CertsForTest(t)
	file := func(name string) string { return filepath.Join(dir, name) }
	read := func(name string) []byte {
		b, err := os.ReadFile(file(name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(read("ca.pem"))
	pair, err := tls.X509KeyPair(read("client.pem"), read("client-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := startTestAgent(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		"--tls-cert", file("server.pem"), "--tls-key", file("server-key.pem"), "--tls-client-ca", file("ca.pem"))
	if err != nil {
		t.Fatalf("starting an agent with client certificates: %v", err)
	}
	t.Cleanup(a.stop)

	name := uniqueName("conn")
	getConn := func(ctx context.Context, n string) error { _, err := a.Client.GetConnection(ctx, n); return err }
	trust := "  ca_certificate = file(" + hclString(file("ca.pem")) + ")\n"
	withCert := a.providerHCL(trust,
		"  client_certificate = file("+hclString(file("client.pem"))+")\n",
		"  client_key = file("+hclString(file("client-key.pem"))+")\n") + connectionHCL(name, kafkaBootstrap())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("connection", getConn, name),
		Steps: []resource.TestStep{
			{
				Config: withCert,
				Check:  resource.TestCheckResourceAttr("tributary_connection.c", "id", name),
			},
			{
				// Without a client certificate, the refresh before the plan
				// fails at the TLS handshake.
				Config:      a.providerHCL(trust) + connectionHCL(name, kafkaBootstrap()),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?i)certificate`),
			},
			// Back with the certificate, for the destroy at the end.
			{Config: withCert},
		},
	})
}
