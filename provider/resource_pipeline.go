package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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
	_ resource.ResourceWithConfigure      = (*pipelineResource)(nil)
	_ resource.ResourceWithImportState    = (*pipelineResource)(nil)
	_ resource.ResourceWithValidateConfig = (*pipelineResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*pipelineResource)(nil)
)

// pollInterval is how often create and update ask the agent for the
// pipeline's state while they wait.
const pollInterval = 500 * time.Millisecond

// stuckAfter is how long create and update wait on a pipeline that stays
// STARTING while reporting an error before they fail with that error.
const stuckAfter = 30 * time.Second

// pipelineResource is tributary_pipeline.
type pipelineResource struct {
	agentResource
}

// NewPipelineResource returns the tributary_pipeline resource.
func NewPipelineResource() resource.Resource { return &pipelineResource{} }

// Metadata implements resource.Resource.
func (r *pipelineResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pipeline"
}

// Schema implements resource.Resource.
func (r *pipelineResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = pipelineResourceSchema(ctx)
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it reads
// the schema files and runs spec.Pipeline.Validate and ValidateTrigger,
// dropping the problems that depend on values not known yet. It needs no
// agent, so every static rule holds in `terraform validate`.
func (r *pipelineResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	m, c, p, ok := pipelineKind.read(ctx, req.Config.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	addFieldErrors(&resp.Diagnostics, "pipeline", append(p.Validate(), p.ValidateTrigger(!m.Trigger.IsNull())...), c.skip)
}

// pipelineKind is how the steps shared with the other resources the agent
// runs read a pipeline.
var pipelineKind = runKind[pipelineResourceModel, *spec.Pipeline]{
	newConverter: newSpecConverter,
	convert:      (*specConverter).pipeline,
	files:        eachSchemaFile,
	timeouts:     func(m *pipelineResourceModel) timeouts.Value { return m.Timeouts },
}

// ModifyPlan implements resource.ResourceWithModifyPlan. It plans each
// schema_file_sha256 and desc_file_sha256 from the file's current content,
// so that an edited file shows as an update, and asks the agent for a dry
// run of a pipeline that will be created or updated (see dryRun and
// runKind.modifyPlan).
func (r *pipelineResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	pipelineKind.modifyPlan(ctx, req, resp, r.dryRun)
}

// planFileHashes plans the hash attribute of every schema file from the
// file's current content, so that an edited file shows as an update; c is
// the converter that read the plan.
func planFileHashes(ctx context.Context, c *specConverter, files schemaFiles, plan *tfsdk.Plan, diags *diag.Diagnostics) {
	files(func(f *schemaFile) {
		if c.unknown.covers(f.options) {
			return // the whole options object is unknown, and so is its hash
		}
		sha := fileSHA256(f.name, f.content)
		if c.unknown.covers(f.options + "." + f.pathAttr) {
			sha = types.StringUnknown()
		}
		setAttr(ctx, plan, f.options+"."+f.shaAttr, sha, diags)
	})
}

// dryRunTimeout bounds the agent's dry run of a plan.
const dryRunTimeout = 30 * time.Second

// dryRun asks the agent whether it would accept pipeline p, whose values are
// all known, so that a change it refuses (a column type changed in a schema
// file, a table another pipeline claims) fails the plan, on the attribute
// the agent names, rather than the apply. It needs the agent: without a
// configured provider it does nothing, and an agent that cannot be reached,
// or predates dry runs (404 or 405), leaves a warning, so that a plan still
// works offline and against an older agent.
//
// A connection the agent does not have is not an error here: the same apply
// may create it (connection_name = tributary_connection.x.name is known at
// plan time); the apply reports it if not.
func (r *pipelineResource) dryRun(ctx context.Context, p *spec.Pipeline, diags *diag.Diagnostics) {
	run := func(ctx context.Context, api *client.Client) error {
		_, err := api.DryRunPipeline(ctx, p)
		return err
	}
	r.askDryRun(ctx, dryRunKind{
		what: "pipeline", title: "Pipeline",
		unchecked: "a change the agent refuses (a column type changed in a schema file, " +
			"a table another pipeline claims) shows only at apply",
		createdFirst: "connection_name",
	}, p.Name, run, diags)
}

// askDryRun asks the agent, when the provider is configured, for the dry
// run run of the object name of kind k, and reports the answer (see
// reportDryRun).
func (r *agentResource) askDryRun(ctx context.Context, k dryRunKind, name string, run func(context.Context, *client.Client) error, diags *diag.Diagnostics) {
	api := r.configured()
	if api == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, dryRunTimeout)
	defer cancel()
	reportDryRun(diags, k, name, run(ctx, api))
}

// dryRunKind says how the dry run of one kind of object is reported.
type dryRunKind struct {
	// what names the kind in diagnostics ("pipeline"), title too, capitalised.
	what, title string
	// unchecked says what shows only at apply when the agent cannot check.
	unchecked string
	// createdFirst is the attribute naming an object the same apply may
	// create before this one (connection_name): a lone problem on it is no
	// error at plan time.
	createdFirst string
	// writtenFirst is the attribute naming a table that a pipeline the
	// same apply may create before this object writes (a sink's
	// source_table): a lone problem on it is a warning at plan time, and
	// the agent decides at apply.
	writtenFirst string
}

// reportDryRun turns err, the answer of the agent to the dry run of the
// object name of kind k, into diagnostics: a refusal is an error on the
// attributes it names; the dry run of a create of an object the agent has
// already, and an agent that cannot check, leave a warning.
func reportDryRun(diags *diag.Diagnostics, k dryRunKind, name string, err error) {
	if err == nil {
		return
	}
	var apiErr *client.APIError
	answered := errors.As(err, &apiErr)
	switch {
	case errors.Is(err, client.ErrExists):
		addExistsWarning(diags, k.what, err)
	case answered && (apiErr.Status == http.StatusNotFound || apiErr.Status == http.StatusMethodNotAllowed):
		diags.AddWarning(k.title+" "+name+" not checked by the agent: upgrade the agent",
			"The agent predates dry runs, so it cannot check plans: until it is upgraded, "+k.unchecked+
				". The plan goes on without the check. The agent answered: "+err.Error())
	case !answered || !refusal(apiErr.Status):
		diags.AddWarning(k.title+" "+name+" not checked by the agent",
			"The plan could not ask the agent for a dry run, so "+k.unchecked+": "+err.Error())
	case len(apiErr.Problems) == 1 && apiErr.Problems[0].Path == k.createdFirst:
		// The object it refers to does not exist yet; see above.
	case len(apiErr.Problems) == 1 && k.writtenFirst != "" && apiErr.Problems[0].Path == k.writtenFirst:
		diags.AddAttributeWarning(path.Root(k.writtenFirst), "No pipeline of the agent writes this table yet",
			apiErr.Problems[0].Detail+". Unless this apply creates that pipeline first (reference its attributes, or "+
				"use depends_on), applying the "+k.what+" will fail.")
	case len(apiErr.Problems) == 0:
		addAgentError(diags, k.what, "The agent refuses "+k.what+" "+name, err)
	default:
		for _, pr := range apiErr.Problems {
			if !registryProblem(pr) {
				addFieldError(diags, k.what, pr)
				continue
			}
			// The connection may get its schema registry in this same
			// apply, before this object: the agent decides then.
			if ap, err := parseAttrPath(pr.Path); err == nil {
				diags.AddAttributeWarning(ap, "The agent's connections lack a schema registry this "+k.what+" uses",
					pr.Detail+". Unless this apply adds it, applying the "+k.what+" will fail.")
			}
		}
	}
}

// registryProblem reports whether a problem of a dry run is about the
// schema registry of a connection, which the same apply may create or
// change before the pipeline.
func registryProblem(pr spec.FieldError) bool {
	return strings.HasSuffix(pr.Path, ".schema_registry") || strings.HasSuffix(pr.Path, ".schema_registry.connection_name")
}

// refusal reports whether an answer of the agent to a PUT refuses the
// pipeline itself (invalid, a claimed table, a change its tables cannot
// take), rather than the request (a token, a route, a server error).
func refusal(status int) bool {
	return status == http.StatusBadRequest || status == http.StatusConflict || status == http.StatusUnprocessableEntity
}

// attributeSetter is the SetAttribute of tfsdk.Plan and tfsdk.State.
type attributeSetter interface {
	SetAttribute(ctx context.Context, p path.Path, val any) diag.Diagnostics
}

// setAttr sets the attribute at spec path sp.
func setAttr(ctx context.Context, to attributeSetter, sp string, val any, diags *diag.Diagnostics) {
	p, err := parseAttrPath(sp)
	if err != nil {
		diags.AddError("Internal provider error", err.Error())
		return
	}
	diags.Append(to.SetAttribute(ctx, p, val)...)
}

// Create implements resource.Resource. Creating a triggered pipeline starts
// its first run, whatever its trigger.
func (r *pipelineResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(creating(ctx), req.Plan, timeouts.Value.Create, types.StringNull(), &resp.State, &resp.Diagnostics)
}

// Update implements resource.Resource. A new trigger value starts the next
// run of a triggered pipeline (see runPipeline).
func (r *pipelineResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var prior types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("trigger"), &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, req.Plan, timeouts.Value.Update, prior, &resp.State, &resp.Diagnostics)
}

