package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// agentAccess is embedded by every resource and data source: it holds the
// provider's data, received in Configure, and hands out the agent client.
type agentAccess struct {
	data *providerData
}

// configure keeps pd, the ProviderData of a Configure request.
func (a *agentAccess) configure(pd any, diags *diag.Diagnostics) {
	if pd == nil {
		return // validation runs before the provider is configured
	}
	data, ok := pd.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("expected *providerData, got %T; this is a bug in the provider", pd))
		return
	}
	a.data = data
}

// configured returns the agent client, or nil when the provider is not
// configured yet or its configuration was not known.
func (a *agentAccess) configured() *client.Client {
	if a.data == nil {
		return nil
	}
	return a.data.client
}

// client returns the agent client, or adds an error and returns nil when the
// provider configuration was not known when the provider was configured.
func (a *agentAccess) client(diags *diag.Diagnostics) *client.Client {
	c := a.configured()
	if c == nil {
		diags.AddError("Provider not configured",
			"The tributary provider's endpoint, endpoints or token was unknown when it was configured, so it cannot "+
				"reach the agent yet. Apply the resources they depend on first (terraform apply -target=...).")
	}
	return c
}

// agentResource is embedded by every resource.
type agentResource struct {
	agentAccess
}

// Configure implements resource.ResourceWithConfigure.
func (r *agentResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.configure(req.ProviderData, &resp.Diagnostics)
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

// creating returns ctx for a resource's Create: the agent client's Put
// methods under it create only (client.CreateOnly), so that a create never
// takes over an object of the same name that the agent has already (made
// by hand, or by another Terraform configuration). addAgentError reports
// the agent's refusal on the name attribute (see addExistsError).
func creating(ctx context.Context) context.Context { return client.CreateOnly(ctx) }

// addExistsError reports whether err is the agent's refusal of a create of
// an object of kind what ("fanout schema") whose name it has already
// (client.ErrExists), and if so adds an error on the name attribute that
// says how to import it.
func addExistsError(diags *diag.Diagnostics, what string, err error) bool {
	summary, detail, ok := existsMessage(what, err)
	if ok {
		diags.AddAttributeError(path.Root("name"), summary, detail)
	}
	return ok
}

// addExistsWarning is addExistsError for the dry run of a plan that creates
// the object: a warning, as the plan may replace the object the agent has
// (a tainted one, or one whose change forces a replacement), which
// Terraform plans as a create, and the apply deletes it first. A create of
// an object that is not Terraform's still fails, at apply.
func addExistsWarning(diags *diag.Diagnostics, what string, err error) bool {
	summary, detail, ok := existsMessage(what, err)
	if ok {
		diags.AddAttributeWarning(path.Root("name"), summary, detail+
			". Unless this plan replaces it (a tainted object, or a change that forces a replacement), the apply will fail")
	}
	return ok
}

// existsMessage returns the summary and detail of the diagnostic of
// addExistsError, and whether err is a client.ErrExists.
func existsMessage(what string, err error) (summary, detail string, ok bool) {
	var apiErr *client.APIError
	if !errors.Is(err, client.ErrExists) || !errors.As(err, &apiErr) {
		return "", "", false
	}
	// The name is the last segment of the object's URL, that of its dry
	// run less "/dry-run".
	u := strings.TrimSuffix(apiErr.URL, "/dry-run")
	name := u[strings.LastIndex(u, "/")+1:]
	if unescaped, err := url.PathUnescape(name); err == nil {
		name = unescaped
	}
	return strings.ToUpper(what[:1]) + what[1:] + " already exists",
		fmt.Sprintf("%s %q already exists on the agent; import it with `terraform import tributary_%s.<name> %s` or pick another name",
			what, name, strings.ReplaceAll(what, " ", "_"), name), true
}

// readNamed gets the object of kind what (as "pipeline") that the agent
// stores under name, for the Read of its resource. It reports false when
// Read should stop: the agent no longer has the object, which removes the
// resource from the state, or could not be read, which adds an error.
func readNamed[T any](ctx context.Context, resp *resource.ReadResponse, what, name string, get func(context.Context, string) (T, error)) (T, bool) {
	got, err := get(ctx, name)
	if errors.Is(err, client.ErrNotFound) {
		resp.State.RemoveResource(ctx)
		return got, false
	}
	if err != nil {
		addAgentError(&resp.Diagnostics, what, "Cannot read "+what+" "+name, err)
		return got, false
	}
	return got, true
}

// deleteNamed is the Delete of a resource whose object, of kind what, the
// agent stores under the resource's name attribute; del is the client's
// delete of that kind.
func (r *agentResource) deleteNamed(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse, what string, del func(*client.Client, context.Context, string) error) {
	api := r.client(&resp.Diagnostics)
	if api == nil {
		return
	}
	var name types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := del(api, ctx, name.ValueString()); err != nil {
		addAgentError(&resp.Diagnostics, what, "Cannot delete "+what+" "+name.ValueString(), err)
	}
}
