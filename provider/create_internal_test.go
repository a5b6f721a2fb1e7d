package provider

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The plan of a create of an object the agent has already warns on name,
// saying how to import it: the dry run of a create answers 412. It is no
// error, as the plan of a replacement is a create too (see
// TestAccReplaceTainted); the apply's create fails.
func TestDryRunOfExistingCreate(t *testing.T) {
	t.Parallel()
	body := `{"title":"Precondition Failed","status":412,"detail":"pipeline \"p.1\" already exists"}`
	c := dryRunAgent(t, "/v1/pipelines/p.1/dry-run", http.StatusPreconditionFailed, body, false)
	r := &pipelineResource{agentResource{agentAccess{data: &providerData{client: c}}}}
	var diags diag.Diagnostics
	r.dryRun(client.CreateOnly(context.Background()), &spec.Pipeline{Name: "p.1"}, &diags)
	errs := diags.Warnings()
	if len(errs) != 1 || len(diags) != 1 {
		t.Fatalf("diagnostics %v, want one warning", diags)
	}
	want := "pipeline \"p.1\" already exists on the agent; import it with `terraform import tributary_pipeline.<name> p.1` or pick another name"
	if withPath, ok := errs[0].(diag.DiagnosticWithPath); !ok || !withPath.Path().Equal(path.Root("name")) || !strings.HasPrefix(errs[0].Detail(), want) {
		t.Fatalf("error %v, want on name: %s", errs[0], want)
	}
	if !strings.HasPrefix(errs[0].Summary(), "Pipeline already exists") {
		t.Fatalf("summary %q", errs[0].Summary())
	}
}
