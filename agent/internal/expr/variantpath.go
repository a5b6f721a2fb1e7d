package expr

import (
	"strings"
	"unsafe"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// ValuePath returns the JSON path of a program that is one on the record's
// value read as text, cast(value AS STRING):path (cast to STRING again or
// not): one a caller that parsed the value already can evaluate with
// [VariantPath] rather than Eval, which reads the text again.
func (p *Program) ValuePath() (steps []PathStep, ok bool) {
	return p.valuePath, p.valuePath != nil
}

// valuePathOf returns the path of n when it is cast(value AS STRING):path,
// cast to STRING again or not (a cast of a STRING to STRING changes
// nothing).
func valuePathOf(n *node) []PathStep {
	for n.kind == nCast && !n.try && n.typ == TypeString {
		n = n.args[0]
	}
	if n.kind != nPath || len(n.path) == 0 {
		return nil
	}
	x := n.args[0]
	if x.kind != nCast || x.try || x.typ != TypeString {
		return nil
	}
	if col := x.args[0]; col.kind != nColumn || !strings.EqualFold(col.name, "value") {
		return nil
	}
	return n.path
}

// VariantPath returns what the program whose ValuePath is steps returns
// for a record whose value is the JSON text root is the root of: the
// same as reading the text again, for any text the VARIANT encoder
// accepts (whatever it accepts, get_json_object reads alike: see
// [jsonPath]). null is true for NULL. A string without escapes is not
// copied: s is valid while the text is.
func VariantPath(root variant.Node, steps []PathStep) (s string, null bool) {
	m, found := nodeAt(root, steps)
	if !found {
		return "", true
	}
	raw := m.Text()
	switch m.Kind() {
	case variant.String:
		body := raw[1 : len(raw)-1]
		if !m.Escaped() {
			return unsafe.String(unsafe.SliceData(body), len(body)), false
		}
		return string(jsontext.AppendUnescaped(nil, body)), false
	case variant.Null:
		return "", true
	case variant.Number:
		return string(appendJSONNumber(nil, raw)), false
	case variant.True, variant.False:
		return string(raw), false
	}
	return string(appendCompact(nil, raw)), false
}

// nodeAt finds the value at path in n as jsonScan.find does in text: the
// first member, in the text's order, whose key the step names, whose value
// is not null and has the rest of the path; an array's element at the
// step's index.
func nodeAt(n variant.Node, path []PathStep) (m variant.Node, found bool) {
	if len(path) == 0 {
		return n, true
	}
	step := &path[0]
	switch k := n.Kind(); {
	case k == variant.Object && !step.IsIndex:
		for c := n.Children(); ; {
			key, v, ok := c.Next()
			if !ok {
				return m, false
			}
			if !keyIs(key, step) || v.Kind() == variant.Null {
				continue
			}
			if m, found = nodeAt(v, path[1:]); found {
				return m, true
			}
		}
	case k == variant.Array && step.IsIndex && step.Index >= 0:
		c := n.Children()
		for range step.Index {
			if _, _, ok := c.Next(); !ok {
				return m, false
			}
		}
		if _, v, ok := c.Next(); ok {
			return nodeAt(v, path[1:])
		}
	}
	return m, false
}
