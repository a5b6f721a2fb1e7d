package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
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
// spec refuses it). A static default could not tell the two apart. The
// json_options of a changelog format that declare no schema infer too.
type inferenceDefault struct {
	// shown is the default as the description shows it.
	shown string
}

// Description implements planmodifier.Describer.
func (d inferenceDefault) Description(_ context.Context) string {
	return "defaults to " + d.shown + " when schema_evolution_mode is set"
}

// MarkdownDescription implements planmodifier.Describer.
func (d inferenceDefault) MarkdownDescription(_ context.Context) string {
	return "defaults to `" + d.shown + "` when `schema_evolution_mode` is set"
}

// planInferenceDefault sets *planned, the plan of the option at p in config whose
// configured value is configured, when the option is not set: to def when
// its json_options infer the columns (see rowInfers), to unknown while
// that is not known, and to null otherwise (or when it cannot be read).
func planInferenceDefault[V attr.Value](ctx context.Context, config tfsdk.Config, p path.Path, configured V, planned *V, null, unknown, def V, diags *diag.Diagnostics) {
	if !configured.IsNull() {
		return
	}
	infers, unknownMode, d := rowInfers(ctx, config, p.ParentPath())
	diags.Append(d...)
	switch {
	case diags.HasError():
		*planned = null
	case unknownMode:
		*planned = unknown
	case !infers:
		*planned = null
	default:
		*planned = def
	}
}

// inferenceDefaultInt64 is inferenceDefault for an int64 option.
type inferenceDefaultInt64 struct {
	inferenceDefault
	value int64
}

// PlanModifyInt64 implements planmodifier.Int64.
func (d inferenceDefaultInt64) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	planInferenceDefault(ctx, req.Config, req.Path, req.ConfigValue, &resp.PlanValue,
		types.Int64Null(), types.Int64Unknown(), types.Int64Value(d.value), &resp.Diagnostics)
}

// inferenceDefaultBool is inferenceDefault for a bool option.
type inferenceDefaultBool struct {
	inferenceDefault
	value bool
}

// PlanModifyBool implements planmodifier.Bool.
func (d inferenceDefaultBool) PlanModifyBool(ctx context.Context, req planmodifier.BoolRequest, resp *planmodifier.BoolResponse) {
	planInferenceDefault(ctx, req.Config, req.Path, req.ConfigValue, &resp.PlanValue,
		types.BoolNull(), types.BoolUnknown(), types.BoolValue(d.value), &resp.Diagnostics)
}
