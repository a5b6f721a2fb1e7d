package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// dryRunAgent is a client of a fake agent that answers a dry run, a POST
// to path, with status and body; with unreachable, the agent is down.
func dryRunAgent(t *testing.T, path string, status int, body string, unreachable bool) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path || r.URL.RawQuery != "" {
			t.Errorf("request %s %s, want a dry run", r.Method, r.URL)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	if unreachable {
		srv.Close()
	} else {
		t.Cleanup(srv.Close)
	}
	c, err := client.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDryRunDiagnostics checks how the plan reports each answer of the
// agent to a dry run.
func TestDryRunDiagnostics(t *testing.T) {
	t.Parallel()
	refusedColumn := `{"title":"Unprocessable Entity","status":422,"detail":"the agent refused the pipeline",` +
		`"errors":[{"path":"table[0]","detail":"column id: BIGINT cannot become STRING"}]}`
	tests := []struct {
		name        string
		status      int
		body        string
		unreachable bool
		wantErrAt   path.Path // the attribute of the one error, if any
		wantDetail  string    // part of the error's or the warning's detail
		wantWarning bool
	}{
		{name: "accepted", status: http.StatusOK, body: `{"name":"p"}`},
		{name: "refused column", status: http.StatusUnprocessableEntity, body: refusedColumn,
			wantErrAt: path.Root("table").AtListIndex(0), wantDetail: "column id: BIGINT cannot become STRING"},
		{name: "claimed table", status: http.StatusConflict,
			body:      `{"title":"Conflict","status":409,"errors":[{"path":"table[0].destination_table","detail":"claimed by pipeline \"other\""}]}`,
			wantErrAt: path.Root("table").AtListIndex(0).AtName("destination_table"), wantDetail: `claimed by pipeline "other"`},
		{name: "connection created by the same apply", status: http.StatusUnprocessableEntity,
			body: `{"title":"Unprocessable Entity","status":422,"errors":[{"path":"connection_name","detail":"connection \"c\" does not exist on the agent; create it first"}]}`},
		{name: "registry the same apply may add", status: http.StatusUnprocessableEntity,
			body: `{"title":"Unprocessable Entity","status":422,"errors":[{"path":"table[0].connector_options.kafka_options.value_transformer.avro_options.schema_registry",` +
				`"detail":"connection \"c\" has no schema_registry; add a schema_registry block to it"}]}`,
			wantWarning: true, wantDetail: "Unless this apply adds it"},
		{name: "wrong token", status: http.StatusUnauthorized, body: `{"title":"Unauthorized","status":401,"detail":"the token was rejected"}`,
			wantWarning: true, wantDetail: "the token was rejected"},
		{name: "agent down", unreachable: true, wantWarning: true, wantDetail: "is the agent running"},
		{name: "agent without dry runs", status: http.StatusNotFound,
			body:        `{"title":"Not Found","status":404,"detail":"no route for POST /v1/pipelines/p/dry-run"}`,
			wantWarning: true, wantDetail: "The agent predates dry runs, so it cannot check plans: until it is upgraded"},
		{name: "dry run not allowed", status: http.StatusMethodNotAllowed, body: `{"title":"Method Not Allowed","status":405}`,
			wantWarning: true, wantDetail: "until it is upgraded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dryRunAgent(t, "/v1/pipelines/p/dry-run", tc.status, tc.body, tc.unreachable)
			r := &pipelineResource{agentResource{agentAccess{data: &providerData{client: c}}}}
			var diags diag.Diagnostics
			r.dryRun(context.Background(), &spec.Pipeline{Name: "p"}, &diags)

			errs, warnings := diags.Errors(), diags.Warnings()
			switch {
			case tc.wantWarning:
				if len(errs) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0].Detail(), tc.wantDetail) {
					t.Fatalf("diagnostics %v, want one warning saying %q", diags, tc.wantDetail)
				}
			case tc.wantDetail != "":
				if len(errs) != 1 || len(warnings) != 0 || !strings.Contains(errs[0].Detail(), tc.wantDetail) {
					t.Fatalf("diagnostics %v, want one error saying %q", diags, tc.wantDetail)
				}
				withPath, ok := errs[0].(diag.DiagnosticWithPath)
				if !ok || !withPath.Path().Equal(tc.wantErrAt) {
					t.Fatalf("error %v is not on attribute %s", errs[0], tc.wantErrAt)
				}
			case len(diags) != 0:
				t.Fatalf("diagnostics %v, want none", diags)
			}
		})
	}
}

// TestDryRunNeedsConfiguredProvider checks that a provider whose endpoint
// is not known yet plans without asking anything.
func TestDryRunNeedsConfiguredProvider(t *testing.T) {
	t.Parallel()
	var diags diag.Diagnostics
	(&pipelineResource{}).dryRun(context.Background(), &spec.Pipeline{Name: "p"}, &diags)
	if len(diags) != 0 {
		t.Fatalf("diagnostics %v, want none", diags)
	}
}
