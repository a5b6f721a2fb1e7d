package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// agentDataSource is embedded by every data source, all of which read a
// pipeline's status from the agent.
type agentDataSource struct {
	agentAccess
}

// Configure implements datasource.DataSourceWithConfigure.
func (d *agentDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.configure(req.ProviderData, &resp.Diagnostics)
}

// readStatus is how a data source's Read begins: it reads config into m
// and then, from the agent, the status of the pipeline that the attribute
// nameAttr of config names. A pipeline the agent does not have is an error
// on nameAttr. On any error it adds it to diags and returns nil.
func (d *agentDataSource) readStatus(ctx context.Context, config tfsdk.Config, m any, nameAttr string, diags *diag.Diagnostics) *spec.PipelineStatus {
	api := d.client(diags)
	if api == nil {
		return nil
	}
	diags.Append(config.Get(ctx, m)...)
	var name types.String
	diags.Append(config.GetAttribute(ctx, path.Root(nameAttr), &name)...)
	if diags.HasError() {
		return nil
	}
	got, err := api.GetPipeline(ctx, name.ValueString())
	if errors.Is(err, client.ErrNotFound) {
		diags.AddAttributeError(path.Root(nameAttr), "Pipeline not found",
			fmt.Sprintf("The agent has no pipeline %q.", name.ValueString()))
		return nil
	}
	if err != nil {
		addAgentError(diags, "pipeline", "Cannot read pipeline "+name.ValueString(), err)
		return nil
	}
	return &got.Status
}
