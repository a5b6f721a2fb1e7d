package provider

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// validateProvider runs the provider's ValidateConfig on cfg and returns
// each error as "path: summary: detail".
func validateProvider(t *testing.T, cfg tributaryProviderModel) []string {
	t.Helper()
	var resp provider.ValidateConfigResponse
	(&tributaryProvider{}).ValidateConfig(context.Background(), provider.ValidateConfigRequest{Config: providerConfig(t, cfg)}, &resp)
	var out []string
	for _, d := range resp.Diagnostics.Errors() {
		p := ""
		if dp, ok := d.(diag.DiagnosticWithPath); ok {
			p = dp.Path().String()
		}
		out = append(out, p+": "+d.Summary()+": "+d.Detail())
	}
	return out
}

// endpointsList is the endpoints attribute holding values (unknown ones
// for "?").
func endpointsList(values ...string) types.List {
	elems := make([]attr.Value, len(values))
	for i, v := range values {
		if v == "?" {
			elems[i] = types.StringUnknown()
		} else {
			elems[i] = types.StringValue(v)
		}
	}
	return types.ListValueMust(types.StringType, elems)
}

// refusedURL is the URL of a port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

// TestProviderEndpoints: endpoints (or TRIBUTARY_ENDPOINTS) makes a client
// that passes over an agent that is down, with the token for every agent;
// endpoint and TRIBUTARY_ENDPOINT still name one agent.
func TestProviderEndpoints(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"c1","bootstrap_servers":["b:9092"]}`))
	}))
	defer srv.Close()
	gone := refusedURL(t)
	base := tributaryProviderModel{Endpoint: types.StringNull(), Token: types.StringValue("tok"), CACertificate: types.StringNull(),
		ClientCertificate: types.StringNull(), ClientKey: types.StringNull()}

	call := func(t *testing.T, cfg tributaryProviderModel) {
		t.Helper()
		if problems := validateProvider(t, cfg); len(problems) > 0 {
			t.Fatalf("validate: %v", problems)
		}
		c, problems := configureProvider(t, cfg)
		if len(problems) > 0 || c == nil {
			t.Fatalf("configure: %v", problems)
		}
		calls.Store(0)
		if _, err := c.GetConnection(context.Background(), "c1"); err != nil || calls.Load() != 1 {
			t.Fatalf("GetConnection: %v after %d requests on the agent that is up", err, calls.Load())
		}
	}
	t.Run("attribute", func(t *testing.T) {
		t.Setenv(EnvEndpoint, gone) // the attribute wins
		cfg := base
		cfg.Endpoints = endpointsList(gone, srv.URL)
		call(t, cfg)
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv(EnvEndpoints, " "+gone+" , "+srv.URL+",")
		call(t, base)
	})
	t.Run("one endpoint", func(t *testing.T) {
		t.Setenv(EnvEndpoint, srv.URL)
		call(t, base)
		cfg := base
		cfg.Endpoint = types.StringValue(srv.URL)
		call(t, cfg)
	})
	t.Run("unknown", func(t *testing.T) {
		cfg := base
		cfg.Endpoints = endpointsList(srv.URL, "?")
		if problems := validateProvider(t, cfg); len(problems) > 0 {
			t.Fatalf("validate with an unknown endpoint: %v", problems)
		}
		if c, problems := configureProvider(t, cfg); c != nil || len(problems) > 0 {
			t.Fatalf("configure with an unknown endpoint: client %v, %v; want none yet, no error", c, problems)
		}
	})
}

// The endpoint attributes are checked at validation, each problem on its
// attribute or on the element of endpoints at fault, every one reported;
// the environment variables are checked when the provider is configured.
func TestProviderEndpointsInvalid(t *testing.T) {
	base := tributaryProviderModel{Endpoint: types.StringNull(), Token: types.StringNull(), CACertificate: types.StringNull(),
		ClientCertificate: types.StringNull(), ClientKey: types.StringNull()}
	for _, tc := range []struct {
		name     string
		endpoint types.String
		list     types.List
		want     []string
	}{
		{"empty list", types.StringNull(), endpointsList(), []string{"endpoints: Invalid provider attribute endpoints: no agent endpoint given"}},
		{"bad elements", types.StringNull(), endpointsList("http://a:1", "a:1", "http://b?x", "http://a:1/"), []string{
			`endpoints[1]: Invalid provider attribute endpoints[1]: agent endpoint "a:1" is not an http:// or https:// URL`,
			`endpoints[2]: Invalid provider attribute endpoints[2]: agent endpoint "http://b?x" has a query`,
			`endpoints[3]: Invalid provider attribute endpoints[3]: agent endpoint "http://a:1/" is listed twice (also at index 0)`,
		}},
		{"both", types.StringValue("ftp://x"), endpointsList("http://a:1", "b"), []string{
			"endpoints: Invalid provider attribute endpoints: endpoint and endpoints are both set",
			`endpoint: Invalid provider attribute endpoint: agent endpoint "ftp://x" is not an http:// or https:// URL`,
			`endpoints[1]: Invalid provider attribute endpoints[1]: agent endpoint "b" is not`,
		}},
		{"bad endpoint", types.StringValue("127.0.0.1:8470"), types.ListNull(types.StringType), []string{
			`endpoint: Invalid provider attribute endpoint: agent endpoint "127.0.0.1:8470" is not an http:// or https:// URL`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.Endpoint, cfg.Endpoints = tc.endpoint, tc.list
			got := validateProvider(t, cfg)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want %q...", i, got[i], w)
				}
			}
		})
	}

	t.Run("environment", func(t *testing.T) {
		t.Setenv(EnvEndpoints, "http://a:1,ftp://b")
		_, problems := configureProvider(t, base)
		if len(problems) != 1 || !strings.Contains(problems[0], `"ftp://b" is not an http:// or https:// URL`) ||
			!strings.Contains(problems[0], "from the environment variable "+EnvEndpoints) {
			t.Fatalf("problems %q, want the bad endpoint of %s", problems, EnvEndpoints)
		}
		t.Setenv(EnvEndpoint, "http://a:1")
		_, problems = configureProvider(t, base)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, "Conflicting endpoint environment variables") }) {
			t.Fatalf("problems %q, want both variables refused", problems)
		}
		t.Setenv(EnvEndpoints, " , ")
		t.Setenv(EnvEndpoint, "")
		if _, problems = configureProvider(t, base); len(problems) != 1 || !strings.Contains(problems[0], "no agent endpoint given") {
			t.Fatalf("problems %q, want an empty %s refused", problems, EnvEndpoints)
		}
	})
}
