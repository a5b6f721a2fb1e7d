package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// testCertsCommand writes the test certificates from agent/internal/testcerts,
// which the provider's tests cannot import (it is internal to agent/).
const testCertsCommand = "../agent/cmd/testcerts"

// testCerts runs testCertsCommand into a temporary folder and returns the
// folder, which holds ca.pem, server.pem, client.pem, client-key.pem,
// client.p12 (password testP12Password) and more; it skips t in a tree
// without the command.
func testCerts(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(testCertsCommand); err != nil {
		t.Skipf("the test certificates come from %s, which this tree does not have yet: %v", testCertsCommand, err)
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "run", testCertsCommand, "-dir", dir, "-p12-password", testP12Password).CombinedOutput()
	if err != nil {
		t.Fatalf("go run %s: %v\n%s", testCertsCommand, err, out)
	}
	return dir
}

// testP12Password is the password of the client.p12 of testCerts.
const testP12Password = "tributary-p12-test"

// readTestCerts returns a reader of the files of testCerts.
func readTestCerts(t *testing.T) func(name string) string {
	t.Helper()
	dir := testCerts(t)
	return func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// providerConfig is cfg as the provider gets it from Terraform; an unset
// endpoints is null.
func providerConfig(t *testing.T, cfg tributaryProviderModel) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	if cfg.Endpoints.ElementType(ctx) == nil {
		cfg.Endpoints = types.ListNull(types.StringType)
	}
	var sresp provider.SchemaResponse
	(&tributaryProvider{}).Schema(ctx, provider.SchemaRequest{}, &sresp)
	raw := tfsdk.State{Schema: sresp.Schema, Raw: tftypes.NewValue(sresp.Schema.Type().TerraformType(ctx), nil)}
	if d := raw.Set(ctx, cfg); d.HasError() {
		t.Fatal(d)
	}
	return tfsdk.Config{Schema: sresp.Schema, Raw: raw.Raw}
}

// errorsOf returns the summary and detail of each error of diags.
func errorsOf(diags diag.Diagnostics) []string {
	var problems []string
	for _, d := range diags.Errors() {
		problems = append(problems, d.Summary()+": "+d.Detail())
	}
	return problems
}

// configureProvider runs the provider's Configure with cfg and returns the
// agent client and the diagnostics' summaries.
func configureProvider(t *testing.T, cfg tributaryProviderModel) (*client.Client, []string) {
	t.Helper()
	var resp provider.ConfigureResponse
	(&tributaryProvider{}).Configure(context.Background(), provider.ConfigureRequest{Config: providerConfig(t, cfg)}, &resp)
	problems := errorsOf(resp.Diagnostics)
	data, _ := resp.ResourceData.(*providerData)
	if data == nil {
		return nil, problems
	}
	return data.client, problems
}

// TestProviderClientCertificate points the provider at an https agent (an
// httptest server) that requires a client certificate signed by the test
// CA: with client_certificate and client_key, or their environment
// variables, it gets through, also as the second of endpoints; without,
// the TLS handshake fails; and incomplete or mismatched pairs are refused
// on their attributes.
func TestProviderClientCertificate(t *testing.T) {
	cert := readTestCerts(t)
	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM([]byte(cert("ca.pem")))
	serverPair, err := tls.X509KeyPair([]byte(cert("server.pem")), []byte(cert("server-key.pem")))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"c1","bootstrap_servers":["b:9092"]}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientCAs: clientCAs,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()

	base := tributaryProviderModel{
		Endpoint: types.StringValue(srv.URL), Token: types.StringNull(),
		CACertificate: types.StringValue(cert("ca.pem")), ClientCertificate: types.StringNull(), ClientKey: types.StringNull(),
	}
	// call configures the provider with cfg and calls the agent.
	call := func(t *testing.T, cfg tributaryProviderModel) error {
		t.Helper()
		c, problems := configureProvider(t, cfg)
		if len(problems) > 0 || c == nil {
			t.Fatalf("configure: %v", problems)
		}
		// The client retries failed calls; one failed handshake is enough.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := c.GetConnection(ctx, "c1")
		return err
	}

	t.Run("attributes", func(t *testing.T) {
		cfg := base
		cfg.ClientCertificate, cfg.ClientKey = types.StringValue(cert("client.pem")), types.StringValue(cert("client-key.pem"))
		if err := call(t, cfg); err != nil {
			t.Errorf("calling the agent with a client certificate: %v", err)
		}
	})
	t.Run("every endpoint", func(t *testing.T) {
		cfg := base
		cfg.ClientCertificate, cfg.ClientKey = types.StringValue(cert("client.pem")), types.StringValue(cert("client-key.pem"))
		cfg.Endpoint = types.StringNull()
		cfg.Endpoints = endpointsList(strings.Replace(refusedURL(t), "http:", "https:", 1), srv.URL)
		if err := call(t, cfg); err != nil {
			t.Errorf("calling the second of two agents with a client certificate: %v", err)
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv(EnvClientCertificate, cert("client.pem"))
		t.Setenv(EnvClientKey, cert("client-key.pem"))
		if err := call(t, base); err != nil {
			t.Errorf("calling the agent with a client certificate from the environment: %v", err)
		}
	})
	t.Run("no client certificate", func(t *testing.T) {
		// The TLS configuration Configure builds, in a client that does
		// not retry, so that the handshake's error is the answer.
		var diags diag.Diagnostics
		cfg := base
		conf := agentTLSConfig(&cfg, &diags)
		if diags.HasError() || conf == nil {
			t.Fatalf("agentTLSConfig: %v", diags)
		}
		h := &http.Client{Transport: &http.Transport{TLSClientConfig: conf}, Timeout: 10 * time.Second}
		resp, err := h.Get(srv.URL + "/v1/connections/c1")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("the agent answered %s without a client certificate", resp.Status)
		}
		if !strings.Contains(err.Error(), "certificate required") {
			t.Errorf("calling the agent without a client certificate: %v, want the agent's TLS alert 'certificate required'", err)
		}
	})

	key := cert("client-key.pem")
	for _, tc := range []struct {
		name, certPEM, keyPEM, want string
	}{
		{"certificate without key", cert("client.pem"), "", "Missing client key: client_certificate is set without client_key"},
		{"key without certificate", "", key, "Missing client certificate: client_key is set without client_certificate"},
		{"key of another certificate", cert("expired.pem"), key, "Invalid client certificate or key: client_certificate and client_key"},
		{"not PEM", "not a certificate", key, "Invalid client certificate or key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.ClientCertificate, cfg.ClientKey = stringOrNull(tc.certPEM), stringOrNull(tc.keyPEM)
			_, problems := configureProvider(t, cfg)
			if len(problems) != 1 || !strings.HasPrefix(problems[0], tc.want) {
				t.Fatalf("problems = %q, want one starting with %q", problems, tc.want)
			}
			if strings.Contains(problems[0], "PRIVATE KEY") {
				t.Errorf("the problem shows the key: %q", problems[0])
			}
		})
	}
}
