package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// withRegistry returns connection name with a schema registry.
func withRegistry(name string) *spec.Connection {
	c := connection(name)
	c.SchemaRegistry = &spec.SchemaRegistry{URL: "https://registry.invalid:8081", APIKey: "key", APISecret: "registry-s3cret"}
	return c
}

// avroRegistryPipeline returns a pipeline whose value is Avro from subject
// orders-value of connection regConn's registry ("" for the pipeline's).
func avroRegistryPipeline(name, conn, regConn, table string) *spec.Pipeline {
	p := pipeline(name, conn, table)
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: "orders-value"}, ConnectionName: regConn}}}
	return p
}

const regPath = "table[0].connector_options.kafka_options.value_transformer.avro_options.schema_registry"

// TestRegistryConnections checks that a pipeline's registry connections
// must exist and have a registry, for PUT and dry runs alike.
func TestRegistryConnections(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t) // "local", without a registry
	tests := []struct {
		name     string
		p        *spec.Pipeline
		wantPath string
	}{
		{"registry connection missing", avroRegistryPipeline("p", "local", "nope", "events"), regPath + ".connection_name"},
		{"registry connection without a registry", avroRegistryPipeline("p", "local", "local", "events"), regPath},
		{"pipeline connection without a registry", avroRegistryPipeline("p", "local", "", "events"), regPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, try := range []func() error{
				func() error { _, err := a.client.PutPipeline(ctx, tt.p); return err },
				func() error { _, err := a.client.DryRunPipeline(ctx, tt.p); return err },
			} {
				ae := apiError(t, try(), http.StatusUnprocessableEntity)
				if !slices.ContainsFunc(ae.Problems, func(e spec.FieldError) bool { return e.Path == tt.wantPath }) {
					t.Fatalf("problems %v do not name path %q", ae.Problems, tt.wantPath)
				}
			}
			if n := a.engine.count(a.engine.applies, "p"); n != 0 {
				t.Fatalf("a refused pipeline was applied %d times", n)
			}
			if _, err := a.client.GetPipeline(ctx, "p"); err == nil {
				t.Fatal("a refused pipeline was stored")
			}
		})
	}

	// With a registry on another connection, the pipeline is accepted, and
	// that connection is in use: it cannot be deleted.
	if _, err := a.client.PutConnection(ctx, withRegistry("regs")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.PutPipeline(ctx, avroRegistryPipeline("p", "local", "regs", "events")); err != nil {
		t.Fatalf("a pipeline using connection regs's registry: %v", err)
	}
	ae := apiError(t, a.client.DeleteConnection(ctx, "regs"), http.StatusConflict)
	if !strings.Contains(ae.Detail, `"p"`) {
		t.Errorf("deleting a connection used as a registry: %q does not name the pipeline", ae.Detail)
	}

	// Changing that connection re-applies the pipeline that uses it only
	// as a registry.
	before := a.engine.count(a.engine.applies, "p")
	changed := withRegistry("regs")
	changed.SchemaRegistry.URL = "https://other.invalid:8081"
	if _, err := a.client.PutConnection(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != before+1 {
		t.Errorf("Apply called %d times after its registry connection changed, want %d", n, before+1)
	}

	// Taking the registry away from it is refused like deleting it.
	ae = apiError(t, func() error { _, err := a.client.PutConnection(ctx, connection("regs")); return err }(), http.StatusConflict)
	if !strings.Contains(ae.Detail, `"p"`) || !strings.Contains(ae.Detail, "schema_registry") {
		t.Errorf("dropping the registry of a connection in use: %q does not name the pipeline and the block", ae.Detail)
	}
	if got, err := a.client.GetConnection(ctx, "regs"); err != nil || got.SchemaRegistry == nil {
		t.Errorf("after the refusal the connection is %+v, %v; want it unchanged", got, err)
	}
}

// TestConnectionSecretNotReturned checks that no answer about a connection
// carries its registry's API secret, and that GET says it is set.
func TestConnectionSecretNotReturned(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	put, err := a.client.PutConnection(ctx, withRegistry("regs"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.client.GetConnection(ctx, "regs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*spec.Connection{put, got} {
		if c.SchemaRegistry == nil || c.SchemaRegistry.APIKey != "key" || c.SchemaRegistry.APISecret != "" {
			t.Errorf("connection answered with registry %+v, want the key and no secret", c.SchemaRegistry)
		}
	}
	for _, path := range []string{"/v1/connections/regs", "/v1/connections"} {
		status, _, body := raw(t, http.MethodGet, a.url+path, testToken, "")
		if status != http.StatusOK || strings.Contains(body, "registry-s3cret") || strings.Contains(body, `"api_secret"`) ||
			!strings.Contains(body, `"secrets_set":["schema_registry.api_secret"]`) {
			t.Errorf("GET %s: %d %s", path, status, body)
		}
	}
	// The secret is kept: the engine gets it.
	if _, err := a.client.PutPipeline(ctx, avroRegistryPipeline("p", "regs", "", "events")); err != nil {
		t.Fatal(err)
	}
	a.engine.mu.Lock()
	sr := a.engine.conns["p"].SchemaRegistry
	a.engine.mu.Unlock()
	if sr == nil || sr.APISecret != "registry-s3cret" {
		t.Errorf("the engine got registry %+v, want the secret", sr)
	}
}
