package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

var (
	_ resource.ResourceWithConfigure      = (*fanoutSchemaResource)(nil)
	_ resource.ResourceWithImportState    = (*fanoutSchemaResource)(nil)
	_ resource.ResourceWithValidateConfig = (*fanoutSchemaResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*fanoutSchemaResource)(nil)
)

// fanoutWhat names a fanout schema in diagnostics.
const fanoutWhat = "fanout schema"

// fanoutSchemaResource is tributary_fanout_schema.
type fanoutSchemaResource struct {
	agentResource
}

// NewFanoutSchemaResource returns the tributary_fanout_schema resource.
func NewFanoutSchemaResource() resource.Resource { return &fanoutSchemaResource{} }

// Metadata implements resource.Resource.
func (r *fanoutSchemaResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fanout_schema"
}

// Schema implements resource.Resource.
func (r *fanoutSchemaResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = fanoutSchemaResourceSchema(ctx)
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it reads
// the schema files and runs spec.FanoutSchema.Validate (which parses
// fanout_by) and Warnings, dropping the problems that depend on values not
// known yet. It needs no agent.
func (r *fanoutSchemaResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m fanoutSchemaResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := newFanoutConverter(ctx, true)
	f := c.fanoutSchema(&m)
	resp.Diagnostics.Append(c.diags...)
	addFieldErrors(&resp.Diagnostics, fanoutWhat, f.Validate(), c.skip)
	addFieldWarnings(&resp.Diagnostics, fanoutWhat, f.Warnings(), c.skip)
}

// ModifyPlan implements resource.ResourceWithModifyPlan. As for pipelines,
// it plans the hash of every schema file from the file's current content
// and asks the agent for a dry run of a fanout schema that will be created
// or updated.
func (r *fanoutSchemaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan fanoutSchemaResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := newFanoutConverter(ctx, true)
	f := c.fanoutSchema(&plan)
	resp.Diagnostics.Append(c.diags...)
	planFileHashes(ctx, c, func(fn func(*schemaFile)) { eachFanoutSchemaFile(f, fn) }, &resp.Plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || len(c.unknown) > 0 || resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if req.State.Raw.IsNull() {
		ctx = creating(ctx) // an object the agent has already is a warning (see addExistsWarning)
	}
	r.dryRun(ctx, f, &resp.Diagnostics)
}

// dryRun asks the agent whether it would accept fanout schema f, whose
// values are all known, as pipelineResource.dryRun does for pipelines. A
// pipeline the agent does not have is not an error here: the same apply
// may create it.
func (r *fanoutSchemaResource) dryRun(ctx context.Context, f *spec.FanoutSchema, diags *diag.Diagnostics) {
	run := func(ctx context.Context, api *client.Client) error {
		_, err := api.DryRunFanoutSchema(ctx, f)
		return err
	}
	r.askDryRun(ctx, dryRunKind{
		what: fanoutWhat, title: "Fanout schema",
		unchecked: "a change the agent refuses (a destination schema another pipeline or fanout schema " +
			"writes to, a column type changed in a schema file) shows only at apply",
		createdFirst: "pipeline_name",
	}, f.Name, run, diags)
}

// Create implements resource.Resource.
func (r *fanoutSchemaResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(creating(ctx), req.Plan, timeouts.Value.Create, &resp.State, &resp.Diagnostics)
}

// Update implements resource.Resource.
func (r *fanoutSchemaResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, timeouts.Value.Update, &resp.State, &resp.Diagnostics)
}

// apply puts the planned fanout schema and waits for it (see applyRun) up
// to the timeout that timeout reads from the plan. The state gets the
// tables of the last status read.
func (r *fanoutSchemaResource) apply(ctx context.Context, planned tfsdk.Plan, timeout timeoutOf, state *tfsdk.State, diags *diag.Diagnostics) {
	var plan fanoutSchemaResourceModel
	diags.Append(planned.Get(ctx, &plan)...)
	if diags.HasError() {
		return
	}
	limit, d := timeout(plan.Timeouts, ctx, defaultPipelineTimeout)
	diags.Append(d...)
	api := r.client(diags)
	if diags.HasError() {
		return
	}
	c := newFanoutConverter(ctx, true)
	f := c.fanoutSchema(&plan)
	diags.Append(c.diags...)
	var last *spec.FanoutSchemaResponse
	get := func(ctx context.Context) (runState, error) {
		next, err := api.GetFanoutSchema(ctx, f.Name)
		if err != nil {
			return runState{}, err
		}
		last = next
		return fanoutRunState(&next.Status), nil
	}
	applyRun(ctx, agentRun{
		what: fanoutWhat, title: "Fanout schema", name: f.Name,
		files: func(fn func(*schemaFile)) { eachFanoutSchemaFile(f, fn) },
		put:   func(ctx context.Context) (err error) { last, err = api.PutFanoutSchema(ctx, f); return err },
		wait: func(ctx context.Context) error {
			return waitForRun(ctx, fmt.Sprintf("fanout schema %q", f.Name), fanoutRunState(&last.Status), get, stuckAfter, startedStates)
		},
		stored: func(ctx context.Context) bool {
			_, err := get(ctx)
			return err == nil
		},
		accepted: func() {
			plan.ID = types.StringValue(f.Name)
			plan.Tables = fanoutTables(ctx, &last.Status, diags)
		},
	}, planned, limit, &plan, state, diags)
}

// fanoutRunState is what waitForRun reads of a fanout schema's status: its
// state, its last error and those of its tables.
func fanoutRunState(st *spec.FanoutStatus) runState {
	errs := tableErrors(st.Tables)
	if st.LastError != "" {
		errs = "\n  " + st.LastError + errs
	}
	return runState{st.State, errs}
}

// Read implements resource.Resource: it sets the state from the fanout
// schema the agent stores, so that changes made outside Terraform show in
// the plan, and tables from its status. A fanout schema deleted on the
// agent is removed from the state.
func (r *fanoutSchemaResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	api := r.client(&resp.Diagnostics)
	if api == nil {
		return
	}
	var prior fanoutSchemaResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	got, ok := readNamed(ctx, resp, fanoutWhat, prior.Name.ValueString(), api.GetFanoutSchema)
	if !ok {
		return
	}
	m := prior
	m.setFromSpec(ctx, &got.Spec, &got.Status, &prior, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete implements resource.Resource. The fanout schema stops after a
// final flush and commit; its tables, logs and offsets stay.
func (r *fanoutSchemaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.deleteNamed(ctx, req, resp, fanoutWhat, (*client.Client).DeleteFanoutSchema)
}

// ImportState implements resource.ResourceWithImportState: the import ID is
// the fanout schema's name.
func (r *fanoutSchemaResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
