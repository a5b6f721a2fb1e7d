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
	_ resource.ResourceWithConfigure      = (*kafkaSinkResource)(nil)
	_ resource.ResourceWithImportState    = (*kafkaSinkResource)(nil)
	_ resource.ResourceWithValidateConfig = (*kafkaSinkResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*kafkaSinkResource)(nil)
)

// sinkWhat names a Kafka sink in diagnostics.
const sinkWhat = "Kafka sink"

// kafkaSinkResource is tributary_kafka_sink.
type kafkaSinkResource struct {
	agentResource
}

// NewKafkaSinkResource returns the tributary_kafka_sink resource.
func NewKafkaSinkResource() resource.Resource { return &kafkaSinkResource{} }

// Metadata implements resource.Resource.
func (r *kafkaSinkResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_kafka_sink"
}

// Schema implements resource.Resource.
func (r *kafkaSinkResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = kafkaSinkResourceSchema(ctx)
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it runs
// spec.KafkaSink.Validate, dropping the problems that depend on values not
// known yet. It needs no agent.
func (r *kafkaSinkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m kafkaSinkResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := newSinkConverter(ctx, true)
	k := c.kafkaSink(&m)
	resp.Diagnostics.Append(c.diags...)
	addFieldErrors(&resp.Diagnostics, sinkWhat, k.Validate(), c.skip)
}

// ModifyPlan implements resource.ResourceWithModifyPlan: it plans the
// hash of every schema file of the source's transformers from the file's
// current content, and asks the agent for a dry run of a sink that will
// be created or updated, as for pipelines.
func (r *kafkaSinkResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan kafkaSinkResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := newSinkConverter(ctx, true)
	k := c.kafkaSink(&plan)
	resp.Diagnostics.Append(c.diags...)
	planFileHashes(ctx, c, func(fn func(*schemaFile)) { eachSinkSchemaFile(k, fn) }, &resp.Plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || len(c.unknown) > 0 || resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if req.State.Raw.IsNull() {
		ctx = creating(ctx) // a sink the agent has already is a warning (see addExistsWarning)
	}
	run := func(ctx context.Context, api *client.Client) error {
		_, err := api.DryRunKafkaSink(ctx, k)
		return err
	}
	r.askDryRun(ctx, dryRunKind{
		what: sinkWhat, title: sinkWhat,
		unchecked:    "a sink the agent cannot run (a source_table no pipeline writes, a schema registry its connection lacks) shows only at apply",
		createdFirst: "connection_name",
		writtenFirst: "source_table",
	}, k.Name, run, &resp.Diagnostics)
}

// Create implements resource.Resource.
func (r *kafkaSinkResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(creating(ctx), req.Plan, timeouts.Value.Create, &resp.State, &resp.Diagnostics)
}

// Update implements resource.Resource.
func (r *kafkaSinkResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, timeouts.Value.Update, &resp.State, &resp.Diagnostics)
}

// apply puts the planned sink and waits until the agent reports it
// RUNNING (see applyRun), up to the timeout that timeout reads from the
// plan.
func (r *kafkaSinkResource) apply(ctx context.Context, planned tfsdk.Plan, timeout timeoutOf, state *tfsdk.State, diags *diag.Diagnostics) {
	var plan kafkaSinkResourceModel
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
	c := newSinkConverter(ctx, true)
	k := c.kafkaSink(&plan)
	diags.Append(c.diags...)
	var last *spec.KafkaSinkResponse
	get := func(ctx context.Context) (runState, error) {
		next, err := api.GetKafkaSink(ctx, k.Name)
		if err != nil {
			return runState{}, err
		}
		last = next
		return sinkRunState(&next.Status), nil
	}
	applyRun(ctx, agentRun{
		what: sinkWhat, title: sinkWhat, name: k.Name,
		files: func(fn func(*schemaFile)) { eachSinkSchemaFile(k, fn) },
		put:   func(ctx context.Context) (err error) { last, err = api.PutKafkaSink(ctx, k); return err },
		wait: func(ctx context.Context) error {
			return waitForRun(ctx, fmt.Sprintf("Kafka sink %q", k.Name), sinkRunState(&last.Status), get, stuckAfter, startedStates)
		},
		stored: func(ctx context.Context) bool {
			_, err := get(ctx)
			return err == nil
		},
		accepted: func() { plan.ID = types.StringValue(k.Name) },
	}, planned, limit, &plan, state, diags)
}

// sinkRunState is what waitForRun reads of a sink's status.
func sinkRunState(st *spec.KafkaSinkStatus) runState {
	errs := ""
	if st.LastError != "" {
		errs = "\n  " + st.LastError
	}
	return runState{st.State, errs}
}

// Read implements resource.Resource: it sets the state from the sink the
// agent stores, so that changes made outside Terraform show in the plan.
// A sink deleted on the agent is removed from the state.
func (r *kafkaSinkResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	api := r.client(&resp.Diagnostics)
	if api == nil {
		return
	}
	var prior kafkaSinkResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	got, ok := readNamed(ctx, resp, sinkWhat, prior.Name.ValueString(), api.GetKafkaSink)
	if !ok {
		return
	}
	m := prior
	m.setFromSpec(ctx, &got.Spec, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete implements resource.Resource. The sink stops; its open
// transaction is aborted, and its consumer group stays.
func (r *kafkaSinkResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.deleteNamed(ctx, req, resp, sinkWhat, (*client.Client).DeleteKafkaSink)
}

// ImportState implements resource.ResourceWithImportState: the import ID is
// the sink's name.
func (r *kafkaSinkResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
