package provider

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// storedFanout is a fanout schema as the agent stores it, with a schema
// file whose content is in dir.
func storedFanout(t *testing.T, dir string) *spec.FanoutSchema {
	t.Helper()
	ddl := filepath.Join(dir, "events.ddl")
	if err := os.WriteFile(ddl, []byte("id BIGINT, user STRING"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &spec.FanoutSchema{
		Name:               "f1",
		Pipeline:           "p1",
		DestinationCatalog: "main",
		DestinationSchema:  "routed",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			TopicPattern:   "events-.*",
			KeyTransformer: &spec.Transformer{Format: spec.FormatString},
		}},
		FanoutOptions: spec.FanoutOptions{
			TableIDFields:  []string{"db", "table"},
			OnInvalidRoute: spec.OnInvalidRouteDeadLetter,
			Transforms: []spec.FanoutTransform{{
				InputColumn:  "value",
				OutputColumn: "parsed",
				JSONOptions:  &spec.JSONOptions{SchemaFilePath: ddl, SchemaFileContent: "id BIGINT, user STRING"},
			}},
		},
		TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
	}
	f.Normalize()
	return f
}

// fanoutModel converts f into the model Read would set, with no prior.
func fanoutModel(t *testing.T, f *spec.FanoutSchema, st *spec.FanoutStatus, prior *fanoutSchemaResourceModel) fanoutSchemaResourceModel {
	t.Helper()
	m := fanoutSchemaResourceModel{Timeouts: nullTimeouts()}
	var diags diag.Diagnostics
	stored := *f
	m.setFromSpec(context.Background(), &stored, st, prior, &diags)
	if diags.HasError() {
		t.Fatalf("setFromSpec: %v", diags)
	}
	return m
}

// nullTimeouts is a timeouts block that is not set.
func nullTimeouts() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType, "update": types.StringType})}
}

// TestFanoutRoundTrip converts a fanout schema from the agent into the
// model and back: nothing is lost or changed, so a refresh shows no diff,
// and tables comes from the status.
func TestFanoutRoundTrip(t *testing.T) {
	t.Parallel()
	want := storedFanout(t, t.TempDir())
	st := &spec.FanoutStatus{State: spec.StateRunning, Tables: []spec.TableStatus{{DestinationTable: "a_b"}, {DestinationTable: "c_d"}}}
	m := fanoutModel(t, want, st, nil)

	c := newFanoutConverter(context.Background(), true)
	got := c.fanoutSchema(&m)
	if c.diags.HasError() {
		t.Fatalf("convert: %v", c.diags)
	}
	got.Normalize()
	// The model shows defaults the agent may leave unset (JSON parser
	// options): what matters is that the model is a fixed point.
	if back := fanoutModel(t, got, st, &m); !reflect.DeepEqual(back, m) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, m)
	}
	if tr := got.FanoutOptions.Transforms; !reflect.DeepEqual(got.FanoutOptions.TableIDFields, want.FanoutOptions.TableIDFields) ||
		got.FanoutOptions.OnInvalidRoute != spec.OnInvalidRouteDeadLetter || len(tr) != 1 || tr[0].OutputColumn != "parsed" ||
		tr[0].JSONOptions == nil || tr[0].JSONOptions.SchemaFileContent != want.FanoutOptions.Transforms[0].JSONOptions.SchemaFileContent ||
		!reflect.DeepEqual(got.TableConfiguration, want.TableConfiguration) || got.ConnectorOptions.KafkaOptions.TopicPattern != "events-.*" {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	var tables []string
	if d := m.Tables.ElementsAs(context.Background(), &tables, false); d.HasError() {
		t.Fatal(d)
	}
	if !reflect.DeepEqual(tables, []string{"a_b", "c_d"}) {
		t.Errorf("tables = %v, want [a_b c_d]", tables)
	}
	var fo fanoutOptionsModel
	var tr []fanoutTransformModel
	var jo jsonOptionsModel
	if d := m.FanoutOptions.As(context.Background(), &fo, basetypes.ObjectAsOptions{}); d.HasError() {
		t.Fatal(d)
	}
	if d := fo.Transforms.ElementsAs(context.Background(), &tr, false); d.HasError() || len(tr) != 1 {
		t.Fatalf("transforms %v: %v", fo.Transforms, d)
	}
	if d := tr[0].JSONOptions.As(context.Background(), &jo, basetypes.ObjectAsOptions{}); d.HasError() {
		t.Fatal(d)
	}
	if sha := jo.SchemaFileSHA256; sha.ValueString() != schemaSHA256([]byte("id BIGINT, user STRING")) {
		t.Errorf("schema_file_sha256 = %s, want the hash of the content", sha)
	}
}

