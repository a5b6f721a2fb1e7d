package server_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// needCompile skips a test that PUTs a valid fanout schema until
// expr.Compile exists: before, every fanout_by is refused.
func needCompile(t *testing.T) {
	t.Helper()
	if _, err := expr.Compile("'a'"); err != nil {
		t.Skip("expr.Compile not implemented")
	}
}

// fanout returns a fanout schema of pipeline into main.<schema>.
func fanout(name, pipeline, schema string) *spec.FanoutSchema {
	return &spec.FanoutSchema{
		Name: name, Pipeline: pipeline, DestinationCatalog: "main", DestinationSchema: schema,
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"events"}}},
		FanoutOptions: spec.FanoutOptions{
			FanoutBy:   "cast(value AS STRING):event_type::string",
			Transforms: []spec.FanoutTransform{{InputColumn: "value"}},
		},
	}
}

// registryFanout returns a fanout schema of pipeline orders whose key
// schema comes from the registry of connection conn ("" for the
// pipeline's).
func registryFanout(conn string) *spec.FanoutSchema {
	f := fanout("g", "orders", "other")
	f.ConnectorOptions.KafkaOptions.KeyTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		SchemaRegistry: &spec.SchemaRegistryOptions{ConnectionName: conn, ConfluentOptions: spec.ConfluentOptions{Subject: "k"}},
	}}
	return f
}

// problemAt asserts err is an *client.APIError with status and a problem
// at path whose detail contains detail.
func problemAt(t *testing.T, err error, status int, path, detail string) {
	t.Helper()
	ae := apiError(t, err, status)
	for _, p := range ae.Problems {
		if p.Path == path && strings.Contains(p.Detail, detail) {
			return
		}
	}
	t.Fatalf("problems %v, want one at %s containing %q", ae.Problems, path, detail)
}

func TestFanoutSchemaLifecycle(t *testing.T) {
	needCompile(t)
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("orders", "local", "events"))

	resp, err := a.client.PutFanoutSchema(ctx, fanout("f", "orders", "routed"))
	if err != nil {
		t.Fatalf("PutFanoutSchema: %v", err)
	}
	// The answer carries the normalized spec and the engine's status.
	if resp.Spec.FanoutOptions.OnInvalidRoute != spec.OnInvalidRouteFail || resp.Spec.FanoutOptions.Transforms[0].Format != spec.FormatJSON ||
		resp.Spec.ConnectorOptions.KafkaOptions.StartingOffset != spec.StartingOffsetLatest {
		t.Errorf("spec not normalized: %+v", resp.Spec)
	}
	if resp.Status.State != spec.StateRunning || len(resp.Status.Tables) != 1 || resp.Status.Tables[0].DestinationTable != "orders" {
		t.Errorf("status = %+v, want the engine's", resp.Status)
	}
	// An unchanged spec that runs is not applied again.
	if _, err := a.client.PutFanoutSchema(ctx, fanout("f", "orders", "routed")); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.fanoutApplies, "f"); n != 1 {
		t.Errorf("ApplyFanout called %d times, want 1", n)
	}
	got, err := a.client.GetFanoutSchema(ctx, "f")
	if err != nil || got.Spec.Pipeline != "orders" || got.Status.State != spec.StateRunning {
		t.Fatalf("GetFanoutSchema = %+v, %v", got, err)
	}
	status, _, body := raw(t, http.MethodGet, a.url+"/v1/fanout-schemas", testToken, "")
	if status != http.StatusOK || !strings.Contains(body, `"name":"f"`) || !strings.Contains(body, `"state":"RUNNING"`) {
		t.Fatalf("list: %d %s", status, body)
	}

	changed := fanout("f", "orders", "routed")
	changed.FanoutOptions.OnInvalidRoute = spec.OnInvalidRouteDeadLetter
	checks := a.engine.count(a.engine.fanoutChecks, "f") // the create's
	dry, err := a.client.DryRunFanoutSchema(ctx, changed)
	if err != nil || dry.FanoutOptions.OnInvalidRoute != spec.OnInvalidRouteDeadLetter {
		t.Fatalf("DryRunFanoutSchema = %+v, %v", dry, err)
	}
	if got, _ := a.client.GetFanoutSchema(ctx, "f"); got.Spec.FanoutOptions.OnInvalidRoute != spec.OnInvalidRouteFail ||
		a.engine.count(a.engine.fanoutChecks, "f") != checks+1 || a.engine.count(a.engine.fanoutApplies, "f") != 1 {
		t.Fatalf("the dry run changed something: %+v", got.Spec)
	}
	if _, err := a.client.PutFanoutSchema(ctx, changed); err != nil || a.engine.count(a.engine.fanoutApplies, "f") != 2 {
		t.Fatalf("update: %v, %d applies", err, a.engine.count(a.engine.fanoutApplies, "f"))
	}

	// The pipeline goes only after its fanout schemas.
	err = a.client.DeletePipeline(ctx, "orders")
	if ae := apiError(t, err, http.StatusConflict); !strings.Contains(ae.Detail, `fanout schemas "f" belong to pipeline "orders"; delete them first`) {
		t.Fatalf("detail %q", ae.Detail)
	}
	if err := a.client.DeleteFanoutSchema(ctx, "f"); err != nil {
		t.Fatalf("DeleteFanoutSchema: %v", err)
	}
	if n := a.engine.count(a.engine.fanoutRemoves, "f"); n != 1 {
		t.Fatalf("RemoveFanout called %d times, want 1", n)
	}
	if _, err := a.client.GetFanoutSchema(ctx, "f"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetFanoutSchema after delete: err = %v, want ErrNotFound", err)
	}
	status, header, body := raw(t, http.MethodDelete, a.url+"/v1/fanout-schemas/f", testToken, "")
	if status != http.StatusNotFound {
		t.Fatalf("DELETE of a missing fanout schema: %d, want 404", status)
	}
	problem(t, header, body)
	if err := a.client.DeletePipeline(ctx, "orders"); err != nil {
		t.Fatalf("DeletePipeline once its fanout schemas are gone: %v", err)
	}
}

