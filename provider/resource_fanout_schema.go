package provider

import (
	"context"

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

// fanoutKind is how the steps shared with the other resources the agent
// runs read a fanout schema.
var fanoutKind = runKind[fanoutSchemaResourceModel, *spec.FanoutSchema]{
	newConverter: newFanoutConverter,
	convert:      (*specConverter).fanoutSchema,
	files:        eachFanoutSchemaFile,
	timeouts:     func(m *fanoutSchemaResourceModel) timeouts.Value { return m.Timeouts },
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it reads
// the schema files and runs spec.FanoutSchema.Validate (which parses
// fanout_by) and Warnings, dropping the problems that depend on values not
// known yet. It needs no agent.
func (r *fanoutSchemaResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	_, c, f, ok := fanoutKind.read(ctx, req.Config.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	addFieldErrors(&resp.Diagnostics, fanoutWhat, f.Validate(), c.skip)
	addFieldWarnings(&resp.Diagnostics, fanoutWhat, f.Warnings(), c.skip)
}

// ModifyPlan implements resource.ResourceWithModifyPlan. As for pipelines,
// it plans the hash of every schema file from the file's current content
// and asks the agent for a dry run of a fanout schema that will be created
// or updated (see runKind.modifyPlan).
func (r *fanoutSchemaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	fanoutKind.modifyPlan(ctx, req, resp, r.dryRun)
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
	a, ok := fanoutKind.startApply(ctx, planned, timeout, &r.agentResource, diags)
	if !ok {
		return
	}
	f := a.spec
	w := &statusWatch[spec.FanoutSchemaResponse]{what: fanoutWhat, name: f.Name, get: a.api.GetFanoutSchema,
		state: func(got *spec.FanoutSchemaResponse) runState { return fanoutRunState(&got.Status) }}
	applyRun(ctx, agentRun{
		what: fanoutWhat, title: "Fanout schema", name: f.Name,
		files:  fanoutKind.schemaFiles(f),
		put:    func(ctx context.Context) (err error) { w.last, err = a.api.PutFanoutSchema(ctx, f); return err },
		wait:   w.wait,
		stored: w.stored,
		accepted: func() {
			a.plan.ID = types.StringValue(f.Name)
			a.plan.Tables = fanoutTables(ctx, &w.last.Status, diags)
		},
	}, planned, a.limit, a.plan, state, diags)
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
	readRun(ctx, &r.agentResource, req, resp, fanoutWhat, (*client.Client).GetFanoutSchema,
		func(m, prior *fanoutSchemaResourceModel, got *spec.FanoutSchemaResponse, diags *diag.Diagnostics) {
			m.setFromSpec(ctx, &got.Spec, &got.Status, prior, diags)
		})
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