// TestFanoutKeepsEmptyShapes checks that an empty table_id_fields,
// transforms or table_configuration in the configuration reads back
// empty, not null, so that it shows no diff.
func TestFanoutKeepsEmptyShapes(t *testing.T) {
	t.Parallel()
	f := &spec.FanoutSchema{Name: "f1", FanoutOptions: spec.FanoutOptions{FanoutBy: "topic"}}
	f.Normalize()
	st := &spec.FanoutStatus{}
	ty := fanoutTypes()
	emptyIDs, _ := types.ListValue(types.StringType, nil)
	emptyTransforms, _ := types.ListValue(ty.transform, nil)
	var diags diag.Diagnostics
	prior := fanoutSchemaResourceModel{
		FanoutOptions: objectValue(context.Background(), &diags, ty.fanoutOptions, fanoutOptionsModel{
			FanoutBy: types.StringValue("topic"), TableIDFields: emptyIDs,
			OnInvalidRoute: types.StringValue(spec.OnInvalidRouteFail), Transforms: emptyTransforms,
		}),
		TableConfiguration: tableConfigurationToObject(context.Background(), &spec.TableConfiguration{}, true, &diags),
	}
	if diags.HasError() {
		t.Fatal(diags)
	}
	m := fanoutModel(t, f, st, &prior)
	if !m.FanoutOptions.Equal(prior.FanoutOptions) || !m.TableConfiguration.Equal(prior.TableConfiguration) {
		t.Errorf("read back\n %v %v\nwant\n %v %v", m.FanoutOptions, m.TableConfiguration, prior.FanoutOptions, prior.TableConfiguration)
	}
	none := fanoutModel(t, f, st, nil)
	var fo fanoutOptionsModel
	if d := none.FanoutOptions.As(context.Background(), &fo, basetypes.ObjectAsOptions{}); d.HasError() {
		t.Fatal(d)
	}
	if !fo.TableIDFields.IsNull() || !fo.Transforms.IsNull() || !none.TableConfiguration.IsNull() {
		t.Errorf("without a prior, unset lists and blocks must read null: %v %v", none.FanoutOptions, none.TableConfiguration)
	}
	if l := len(none.Tables.Elements()); none.Tables.IsNull() || l != 0 {
		t.Errorf("tables = %v, want an empty list", none.Tables)
	}
}

// validateFanout runs ValidateConfig on the configuration m.
func validateFanout(t *testing.T, m *fanoutSchemaResourceModel) diag.Diagnostics {
	t.Helper()
	ctx := context.Background()
	s := fanoutSchemaResourceSchema(ctx)
	st := tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	if d := st.Set(ctx, m); d.HasError() {
		t.Fatalf("building the configuration: %v", d)
	}
	var resp resource.ValidateConfigResponse
	(&fanoutSchemaResource{}).ValidateConfig(ctx, resource.ValidateConfigRequest{Config: tfsdk.Config{Schema: s, Raw: st.Raw}}, &resp)
	return resp.Diagnostics
}