// timeoutOf is the Create or the Update method of timeouts.Value.
type timeoutOf func(timeouts.Value, context.Context, time.Duration) (time.Duration, diag.Diagnostics)

// apply puts the planned pipeline and waits for it (see applyRun) up to
// the timeout that timeout reads from the plan; when the planned trigger
// is set and differs from prior, the state's, it also runs the pipeline
// (see runPipeline).
func (r *pipelineResource) apply(ctx context.Context, planned tfsdk.Plan, timeout timeoutOf, prior types.String, state *tfsdk.State,
	diags *diag.Diagnostics) {
	a, ok := pipelineKind.startApply(ctx, planned, timeout, &r.agentResource, diags)
	if !ok {
		return
	}
	plan, p, api := a.plan, a.spec, a.api
	var got *spec.PipelineResponse
	rerun := !plan.Trigger.IsNull() && !plan.Trigger.Equal(prior) && !p.IsContinuous()
	applyRun(ctx, agentRun{
		what: "pipeline", title: "Pipeline", name: p.Name,
		files: pipelineKind.schemaFiles(p),
		put:   func(ctx context.Context) (err error) { got, err = api.PutPipeline(ctx, p); return err },
		wait: func(ctx context.Context) error {
			if rerun {
				return runPipeline(ctx, api, p.Name, got, stuckAfter)
			}
			return waitForPipeline(ctx, api, p.Name, got, stuckAfter, startedStates)
		},
		stored: func(ctx context.Context) bool {
			stored, err := api.GetPipeline(ctx, p.Name)
			return err == nil && stored != nil
		},
		accepted: func() { plan.ID = types.StringValue(p.Name) },
	}, planned, a.limit, plan, state, diags)
}

