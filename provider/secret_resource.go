package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// secretObject is a spec object with secrets: a connection or a catalog.
type secretObject interface {
	SecretFields() []spec.SecretField
	Validate() spec.Errors
}

// secretModel is the model of a resource whose object, P, has write-only
// secrets: a pointer to tributary_connection's or tributary_catalog's.
type secretModel[P secretObject] interface {
	// toSpec converts the model, recording unknown paths in c.
	toSpec(c *specConverter) P
	// setFromSpec sets the model from the object as the agent stores it;
	// refresh says it is a read (see connectionResourceModel.setFromSpec).
	setFromSpec(ctx context.Context, v P, refresh bool, diags *diag.Diagnostics)
	// objectName is the object's name attribute.
	objectName() string
}

// validateSecretConfig is the ValidateConfig of a resource with write-only
// secrets of kind: it checks their rules, then runs the object's Validate
// on the known values of m, read from cfg; a problem with a secret set
// through its write-only variant is reported on that variant.
func validateSecretConfig[P secretObject](ctx context.Context, kind secretKind, cfg tfsdk.Config, m secretModel[P], diags *diag.Diagnostics) {
	diags.Append(cfg.Get(ctx, m)...)
	if diags.HasError() {
		return
	}
	viaWO := kind.validateWriteOnly(ctx, cfg, diags)
	c := newSpecConverter(ctx, false)
	v := m.toSpec(c)
	diags.Append(c.diags...)
	for _, e := range v.Validate() {
		// Whether a problem depends on an unknown value is known by the
		// spec's paths, before the move onto a write-only attribute.
		if !c.skip(e) {
			addFieldError(diags, kind.what, onWriteOnly(e, viaWO))
		}
	}
}

// putSecretObject sends the planned object of m, with the write-only
// secrets of config, to the agent with put, and stores its answer in
// state.
func putSecretObject[P secretObject](ctx context.Context, kind secretKind, getPlan func(context.Context, any) diag.Diagnostics,
	config attributeGetter, state stateSetter, m secretModel[P], put func(context.Context, P) (P, error), diags *diag.Diagnostics) {
	diags.Append(getPlan(ctx, m)...)
	if diags.HasError() {
		return
	}
	c := newSpecConverter(ctx, false)
	v := m.toSpec(c)
	diags.Append(c.diags...)
	kind.writeOnlyFromConfig(ctx, config, v.SecretFields(), diags)
	if diags.HasError() {
		return
	}
	stored, err := put(ctx, v)
	if err != nil {
		addAgentError(diags, kind.what, "Cannot store "+kind.what+" "+m.objectName(), err)
		return
	}
	m.setFromSpec(ctx, stored, false, diags)
	diags.Append(state.Set(ctx, m)...)
}

// readSecretObject is the Read of a resource with write-only secrets of
// kind; an object deleted on the agent is removed from the state.
func readSecretObject[P secretObject](ctx context.Context, kind secretKind, req resource.ReadRequest, resp *resource.ReadResponse,
	m secretModel[P], get func(context.Context, string) (P, error)) {
	resp.Diagnostics.Append(req.State.Get(ctx, m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	v, ok := readNamed(ctx, resp, kind.what, m.objectName(), get)
	if !ok {
		return
	}
	m.setFromSpec(ctx, v, true, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}
