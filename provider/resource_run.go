package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// runKind is one kind of object the agent runs (a pipeline, a fanout
// schema, a Kafka sink) as the steps its resource shares with the others
// see it: M is its model, S its spec.
type runKind[M, S any] struct {
	// newConverter returns a converter that names the kind in diagnostics.
	newConverter func(ctx context.Context, readFiles bool) *specConverter
	// convert converts a model into its spec with c.
	convert func(c *specConverter, m *M) S
	// files calls fn for every schema file of a spec.
	files func(s S, fn func(*schemaFile))
	// timeouts is the model's timeouts block.
	timeouts func(m *M) timeouts.Value
}

// read gets the model from get (the Get of a config or a plan), reading
// the schema files, and converts it; ok is false when diags has an error.
func (k runKind[M, S]) read(ctx context.Context, get func(context.Context, any) diag.Diagnostics, diags *diag.Diagnostics) (m *M, c *specConverter, s S, ok bool) {
	m = new(M)
	diags.Append(get(ctx, m)...)
	if diags.HasError() {
		return m, nil, s, false
	}
	c = k.newConverter(ctx, true)
	s = k.convert(c, m)
	diags.Append(c.diags...)
	return m, c, s, true
}

// schemaFiles lists the schema files of s.
func (k runKind[M, S]) schemaFiles(s S) schemaFiles {
	return func(fn func(*schemaFile)) { k.files(s, fn) }
}

// modifyPlan is the ModifyPlan of the kind: it plans the hash of every
// schema file from the file's current content, so that an edited file
// shows as an update, and calls dryRun for an object that will be created
// or updated and whose values are all known (the context of a create
// makes an object the agent has already a warning: see addExistsWarning).
func (k runKind[M, S]) modifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse,
	dryRun func(context.Context, S, *diag.Diagnostics)) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	_, c, s, ok := k.read(ctx, req.Plan.Get, &resp.Diagnostics)
	if !ok {
		return
	}
	planFileHashes(ctx, c, k.schemaFiles(s), &resp.Plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || len(c.unknown) > 0 || resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	if req.State.Raw.IsNull() {
		ctx = creating(ctx)
	}
	dryRun(ctx, s, &resp.Diagnostics)
}

// applying is what apply starts from: the planned model and spec, how long
// it may take, and the agent's client.
type applying[M, S any] struct {
	plan  *M
	spec  S
	limit time.Duration
	api   *client.Client
}

// startApply reads the planned model and its spec, the timeout that timeout
// reads from the plan, and the agent's client; ok is false when diags has
// an error.
func (k runKind[M, S]) startApply(ctx context.Context, planned tfsdk.Plan, timeout timeoutOf, r *agentResource,
	diags *diag.Diagnostics) (a applying[M, S], ok bool) {
	a.plan = new(M)
	diags.Append(planned.Get(ctx, a.plan)...)
	if diags.HasError() {
		return a, false
	}
	limit, d := timeout(k.timeouts(a.plan), ctx, defaultPipelineTimeout)
	diags.Append(d...)
	a.api = r.client(diags)
	if diags.HasError() {
		return a, false
	}
	a.limit = limit
	c := k.newConverter(ctx, true)
	a.spec = k.convert(c, a.plan)
	diags.Append(c.diags...)
	return a, true
}

// statusWatch is the wait and stored steps of an agentRun for an object
// whose status get reads from the agent: last holds the answer of the put,
// then of each get; state is what waitForRun reads of an answer.
type statusWatch[R any] struct {
	what, name string
	get        func(context.Context, string) (*R, error)
	state      func(*R) runState
	last       *R
}

// poll reads the object's status into w.last.
func (w *statusWatch[R]) poll(ctx context.Context) (runState, error) {
	next, err := w.get(ctx, w.name)
	if err != nil {
		return runState{}, err
	}
	w.last = next
	return w.state(next), nil
}

// wait waits until the agent reports the object RUNNING, IDLE or FAILED
// (see waitForRun).
func (w *statusWatch[R]) wait(ctx context.Context) error {
	return waitForRun(ctx, fmt.Sprintf("%s %q", w.what, w.name), w.state(w.last), w.poll, stuckAfter, startedStates)
}

// stored reports whether the agent has the object.
func (w *statusWatch[R]) stored(ctx context.Context) bool {
	_, err := w.poll(ctx)
	return err == nil
}

// readRun is the Read of a resource whose object, of kind what (as
// "pipeline"), the agent stores under the resource's name attribute: it
// sets the state from the object the agent stores, so that changes made
// outside Terraform show in the plan. get is the client's get of the kind,
// and set sets the model m, a copy of the state's prior, from the agent's
// answer. An object deleted on the agent is removed from the state.
func readRun[M, R any](ctx context.Context, r *agentResource, req resource.ReadRequest, resp *resource.ReadResponse, what string,
	get func(*client.Client, context.Context, string) (R, error), set func(m, prior *M, got R, diags *diag.Diagnostics)) {
	api := r.client(&resp.Diagnostics)
	if api == nil {
		return
	}
	var prior M
	var name types.String
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	got, ok := readNamed(ctx, resp, what, name.ValueString(), func(ctx context.Context, name string) (R, error) {
		return get(api, ctx, name)
	})
	if !ok {
		return
	}
	m := prior
	set(&m, &prior, got, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