// TestFanoutWarnings checks that a set output_column plans with a warning
// on that attribute, and without an error.
func TestFanoutWarnings(t *testing.T) {
	t.Parallel()
	m := fanoutModel(t, storedFanout(t, t.TempDir()), &spec.FanoutStatus{}, nil)
	diags := validateFanout(t, &m)
	if diags.HasError() {
		t.Fatalf("errors: %v", diags.Errors())
	}
	ws := diags.Warnings()
	want := path.Root("fanout_options").AtName("transforms").AtListIndex(0).AtName("output_column")
	if len(ws) != 1 {
		t.Fatalf("warnings %v, want one", ws)
	}
	if wp, ok := ws[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(want) || !strings.Contains(ws[0].Detail(), `output_column "parsed" is ignored`) {
		t.Errorf("warning %v (%s), want one on %s saying output_column is ignored", ws[0], ws[0].Detail(), want)
	}
}

// TestFanoutParseErrorDetail checks the exact detail of a fanout_by that
// does not parse: the parser's message, the source and a caret under the
// position.
func TestFanoutParseErrorDetail(t *testing.T) {
	t.Parallel()
	f := storedFanout(t, t.TempDir())
	f.FanoutOptions.TableIDFields, f.FanoutOptions.FanoutBy = nil, "topic ||"
	m := fanoutModel(t, f, &spec.FanoutStatus{}, nil)
	errs := validateFanout(t, &m).Errors()
	want := "expected an expression after '||', found end of input\n  topic ||\n          ^"
	if len(errs) != 1 || !strings.Contains(errs[0].Detail(), want) {
		t.Fatalf("errors %v, want one saying\n%s", errs, want)
	}
	if wp, ok := errs[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(path.Root("fanout_options").AtName("fanout_by")) {
		t.Errorf("error %v is not on fanout_options.fanout_by", errs[0])
	}
}

// TestFanoutDryRunDiagnostics checks how the plan reports the agent's
// answers to the dry run of a fanout schema.
func TestFanoutDryRunDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		body        string
		wantErrAt   path.Path
		wantWarning string
	}{
		{name: "accepted", status: http.StatusOK, body: `{"name":"f"}`},
		{name: "pipeline created by the same apply", status: http.StatusUnprocessableEntity,
			body: `{"title":"Unprocessable Entity","status":422,"errors":[{"path":"pipeline_name","detail":"pipeline \"p\" does not exist; create it first"}]}`},
		{name: "destination schema owned by another", status: http.StatusConflict,
			body:      `{"title":"Conflict","status":409,"errors":[{"path":"destination_schema","detail":"main.routed is written by pipeline \"p2\""}]}`,
			wantErrAt: path.Root("destination_schema")},
		{name: "agent without fanout schemas", status: http.StatusNotFound, body: `{"title":"Not Found","status":404}`,
			wantWarning: "Fanout schema f not checked by the agent: upgrade the agent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dryRunAgent(t, "/v1/fanout-schemas/f/dry-run", tc.status, tc.body, false)
			r := &fanoutSchemaResource{agentResource{agentAccess{data: &providerData{client: c}}}}
			var diags diag.Diagnostics
			r.dryRun(context.Background(), &spec.FanoutSchema{Name: "f"}, &diags)
			errs, warnings := diags.Errors(), diags.Warnings()
			switch {
			case tc.wantWarning != "":
				if len(errs) != 0 || len(warnings) != 1 || warnings[0].Summary() != tc.wantWarning {
					t.Fatalf("diagnostics %v, want the warning %q", diags, tc.wantWarning)
				}
			case len(tc.wantErrAt.Steps()) == 0:
				if len(diags) != 0 {
					t.Fatalf("diagnostics %v, want none", diags)
				}
			default:
				if len(errs) != 1 {
					t.Fatalf("diagnostics %v, want one error on %s", diags, tc.wantErrAt)
				}
				if wp, ok := errs[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(tc.wantErrAt) {
					t.Fatalf("diagnostics %v, want one error on %s", diags, tc.wantErrAt)
				}
			}
		})
	}
}

// TestFanoutWaitReportsErrors checks that waiting on a fanout schema
// reports its own last error and those of its tables.
func TestFanoutWaitReportsErrors(t *testing.T) {
	t.Parallel()
	failed := spec.FanoutStatus{State: spec.StateFailed, LastError: "record t[0]@5 cannot be routed: fanout_by returned NULL",
		Tables: []spec.TableStatus{{DestinationTable: "click", State: spec.StateFailed, LastError: "disk full"}}}
	get := func(context.Context) (runState, error) { return fanoutRunState(&failed), nil }
	starting := fanoutRunState(&spec.FanoutStatus{State: spec.StateStarting})
	err := waitForRun(context.Background(), `fanout schema "f"`, starting, get, stuckAfter, startedStates)
	want := "the agent reports fanout schema \"f\" FAILED:\n  record t[0]@5 cannot be routed: fanout_by returned NULL" +
		"\n  table click (FAILED): disk full"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}