func TestFanoutSchemaRefusals(t *testing.T) {
	needCompile(t)
	a := newAgent(t, "")
	ctx := t.Context()
	carrier := pipeline("carrier", "local", "x")
	carrier.Tables = nil // a pipeline that only carries fanout schemas
	a.mustPut(t, pipeline("orders", "local", "events"), carrier)
	if _, err := a.client.PutFanoutSchema(ctx, fanout("f", "carrier", "routed")); err != nil {
		t.Fatalf("PutFanoutSchema into a pipeline without tables: %v", err)
	}

	tests := []struct {
		name   string
		f      func() *spec.FanoutSchema
		status int
		path   string
		detail string
	}{
		{"fanout_by does not parse", func() *spec.FanoutSchema {
			f := fanout("g", "orders", "other")
			f.FanoutOptions.FanoutBy = "topic ||"
			return f
		}, http.StatusUnprocessableEntity, "fanout_options.fanout_by", "^"},
		{"two transforms", func() *spec.FanoutSchema {
			f := fanout("g", "orders", "other")
			f.FanoutOptions.Transforms = append(f.FanoutOptions.Transforms, spec.FanoutTransform{InputColumn: "key"})
			return f
		}, http.StatusUnprocessableEntity, "fanout_options.transforms", "at most one"},
		{"ending positions in a continuous pipeline", func() *spec.FanoutSchema {
			f := fanout("g", "orders", "other")
			f.ConnectorOptions.KafkaOptions.EndingOffset = spec.EndingOffsetLatest
			return f
		}, http.StatusUnprocessableEntity, "connector_options.kafka_options.ending_offset", `pipeline "orders" is continuous and never ends`},
		{"no pipeline", func() *spec.FanoutSchema { return fanout("g", "nope", "other") },
			http.StatusUnprocessableEntity, "pipeline_name", `pipeline "nope" does not exist; create it first`},
		{"schema of a pipeline's tables", func() *spec.FanoutSchema { return fanout("g", "orders", "raw") },
			http.StatusConflict, "destination_schema", `holds table main.raw.events of pipeline "orders"`},
		{"schema of another fanout schema", func() *spec.FanoutSchema { return fanout("g", "orders", "ROUTED") },
			http.StatusConflict, "destination_schema", `already owned by fanout schema "f"`},
		{"registry the connection lacks", func() *spec.FanoutSchema { return registryFanout("") }, http.StatusUnprocessableEntity,
			"connector_options.kafka_options.key_transformer.avro_options.schema_registry", `connection "local" has no schema_registry`},
		{"registry of another connection", func() *spec.FanoutSchema { return registryFanout("other") }, http.StatusUnprocessableEntity,
			"connector_options.kafka_options.key_transformer.avro_options.schema_registry.connection_name", `its pipeline's connection "local", not "other"`},
		{"move to another pipeline", func() *spec.FanoutSchema { return fanout("f", "orders", "routed") },
			http.StatusUnprocessableEntity, "pipeline_name", `belongs to pipeline "carrier"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f()
			_, err := a.client.PutFanoutSchema(ctx, f)
			problemAt(t, err, tt.status, tt.path, tt.detail)
			// A dry run refuses the same way (but for the move, which
			// only a PUT can see).
			if tt.name != "move to another pipeline" {
				_, err = a.client.DryRunFanoutSchema(ctx, f)
				problemAt(t, err, tt.status, tt.path, tt.detail)
			}
		})
	}
	if _, err := a.client.GetFanoutSchema(ctx, "g"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a refused fanout schema was stored: %v", err)
	}

	t.Run("pipeline table in a fanout schema's schema", func(t *testing.T) {
		p := pipeline("other", "local", "events")
		p.DestinationSchema = "Routed"
		_, err := a.client.PutPipeline(ctx, p)
		problemAt(t, err, http.StatusConflict, "table[0].destination_table", `fanout schema "f" owns`)
	})

	t.Run("name mismatch", func(t *testing.T) {
		status, header, body := raw(t, http.MethodPut, a.url+"/v1/fanout-schemas/other", testToken, `{"name":"f"}`)
		if p := problem(t, header, body); status != http.StatusUnprocessableEntity || len(p.Errors) != 1 || p.Errors[0].Path != "name" {
			t.Fatalf("%d %s, want 422 on name", status, body)
		}
	})

	t.Run("engine refusal keeps the previous spec", func(t *testing.T) {
		a.engine.setFanoutErr(spec.Errors{{Path: "fanout_options.transforms[0].json_options.schema", Detail: "column id: BIGINT cannot become STRING"}})
		defer a.engine.setFanoutErr(nil)
		changed := fanout("f", "carrier", "routed")
		changed.FanoutOptions.OnInvalidRoute = spec.OnInvalidRouteDeadLetter
		_, err := a.client.PutFanoutSchema(ctx, changed)
		problemAt(t, err, http.StatusUnprocessableEntity, "fanout_options.transforms[0].json_options.schema", "cannot become STRING")
		_, err = a.client.DryRunFanoutSchema(ctx, changed)
		problemAt(t, err, http.StatusUnprocessableEntity, "fanout_options.transforms[0].json_options.schema", "cannot become STRING")
		got, err := a.client.GetFanoutSchema(ctx, "f")
		if err != nil || got.Spec.FanoutOptions.OnInvalidRoute != spec.OnInvalidRouteFail {
			t.Fatalf("GetFanoutSchema = %+v, %v; want the previous spec", got, err)
		}
		_, err = a.client.PutFanoutSchema(ctx, fanout("h", "carrier", "fresh"))
		apiError(t, err, http.StatusUnprocessableEntity)
		if _, err := a.client.GetFanoutSchema(ctx, "h"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("a new fanout schema the engine refused stays stored: %v", err)
		}
	})

	t.Run("engine failure keeps the spec, FAILED", func(t *testing.T) {
		a.engine.setFanoutErr(errors.New("disk full"))
		defer a.engine.setFanoutErr(nil)
		_, err := a.client.PutFanoutSchema(ctx, fanout("h", "carrier", "fresh"))
		apiError(t, err, http.StatusInternalServerError)
		got, err := a.client.GetFanoutSchema(ctx, "h")
		if err != nil || got.Status.State != spec.StateFailed || !strings.Contains(got.Status.LastError, "disk full") ||
			got.Status.Tables == nil {
			t.Fatalf("GetFanoutSchema = %+v, %v; want it stored, FAILED with the error", got, err)
		}
	})
}

// TestFanoutSchemaResume: a restarted agent applies fanout schemas after
// the pipelines they belong to (the fake engine refuses one whose pipeline
// does not run), and a pipeline applied again (its PUT, its connection's)
// brings back its fanout schemas.
func TestFanoutSchemaResume(t *testing.T) {
	needCompile(t)
	dir := t.TempDir()
	first := newAgent(t, dir)
	first.mustPut(t, pipeline("orders", "local", "events"))
	if _, err := first.client.PutFanoutSchema(t.Context(), fanout("f", "orders", "routed")); err != nil {
		t.Fatal(err)
	}

	second := newAgent(t, dir)
	if err := second.srv.Resume(t.Context()); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if n := second.engine.count(second.engine.fanoutApplies, "f"); n != 1 {
		t.Fatalf("Resume applied f %d times, want 1", n)
	}
	got, err := second.client.GetFanoutSchema(t.Context(), "f")
	if err != nil || got.Status.State != spec.StateRunning {
		t.Fatalf("GetFanoutSchema after restart = %+v, %v", got, err)
	}

	second.engine.forget("orders")
	if _, err := second.client.PutPipeline(t.Context(), pipeline("orders", "local", "events")); err != nil {
		t.Fatal(err)
	}
	if n := second.engine.count(second.engine.fanoutApplies, "f"); n != 2 {
		t.Fatalf("after the pipeline was applied again, f was applied %d times, want 2", n)
	}
	// So does a pipeline applied again for a changed connection.
	second.engine.forget("orders")
	conn := connection("local")
	conn.BootstrapServers = []string{"127.0.0.1:19093"}
	if _, err := second.client.PutConnection(t.Context(), conn); err != nil {
		t.Fatal(err)
	}
	if n := second.engine.count(second.engine.fanoutApplies, "f"); n != 3 {
		t.Fatalf("after the connection changed, f was applied %d times, want 3", n)
	}
}
