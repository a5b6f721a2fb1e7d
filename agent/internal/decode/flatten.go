package decode

import (
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// An inferred part with json_options.flatten_nested_columns has a column
// per field of its nested objects, named by the field's dotted path
// ("user.addr.city"), rather than STRUCT columns. Its compiled top-level
// struct (compileFlat) groups those columns back into the objects they
// come from: the root and each group are structs whose fields are either
// columns of the part (flat[i] is the column, counted from the part's
// first) or groups (flat[i] is -1). A group is not a STRUCT value: the
// decoder walks into the object and writes each field to its own
// top-level column (see jsonDecoder.group).

// compileFlat compiles the columns fields of a flattened part. A column
// named like a group's path ("user" beside "user.name") gets no value, and
// neither does a second column of the same path. A dot is always a path
// step: a record's own key holding one ({"a.b": 1}) is not a column's,
// and the evolver rescues its value (a column of that name exists).
func compileFlat(fields []schema.Field) *jtype {
	root := &jtype{kind: schema.Struct, index: map[string]int{}, cols: len(fields)}
	for col, f := range fields {
		t, segs := root, strings.Split(f.Name, ".")
		for _, seg := range segs[:len(segs)-1] {
			i, ok := t.index[seg]
			if !ok {
				i = t.addFlat(seg, &jtype{kind: schema.Struct, index: map[string]int{}}, -1)
			}
			if t.flat[i] >= 0 {
				t = nil
				break
			}
			t = t.fields[i]
		}
		if t == nil {
			continue
		}
		if last := segs[len(segs)-1]; !hasName(t, last) {
			t.addFlat(last, compileJSON(f.Type, false), col)
		}
	}
	return root
}

// hasName reports whether struct t has a field named name.
func hasName(t *jtype, name string) bool {
	_, ok := t.index[name]
	return ok
}

// addFlat adds field name to t, a flattened part's root or group: f, which
// is column col or, when col is -1, a group. It returns the field's index.
func (t *jtype) addFlat(name string, f *jtype, col int) int {
	i := len(t.fields)
	t.index[name] = i
	t.fields = append(t.fields, f)
	t.addName(name, true)
	t.flat = append(t.flat, col)
	return i
}

// group parses the value at d.pos for group t of a flattened part whose
// columns start at base: an object's fields go to their columns, null
// leaves them null, and any other value does not fit (rescued when the
// part rescues). False means malformed JSON.
func (d *jsonDecoder) group(t *jtype, base int) bool {
	if d.pos >= len(d.data) {
		return false
	}
	switch d.data[d.pos] {
	case '{':
		return d.object(t, base)
	case 'n':
		return d.literal("null")
	}
	start := d.pos
	if !d.skip(0) {
		return false
	}
	if d.ev != nil && d.ev.rescue {
		d.ev.keep(d.ev.path, "", d.data[start:d.pos])
		return true
	}
	d.corrupt = true
	d.fails++
	return true
}

// columnPath returns path with its leading steps through groups of a
// flattened part joined, with the step after them, into the one step of
// the column's dotted name: the path of the value in the part's columns.
// A path that starts at no group is returned as it is.
func columnPath(path []step) []step {
	n := 0
	for n < len(path) && path[n].group {
		n++
	}
	if n == 0 {
		return path
	}
	names := make([]string, 0, n+1)
	for _, s := range path[:min(n+1, len(path))] {
		names = append(names, s.name)
	}
	out := []step{{name: strings.Join(names, ".")}}
	if n < len(path) {
		out = append(out, path[n+1:]...)
	}
	return out
}