// agentRun is an object that apply puts on the agent and waits for: a
// pipeline or a fanout schema.
type agentRun struct {
	// what names the kind in diagnostics ("pipeline"), title too, capitalised.
	what, title string
	// name is the object's name; files lists its schema files.
	name  string
	files schemaFiles
	// put sends the object to the agent; wait then waits until the agent
	// reports it RUNNING, IDLE or FAILED (see waitForRun).
	put, wait func(context.Context) error
	// stored, after a put that failed without a refusal, asks the agent
	// whether it has the object all the same (a 5xx "saved but did not
	// start", or an answer that did not come), keeping its answer as the
	// put's for accepted.
	stored func(context.Context) bool
	// accepted completes the planned model once the agent accepted the
	// object: its id, and what the agent reports.
	accepted func()
}

// applyRun puts o and waits up to timeout for the agent to report it
// RUNNING, IDLE or FAILED. Once the agent accepted it, plan (its
// model, completed by o.accepted) is saved in state even when waiting
// fails, so that Terraform tracks (and taints) it.
func applyRun(ctx context.Context, o agentRun, planned tfsdk.Plan, timeout time.Duration, plan any, state *tfsdk.State, diags *diag.Diagnostics) {
	checkSchemaFilesUnchanged(ctx, planned, o.files, diags)
	if diags.HasError() {
		return
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := o.put(ctx); err != nil {
		addAgentError(diags, o.what, "Cannot apply "+o.what+" "+o.name, err)
		// An object the agent stored all the same goes into the state, so
		// that Terraform tracks (and after a create, taints) it: left out,
		// the next create would meet it and fail on its name.
		// The look-up has its own time: the put may have used it all.
		lookup, cancelLookup := context.WithTimeout(context.WithoutCancel(ctx), storedLookupTimeout)
		defer cancelLookup()
		if mayBeStored(err) && o.stored(lookup) {
			o.accepted()
			diags.Append(state.Set(ctx, plan)...)
			setFileHashes(ctx, state, o.files, diags)
		}
		return
	}
	waitErr := o.wait(ctx)

	o.accepted()
	diags.Append(state.Set(ctx, plan)...)
	setFileHashes(ctx, state, o.files, diags)
	if waitErr != nil {
		diags.AddError(o.title+" "+o.name+" did not start", waitErr.Error())
	}
}

// storedLookupTimeout bounds the look-up of an object whose put failed.
const storedLookupTimeout = 30 * time.Second

// mayBeStored reports whether err, a failed PUT, leaves the agent possibly
// holding the object: no answer came, or a 5xx did (the agent stores an
// object that then fails to start, and answers 500).
func mayBeStored(err error) bool {
	var apiErr *client.APIError
	return !errors.As(err, &apiErr) || apiErr.Status >= http.StatusInternalServerError
}

// setFileHashes sets the hash attribute of every schema file in state
// from the content that was applied.
func setFileHashes(ctx context.Context, state *tfsdk.State, files schemaFiles, diags *diag.Diagnostics) {
	files(func(f *schemaFile) {
		setAttr(ctx, state, f.options+"."+f.shaAttr, fileSHA256(f.name, f.content), diags)
	})
}

// checkSchemaFilesUnchanged reports each schema file whose content changed
// between plan and apply: applying it would store a hash other than the
// planned one.
func checkSchemaFilesUnchanged(ctx context.Context, planned tfsdk.Plan, files schemaFiles, diags *diag.Diagnostics) {
	files(func(f *schemaFile) { checkSchemaFileUnchanged(ctx, planned, f, diags) })
}

// checkSchemaFileUnchanged reports f if its content changed between plan
// and apply.
func checkSchemaFileUnchanged(ctx context.Context, planned tfsdk.Plan, f *schemaFile, diags *diag.Diagnostics) {
	if f.name == "" {
		return
	}
	p, err := parseAttrPath(f.options + "." + f.shaAttr)
	if err != nil {
		diags.AddError("Internal provider error", err.Error())
		return
	}
	var sha types.String
	diags.Append(planned.GetAttribute(ctx, p, &sha)...)
	if sha.IsUnknown() || sha.IsNull() || sha.ValueString() == schemaSHA256(f.content) {
		return
	}
	diags.AddAttributeError(p, "Schema file changed since plan",
		fmt.Sprintf("The content of %s changed between plan and apply; run terraform plan again.", f.name))
}

// The states in which create and update stop waiting: startedStates once
// the object started (a continuous one runs, a triggered one may have
// finished its run already), runOverStates once a run is over.
var (
	startedStates = []string{spec.StateRunning, spec.StateIdle}
	runOverStates = []string{spec.StateIdle}
)

// runPipeline starts the next run of the named triggered pipeline, whose
// PUT answered cur, and waits until the run is over. A run in progress (one
// the PUT started by changing a table, or one an earlier apply left) ends
// first, so that the run asked for starts after every change. Either run
// failing is an error naming each table's last error.
func runPipeline(ctx context.Context, api *client.Client, name string, cur *spec.PipelineResponse, stuckAfter time.Duration) error {
	if err := waitForPipeline(ctx, api, name, cur, stuckAfter, runOverStates); err != nil {
		return err
	}
	started, err := api.StartRun(ctx, name)
	if err != nil {
		return fmt.Errorf("starting a run of pipeline %q: %w", name, err)
	}
	return waitForPipeline(ctx, api, name, started, stuckAfter, runOverStates)
}

// waitForPipeline polls the agent until the pipeline is in one of the
// states done, or FAILED, or ctx ends, starting from cur, the answer to
// its PUT. It returns an error for FAILED (naming each table's last error)
// and for a timeout.
//
// A pipeline that stays STARTING with a table error for stuckAfter (a
// topic that does not exist, an unreachable broker) fails the wait early
// with that error, rather than after the whole timeout; the agent keeps
// retrying it.
func waitForPipeline(ctx context.Context, api *client.Client, name string, cur *spec.PipelineResponse, stuckAfter time.Duration,
	done []string) error {
	get := func(ctx context.Context) (runState, error) {
		next, err := api.GetPipeline(ctx, name)
		if err != nil {
			return runState{}, err
		}
		return runState{next.Status.State, tableErrors(next.Status.Tables)}, nil
	}
	return waitForRun(ctx, fmt.Sprintf("pipeline %q", name), runState{cur.Status.State, tableErrors(cur.Status.Tables)}, get, stuckAfter, done)
}

// runState is what waitForRun reads of an object's status on the agent.
type runState struct {
	// state is one of the State constants of package spec.
	state string
	// errors lists the errors the object reports, each on its own line
	// after a line break; "" when there are none.
	errors string
}

// waitForRun polls get until the object the agent reports, what (`pipeline
// "p"`), is in one of the states done (RUNNING or IDLE, once it started;
// IDLE, once its run is over), or FAILED, or ctx ends, starting from cur.
// It returns an error for FAILED, for a timeout, and for an object that
// stays STARTING with errors for stuckAfter; see waitForPipeline.
func waitForRun(ctx context.Context, what string, cur runState, get func(context.Context) (runState, error), stuckAfter time.Duration,
	done []string) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var stuckSince time.Time
	for {
		switch {
		case slices.Contains(done, cur.state):
			return nil
		case cur.state == spec.StateFailed:
			return fmt.Errorf("the agent reports %s FAILED:%s", what, cur.errors)
		}
		switch {
		case cur.errors == "":
			stuckSince = time.Time{}
		case stuckSince.IsZero():
			stuckSince = time.Now()
		case time.Since(stuckSince) >= stuckAfter:
			return fmt.Errorf("%s cannot start; the agent keeps retrying, but fix the cause and apply again:%s", what, cur.errors)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s is still %s after the timeout; raise the create/update timeout "+
				"in a timeouts block, or check the agent's log and the Kafka cluster.%s",
				what, cur.state, cur.errors)
		case <-tick.C:
		}
		next, err := get(ctx)
		switch {
		case ctx.Err() != nil:
			continue // report the timeout with the last known state
		case err != nil:
			return fmt.Errorf("reading the state of %s: %w", what, err)
		}
		cur = next
	}
}

// tableErrors lists the last error of every table that has one, one per line.
func tableErrors(tables []spec.TableStatus) string {
	var b strings.Builder
	for _, t := range tables {
		if t.LastError != "" {
			fmt.Fprintf(&b, "\n  table %s (%s): %s", t.DestinationTable, t.State, t.LastError)
		}
	}
	return b.String()
}

// Read implements resource.Resource: it sets the state from the pipeline
// the agent stores, so that changes made outside Terraform show in the plan.
// A pipeline deleted on the agent is removed from the state.
func (r *pipelineResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readRun(ctx, &r.agentResource, req, resp, "pipeline", (*client.Client).GetPipeline,
		func(m, prior *pipelineResourceModel, got *spec.PipelineResponse, diags *diag.Diagnostics) {
			m.setFromSpec(ctx, &got.Spec, prior, diags)
		})
}

// Delete implements resource.Resource. The pipeline stops after a final
// flush and commit; its tables, logs and offsets stay on the agent's disk.
func (r *pipelineResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.deleteNamed(ctx, req, resp, "pipeline", (*client.Client).DeletePipeline)
}

// ImportState implements resource.ResourceWithImportState: the import ID is
// the pipeline's name.
func (r *pipelineResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
