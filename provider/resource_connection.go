package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

var (
	_ resource.ResourceWithConfigure      = (*connectionResource)(nil)
	_ resource.ResourceWithImportState    = (*connectionResource)(nil)
	_ resource.ResourceWithValidateConfig = (*connectionResource)(nil)
)

// connectionResource is tributary_connection.
type connectionResource struct {
	agentResource
}

// NewConnectionResource returns the tributary_connection resource.
func NewConnectionResource() resource.Resource { return &connectionResource{} }

// Metadata implements resource.Resource.
func (r *connectionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_connection"
}

// Schema implements resource.Resource.
func (r *connectionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = connectionResourceSchema()
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it checks
// the write-only secrets and runs spec.Connection.Validate on the known
// values; a problem with a secret set through its write-only variant is
// reported on that variant.
func (r *connectionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateSecretConfig(ctx, connectionSecrets, req.Config, &connectionResourceModel{}, &resp.Diagnostics)
}

// Create implements resource.Resource.
func (r *connectionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.put(creating(ctx), req.Plan.Get, req.Config, &resp.State, &resp.Diagnostics)
}

// Update implements resource.Resource.
func (r *connectionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.put(ctx, req.Plan.Get, req.Config, &resp.State, &resp.Diagnostics)
}

// stateSetter is the part of tfsdk.State that put needs.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// put sends the planned connection, with the write-only secrets of config,
// to the agent and stores its answer.
func (r *connectionResource) put(ctx context.Context, getPlan func(context.Context, any) diag.Diagnostics, config attributeGetter, state stateSetter, diags *diag.Diagnostics) {
	if api := r.client(diags); api != nil {
		putSecretObject(ctx, connectionSecrets, getPlan, config, state, &connectionResourceModel{}, api.PutConnection, diags)
	}
}

// Read implements resource.Resource; a connection deleted on the agent is
// removed from the state.
func (r *connectionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if api := r.client(&resp.Diagnostics); api != nil {
		readSecretObject(ctx, connectionSecrets, req, resp, &connectionResourceModel{}, api.GetConnection)
	}
}

// Delete implements resource.Resource.
func (r *connectionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.deleteNamed(ctx, req, resp, "connection", (*client.Client).DeleteConnection)
}

// ImportState implements resource.ResourceWithImportState: the import ID is
// the connection's name.
func (r *connectionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
