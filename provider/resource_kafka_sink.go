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

// sinkKind is how the steps shared with the other resources the agent
// runs read a Kafka sink.
var sinkKind = runKind[kafkaSinkResourceModel, *spec.KafkaSink]{
	newConverter: newSinkConverter,
	convert:      (*specConverter).kafkaSink,
	files:        eachSinkSchemaFile,
	timeouts:     func(m *kafkaSinkResourceModel) timeouts.Value { return m.Timeouts },
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it runs
// spec.KafkaSink.Validate, dropping the problems that depend on values not
// known yet. It needs no agent.
func (r *kafkaSinkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if _, c, k, ok := sinkKind.read(ctx, req.Config.Get, &resp.Diagnostics); ok {
		addFieldErrors(&resp.Diagnostics, sinkWhat, k.Validate(), c.skip)
	}
}

// ModifyPlan implements resource.ResourceWithModifyPlan: it plans the
// hash of every schema file of the source's transformers from the file's
// current content, and asks the agent for a dry run of a sink that will
// be created or updated, as for pipelines (see runKind.modifyPlan).
func (r *kafkaSinkResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	sinkKind.modifyPlan(ctx, req, resp, r.dryRun)
}

// dryRun asks the agent whether it would accept sink k, whose values are
// all known, as pipelineResource.dryRun does for pipelines.
func (r *kafkaSinkResource) dryRun(ctx context.Context, k *spec.KafkaSink, diags *diag.Diagnostics) {
	run := func(ctx context.Context, api *client.Client) error {
		_, err := api.DryRunKafkaSink(ctx, k)
		return err
	}
	r.askDryRun(ctx, dryRunKind{
		what: sinkWhat, title: sinkWhat,
		unchecked:    "a sink the agent cannot run (a source_table no pipeline writes, a schema registry its connection lacks) shows only at apply",
		createdFirst: "connection_name",
		writtenFirst: "source_table",
	}, k.Name, run, diags)
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
	a, ok := sinkKind.startApply(ctx, planned, timeout, &r.agentResource, diags)
	if !ok {
		return
	}
	k := a.spec
	w := &statusWatch[spec.KafkaSinkResponse]{what: sinkWhat, name: k.Name, get: a.api.GetKafkaSink,
		state: func(got *spec.KafkaSinkResponse) runState { return sinkRunState(&got.Status) }}
	applyRun(ctx, agentRun{
		what: sinkWhat, title: sinkWhat, name: k.Name,
		files:    sinkKind.schemaFiles(k),
		put:      func(ctx context.Context) (err error) { w.last, err = a.api.PutKafkaSink(ctx, k); return err },
		wait:     w.wait,
		stored:   w.stored,
		accepted: func() { a.plan.ID = types.StringValue(k.Name) },
	}, planned, a.limit, a.plan, state, diags)
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
	readRun(ctx, &r.agentResource, req, resp, sinkWhat, (*client.Client).GetKafkaSink,
		func(m, _ *kafkaSinkResourceModel, got *spec.KafkaSinkResponse, diags *diag.Diagnostics) {
			m.setFromSpec(ctx, &got.Spec, diags)
		})
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
