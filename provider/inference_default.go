package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// inferenceDefault plans the default of an option of schema inference in
// json_options, such as infer_records_per_partition, that is not set: the
// default when the sibling schema_evolution_mode is set, and null when it
// is not, since with a fixed schema the option does not apply (and the
// spec refuses it). A static default could not tell the two apart.
type inferenceDefault struct {
	// shown is the default as the description shows it.
	shown string
}

// Description implements planmodifier.Describer.
func (d inferenceDefault) Description(ctx context.Context) string {
	return "defaults to " + d.shown + " when schema_evolution_mode is set"
}

// MarkdownDescription implements planmodifier.Describer.
func (d inferenceDefault) MarkdownDescription(ctx context.Context) string {
	return "defaults to `" + d.shown + "` when `schema_evolution_mode` is set"
}

// inferencePlan is what inferenceDefault plans for an unset option.
type inferencePlan int

const (
	planNull inferencePlan = iota
	planUnknown
	planDefault
)

// plan reads schema_evolution_mode next to the option at p in config.
func (d inferenceDefault) plan(ctx context.Context, config tfsdk.Config, p path.Path, diags *diag.Diagnostics) inferencePlan {
	var mode types.String
	diags.Append(config.GetAttribute(ctx, p.ParentPath().AtName("schema_evolution_mode"), &mode)...)
	switch {
	case diags.HasError():
		return planNull
	case mode.IsUnknown():
		return planUnknown
	case mode.ValueString() == "":
		return planNull
	}
	return planDefault
}

// inferenceDefaultInt64 is inferenceDefault for an int64 option.
type inferenceDefaultInt64 struct {
	inferenceDefault
	value int64
}

// PlanModifyInt64 implements planmodifier.Int64.
func (d inferenceDefaultInt64) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	switch d.plan(ctx, req.Config, req.Path, &resp.Diagnostics) {
	case planNull:
		resp.PlanValue = types.Int64Null()
	case planUnknown:
		resp.PlanValue = types.Int64Unknown()
	case planDefault:
		resp.PlanValue = types.Int64Value(d.value)
	}
}

// inferenceDefaultBool is inferenceDefault for a bool option.
type inferenceDefaultBool struct {
	inferenceDefault
	value bool
}

// PlanModifyBool implements planmodifier.Bool.
func (d inferenceDefaultBool) PlanModifyBool(ctx context.Context, req planmodifier.BoolRequest, resp *planmodifier.BoolResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	switch d.plan(ctx, req.Config, req.Path, &resp.Diagnostics) {
	case planNull:
		resp.PlanValue = types.BoolNull()
	case planUnknown:
		resp.PlanValue = types.BoolUnknown()
	case planDefault:
		resp.PlanValue = types.BoolValue(d.value)
	}
}
