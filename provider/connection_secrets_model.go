package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// secretKind is what a kind of object with write-only secrets tells the
// rules of those secrets: its name in messages ("connection") and the spec
// paths of its secrets that have a write-only variant (secretAttributes):
// the attributes p, p_wo and p_wo_version, where p_wo sets the same spec
// field as p.
type secretKind struct {
	what  string
	paths []string
}

// connectionSecrets and catalogSecrets are the write-only secrets of
// tributary_connection and tributary_catalog.
var (
	connectionSecrets = secretKind{"connection", []string{"schema_registry.api_secret", "sasl.password", "sasl.oauth.client_secret"}}
	catalogSecrets    = secretKind{"catalog", []string{"iceberg_rest.token"}}
)

// writeOnlyPath is the attribute of the write-only variant of the secret at
// spec path p.
func writeOnlyPath(p string) string { return p + "_wo" }

// writeOnlyVersionPath is the attribute that versions writeOnlyPath(p).
func writeOnlyVersionPath(p string) string { return p + "_wo_version" }

// attributeGetter is the part of tfsdk.Config (and Plan and State) that
// reads one attribute.
type attributeGetter interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// getAttr reads the attribute at spec path p of cfg into target (a
// types.String or types.Int64 pointer); an attribute under a null object
// reads as null.
func getAttr(ctx context.Context, cfg attributeGetter, p string, target any, diags *diag.Diagnostics) {
	fp, err := parseAttrPath(p)
	if err != nil {
		diags.AddError("Internal provider error", fmt.Sprintf("reading %s: %v", p, err))
		return
	}
	diags.Append(cfg.GetAttribute(ctx, fp, target)...)
}

// secret returns the value of the secret at spec path p, given its plain
// attribute and its write-only variant: the write-only value wins (the
// rule that they are exclusive is checked apart, in validateWriteOnly).
// During create and update the write-only value is null in the plan and
// comes from the configuration (writeOnlyFromConfig).
func (c *specConverter) secret(p string, plain, wo types.String) string {
	if !wo.IsNull() {
		return c.str(p, wo)
	}
	return c.str(p, plain)
}

// validateWriteOnly checks the rules of the write-only secrets in cfg: a
// secret and its write-only variant are exclusive, and a _wo_version needs
// its _wo. It returns the spec paths of the secrets that cfg sets through
// their write-only variant, where problems with their values belong
// (onWriteOnly).
func (k secretKind) validateWriteOnly(ctx context.Context, cfg attributeGetter, diags *diag.Diagnostics) pathSet {
	viaWO := pathSet{}
	for _, p := range k.paths {
		var plain, wo types.String
		var version types.Int64
		getAttr(ctx, cfg, p, &plain, diags)
		getAttr(ctx, cfg, writeOnlyPath(p), &wo, diags)
		getAttr(ctx, cfg, writeOnlyVersionPath(p), &version, diags)
		name := p[strings.LastIndex(p, ".")+1:]
		switch {
		case !wo.IsNull() && !plain.IsNull():
			addFieldError(diags, k.what, spec.FieldError{Path: writeOnlyPath(p), Detail: fmt.Sprintf(
				"%s_wo and %s are mutually exclusive: set %s_wo (write-only, kept out of the state; Terraform or "+
					"OpenTofu 1.11 or later) or %s (sensitive, kept in the state), not both", name, name, name, name)})
		case !version.IsNull() && wo.IsNull():
			addFieldError(diags, k.what, spec.FieldError{Path: writeOnlyVersionPath(p), Detail: fmt.Sprintf(
				"%s_wo_version versions %s_wo, which is not set: set %s_wo, or remove %s_wo_version", name, name, name, name)})
		case !wo.IsNull() && version.IsNull():
			fp, _ := parseAttrPath(writeOnlyPath(p))
			diags.AddAttributeWarning(fp, "Set "+name+"_wo_version with "+name+"_wo", fmt.Sprintf(
				"Terraform cannot see a write-only value change, so without %s_wo_version a new %s_wo is never "+
					"sent to the agent. Set %s_wo_version = 1 and increment it whenever the secret changes.", name, name, name))
		}
		if !wo.IsNull() {
			viaWO[p] = true
		}
	}
	return viaWO
}

// onWriteOnly moves a problem on a secret that the configuration sets
// through its write-only variant onto that variant's attribute, where the
// user wrote the value.
func onWriteOnly(e spec.FieldError, viaWO pathSet) spec.FieldError {
	if viaWO[e.Path] {
		e.Path = writeOnlyPath(e.Path)
	}
	return e
}

// writeOnlyFromConfig sets the secrets of fields (an object's
// SecretFields) that cfg sets through their write-only variant: the plan
// and the state hold those as null, only the configuration has them during
// create and update.
func (k secretKind) writeOnlyFromConfig(ctx context.Context, cfg attributeGetter, fields []spec.SecretField, diags *diag.Diagnostics) {
	for _, f := range fields {
		if !slices.Contains(k.paths, f.Path) {
			continue
		}
		var wo types.String
		getAttr(ctx, cfg, writeOnlyPath(f.Path), &wo, diags)
		if !wo.IsNull() && !wo.IsUnknown() {
			*f.Value = wo.ValueString()
		}
	}
}

// priorValues holds a model with secrets before the agent's answer is set
// into it (the plan, or the prior state on read), for the values the agent
// does not return: secrets and the _wo_version attributes.
type priorValues struct {
	root map[string]attr.Value
	// held, when not nil, lists the secrets the agent holds (its answer's
	// secrets_set): a prior secret it does not hold is dropped, and so is
	// the _wo_version of a write-only one, so that the next plan sends it
	// again.
	held pathSet
}

// newPriorValues captures root, a model's objects that hold such values by
// attribute name; with refresh, the secrets that secretsSet, from the
// agent's answer, does not list are dropped (see priorValues.held).
func newPriorValues(root map[string]attr.Value, secretsSet []string, refresh bool) *priorValues {
	pv := &priorValues{root: root}
	if refresh {
		pv.held = pathSet{}
		for _, p := range secretsSet {
			pv.held[p] = true
		}
	}
	return pv
}

// at returns the value at the dotted spec path p, or nil when p runs
// through a null or unknown object.
func (pv *priorValues) at(p string) attr.Value {
	attrs := pv.root
	names := strings.Split(p, ".")
	for _, name := range names[:len(names)-1] {
		child, ok := attrs[name].(types.Object)
		if !ok || child.IsNull() || child.IsUnknown() {
			return nil
		}
		attrs = child.Attributes()
	}
	return attrs[names[len(names)-1]]
}

// dropped reports whether the agent does not hold the secret at spec path
// p although the prior values may.
func (pv *priorValues) dropped(p string) bool {
	return pv.held != nil && !pv.held[p]
}

// secret is the state value of the secret at spec path p: the value the
// agent answered with if any (the agent never returns secrets, see
// spec.Connection.Redacted), else the prior one; null after an import.
func (pv *priorValues) secret(p, answered string) types.String {
	if answered != "" {
		return types.StringValue(answered)
	}
	if s, ok := pv.at(p).(types.String); ok && !s.IsUnknown() && !pv.dropped(p) {
		return s
	}
	return types.StringNull()
}

// woVersion is the prior value of the _wo_version of the secret at spec
// path p, null if none.
func (pv *priorValues) woVersion(p string) types.Int64 {
	if n, ok := pv.at(writeOnlyVersionPath(p)).(types.Int64); ok && !n.IsUnknown() && !pv.dropped(p) {
		return n
	}
	return types.Int64Null()
}
