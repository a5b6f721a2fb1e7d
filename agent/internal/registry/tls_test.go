package registry_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
)

func TestHTTPSWithCA(t *testing.T) {
	ca, err := testcerts.NewCA("registry CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(testcerts.Loopback("registry"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	reg := srfake.NewRegistry(srfake.WithAuth(basic(testKey, testSecret)))
	reg.SeedSchema("orders-value", 1, 7, sr.Schema{Schema: avroText})
	srv := httptest.NewUnstartedServer(reg.Handler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()

	trusting, err := registry.New(registry.Config{URL: srv.URL, APIKey: testKey, APISecret: testSecret, CAPEM: string(ca.CertPEM)})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := trusting.SchemaByID(context.Background(), 7); err != nil || s.Text != avroText {
		t.Fatalf("SchemaByID = %v, %v", s, err)
	}

	untrusting, err := registry.New(registry.Config{URL: srv.URL, APIKey: testKey, APISecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	_, err = untrusting.SchemaByID(context.Background(), 7)
	if !errors.Is(err, registry.ErrUnavailable) || !strings.Contains(err.Error(), "set schema_registry.ca_pem") {
		t.Errorf("without the CA: error = %v", err)
	}
	noSecret(t, err)

	if _, err := registry.New(registry.Config{URL: srv.URL, CAPEM: "not PEM"}); err == nil || !strings.Contains(err.Error(), "ca_pem") {
		t.Errorf("a CA that does not parse: error = %v", err)
	}
}
