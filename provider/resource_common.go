package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// agentResource is embedded by every resource: it receives the provider's
// data in Configure and hands out the agent client.
type agentResource struct {
	data *providerData
}

// Configure implements resource.ResourceWithConfigure.
func (r *agentResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return // ValidateResourceConfig runs before the provider is configured
	}
	data, ok := req.ProviderData.(*providerData)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data",
			fmt.Sprintf("expected *providerData, got %T; this is a bug in the provider", req.ProviderData))
		return
	}
	r.data = data
}

// client returns the agent client, or adds an error and returns nil when the
// provider configuration was not known when the provider was configured.
func (r *agentResource) client(diags *diag.Diagnostics) *client.Client {
	if r.data == nil || r.data.client == nil {
		diags.AddError("Provider not configured",
			"The tributary provider's endpoint or token was unknown when it was configured, so it cannot "+
				"reach the agent yet. Apply the resources they depend on first (terraform apply -target=...).")
		return nil
	}
	return r.data.client
}

// idAttribute is every resource's computed id, the same as its name.
func idAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Same as `name`.",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// nameAttribute is the name of a kind of object on the agent (spec.ValidName);
// changing it replaces the object. onReplace adds to the description.
func nameAttribute(kind, onReplace string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Name of the " + kind + " on the agent: 1 to 128 letters, digits, `_`, `.` or `-`, " +
			"starting with a letter or digit. Changing it replaces the " + kind + onReplace + ".",
		Required:      true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
}
