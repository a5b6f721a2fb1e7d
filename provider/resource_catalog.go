package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

var (
	_ resource.ResourceWithConfigure      = (*catalogResource)(nil)
	_ resource.ResourceWithImportState    = (*catalogResource)(nil)
	_ resource.ResourceWithValidateConfig = (*catalogResource)(nil)
)

// catalogResource is tributary_catalog.
type catalogResource struct {
	agentResource
}

// NewCatalogResource returns the tributary_catalog resource.
func NewCatalogResource() resource.Resource { return &catalogResource{} }

// Metadata implements resource.Resource.
func (r *catalogResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_catalog"
}

// Schema implements resource.Resource.
func (r *catalogResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = catalogResourceSchema()
}

// ValidateConfig implements resource.ResourceWithValidateConfig: the token's
// rules and spec.Catalog.Validate on the known values.
func (r *catalogResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateSecretConfig(ctx, catalogSecrets, req.Config, &catalogResourceModel{}, &resp.Diagnostics)
	// The agent stores an empty warehouse as none, which Terraform would
	// read back as null: an inconsistent result after apply.
	var warehouse types.String
	getAttr(ctx, req.Config, "iceberg_rest.warehouse", &warehouse, &resp.Diagnostics)
	if !warehouse.IsNull() && !warehouse.IsUnknown() && warehouse.ValueString() == "" {
		addFieldError(&resp.Diagnostics, "catalog", spec.FieldError{Path: "iceberg_rest.warehouse",
			Detail: "the warehouse is empty; give the warehouse's name, or leave warehouse out"})
	}
}

// Create implements resource.Resource; it creates only (see creating).
func (r *catalogResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if api := r.client(&resp.Diagnostics); api != nil {
		putSecretObject(creating(ctx), catalogSecrets, req.Plan.Get, req.Config, &resp.State, &catalogResourceModel{}, api.PutCatalog, &resp.Diagnostics)
	}
}

// Update implements resource.Resource.
func (r *catalogResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if api := r.client(&resp.Diagnostics); api != nil {
		putSecretObject(ctx, catalogSecrets, req.Plan.Get, req.Config, &resp.State, &catalogResourceModel{}, api.PutCatalog, &resp.Diagnostics)
	}
}

// Read implements resource.Resource; a catalog deleted on the agent is
// removed from the state.
func (r *catalogResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if api := r.client(&resp.Diagnostics); api != nil {
		readSecretObject(ctx, catalogSecrets, req, resp, &catalogResourceModel{}, api.GetCatalog)
	}
}

// Delete implements resource.Resource: the catalog's tables are no longer
// registered, and with on_delete = "DROP_REGISTRATION" their registrations
// are dropped (never their files).
func (r *catalogResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.deleteNamed(ctx, req, resp, "catalog", (*client.Client).DeleteCatalog)
}

// ImportState implements resource.ResourceWithImportState: the import ID is
// the catalog's name. The token is not imported (the agent never returns
// it): set it in the configuration and apply.
func (r *catalogResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
