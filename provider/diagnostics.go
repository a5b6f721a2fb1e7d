package provider

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// parseAttrPath turns a spec attribute path in Terraform syntax
// (`table[0].connector_options.kafka_options.topics[1]`) into a framework
// path. The empty string is the object as a whole, path.Empty().
func parseAttrPath(s string) (path.Path, error) {
	p := path.Empty()
	if s == "" {
		return p, nil
	}
	for _, seg := range strings.Split(s, ".") {
		name, rest, indexed := strings.Cut(seg, "[")
		if name == "" {
			return path.Empty(), fmt.Errorf("attribute path %q has an empty name in segment %q", s, seg)
		}
		p = p.AtName(name)
		for indexed {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || n < 0 {
				return path.Empty(), fmt.Errorf("attribute path %q has a bad list index in segment %q", s, seg)
			}
			p = p.AtListIndex(n)
			if after == "" {
				break
			}
			if !strings.HasPrefix(after, "[") {
				return path.Empty(), fmt.Errorf("attribute path %q has text after an index in segment %q", s, seg)
			}
			rest = after[1:]
		}
	}
	return p, nil
}

// pathSet is a set of spec attribute paths, e.g. those whose value is still
// unknown at plan time.
type pathSet map[string]bool

// covers reports whether p is in s or lies under a path in s
// (`table[0]` covers `table[0].destination_table` and `table[0]`, but not
// `table[01]`).
func (s pathSet) covers(p string) bool {
	for {
		if s[p] {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// anyCovered reports whether any of the paths is covered by s.
func (s pathSet) anyCovered(paths []string) bool {
	for _, p := range paths {
		if s.covers(p) {
			return true
		}
	}
	return false
}

// addFieldErrors adds one attribute diagnostic per problem, except those
// skip returns true for. what names the object ("pipeline").
func addFieldErrors(diags *diag.Diagnostics, what string, errs []spec.FieldError, skip func(spec.FieldError) bool) {
	for _, e := range errs {
		if skip(e) {
			continue
		}
		addFieldError(diags, what, e)
	}
}

// addFieldWarnings adds one attribute warning per warning of a spec
// (Warnings), except those skip returns true for. what names the object
// ("fanout schema").
func addFieldWarnings(diags *diag.Diagnostics, what string, warns []spec.FieldError, skip func(spec.FieldError) bool) {
	for _, w := range warns {
		if skip(w) {
			continue
		}
		p, err := parseAttrPath(w.Path)
		if w.Path == "" || err != nil {
			diags.AddWarning("Check the "+what, w.Error())
			continue
		}
		diags.AddAttributeWarning(p, "Check "+what+" attribute "+w.Path, w.Detail)
	}
}

// addFieldError adds one problem as a diagnostic on its attribute; the
// summary names the attribute path, so it reads the same in every CLI.
func addFieldError(diags *diag.Diagnostics, what string, e spec.FieldError) {
	p, err := parseAttrPath(e.Path)
	if e.Path == "" || err != nil {
		diags.AddError("Invalid "+what, e.Error())
		return
	}
	diags.AddAttributeError(p, "Invalid "+what+" attribute "+e.Path, e.Detail)
}

// addAgentError reports an error of the agent client. Validation problems
// of a 422 answer become diagnostics on their attributes, the refusal of a
// create of an object that exists an error on name (addExistsError);
// anything else is one error with the given summary.
func addAgentError(diags *diag.Diagnostics, what, summary string, err error) {
	if addExistsError(diags, what, err) {
		return
	}
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && len(apiErr.Problems) > 0 {
		for _, p := range apiErr.Problems {
			addFieldError(diags, what, p)
		}
		return
	}
	diags.AddError(summary, err.Error())
}
