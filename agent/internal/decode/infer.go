package decode

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// An inferred part (json_options.schema_evolution_mode) decodes JSON with
// the explicit-schema decoder against the table's current columns of the
// part, and an evolver sees what those columns do not take:
//
//   - a field the schema lacks, at any depth (not inside a MAP): in
//     ADD_NEW_COLUMNS, ADD_NEW_COLUMNS_WITH_TYPE_WIDENING and
//     FAIL_ON_NEW_COLUMNS it is a new column, and Decode stops at the
//     record with a [*NewColumnsError]; in RESCUE it is
//     rescued; in NONE it is ignored;
//   - a value that does not fit its column: in
//     ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, when Delta's type widening can
//     make the column take it, the column widens (a [*NewColumnsError]);
//     otherwise it is rescued, or, without a rescue column (NONE without
//     rescued_data_column), the record is corrupt as with an explicit
//     schema.
//
// The rescue column holds one JSON object per record, null when nothing was
// rescued: each rescued value, as its raw JSON text, under its path from the
// top of the record, as Auto Loader's _rescued_data does for top-level
// fields ({"extra": 1, "user.age": "ten", "items[2].size": "XL"}). Path
// steps are struct field names joined by "." and array indexes in
// brackets; a name holding '.', '`', '[' or ']' is quoted in backticks
// (doubling a backtick inside). A field whose value is null is neither a new
// column nor rescued: it carries no value. A new field takes the type
// schema.Canonical gives its value (an array of nulls is ARRAY<STRING>);
// one that has none (an empty object) is rescued. A field named
// like another column of the part ignoring case, or at the top level whose
// column name (the part's prefix, then the field's name) is one of the
// table's other columns, is rescued (Delta names ignore case). The
// values inside a MAP column (from schema hints) are decoded as with an
// explicit schema. The bytes of a malformed record go to _corrupt_record,
// with its rescue column null.

// step is one step of the path from the top of a record to the value
// being decoded: a struct field's name, or an array element.
type step struct {
	name  string
	elem  bool
	index int // of an array element
	// group says the step enters a group of a flattened part's columns
	// (see flatten.go), not a STRUCT column.
	group bool
}

// change is one change a record asks of the part's columns: a new field
// (add) or a column widened to take a value of type typ.
type change struct {
	path []step
	typ  *schema.Type
	add  bool
	// typed says a change event typed the new field (its schema, its
	// column types, or DDL): the field's values in the chunk do not
	// unify their own types into it.
	typed bool
}

// evolver watches an inferred part's decoding; see the comment above.
type evolver struct {
	// mode is the part's schema evolution mode, aliases resolved.
	mode string
	// rescue says the part has a rescue column.
	rescue bool
	opts   schema.InferOptions
	// typeOf, when set, gives the type of a new top-level field from the
	// change event being decoded (package changelog); nil when it says
	// nothing, and the value's type is inferred.
	typeOf func(name string) *schema.Type
	// fields are the part's columns the decoder was built with; taken
	// holds the table's other top-level column names; prefix is the part's
	// column name prefix (key_fields_prefix or value_fields_prefix), which
	// a top-level field's column name has before the field's own.
	fields []schema.Field
	taken  []string
	prefix string
	// path is where the decoder is in the record.
	path []step
	// obj is the rescue object of the record being decoded, empty when
	// nothing was rescued yet; key, text and col are scratch space for an
	// unknown key, a rescued value's path and a flattened column's name.
	obj, key, text, col []byte
	// changes are what the chunk's records ask, in order; first is the
	// index in the chunk of the first record that asked one, record the
	// index of the record being decoded.
	changes       []change
	first, record int
	// typedAt holds the indexes in changes of the typed ones.
	typedAt []int
}

// addsColumns reports whether new fields become columns (or fail the
// table) rather than being rescued or ignored.
func (e *evolver) addsColumns() bool {
	switch e.mode {
	case spec.SchemaEvolutionAddNewColumns, spec.SchemaEvolutionAddNewColumnsWithTypeWidening, spec.SchemaEvolutionFailOnNewColumns:
		return true
	}
	return false
}

func (e *evolver) enter(name string) { e.path = append(e.path, step{name: name}) }
func (e *evolver) enterGroup(name string) {
	e.path = append(e.path, step{name: name, group: true})
}
func (e *evolver) enterElem(i int) { e.path = append(e.path, step{elem: true, index: i}) }
func (e *evolver) leave()          { e.path = e.path[:len(e.path)-1] }

// unknown handles the value at d.pos of a key of struct t that t lacks: it
// passes over the value and decides what becomes of it. False means
// malformed JSON.
func (e *evolver) unknown(d *jsonDecoder, t *jtype, key []byte) bool {
	e.key = append(e.key[:0], key...) // key may point into d.scratch, which skip reuses
	start := d.pos
	if !d.skip(len(e.path)) {
		return false
	}
	raw := d.data[start:d.pos]
	if string(raw) == "null" {
		return true
	}
	name := str(e.key) // valid until the next unknown key
	// col is the top-level column name of the field, "" when it is not
	// one: the name, or in a group of a flattened part (whose steps are
	// all groups) its dotted path.
	col := ""
	switch {
	case len(e.path) == 0:
		col = name
	case e.path[len(e.path)-1].group:
		e.col = e.col[:0]
		for _, s := range e.path {
			e.col = append(append(e.col, s.name...), '.')
		}
		e.col = append(e.col, name...)
		col = str(e.col) // valid until the next unknown key
	}
	clash := hasFold(t.names, name) || col != "" && (hasPrefixedFold(e.taken, e.prefix, col) || hasColumn(e.fields, col))
	if e.addsColumns() && !clash {
		if len(e.path) == 0 && e.typed(name) {
			return true
		}
		if e.typeOf != nil && len(e.path) == 0 {
			if typ := e.typeOf(name); typ != nil {
				e.ask(change{path: []step{{name: strings.Clone(name)}}, typ: typ, add: true, typed: true})
				return true
			}
		}
		if typ, err := schema.InferValue(raw, e.opts); err == nil {
			if typ, ok := schema.Canonical(typ); ok {
				e.add(col, name, typ)
				return true
			}
		}
	}
	if e.rescue && (e.mode != spec.SchemaEvolutionNone || clash) {
		e.keep(e.path, name, raw)
	}
	return true
}

// add asks for the new column of an unknown field name of type typ, whose
// top-level column name is col ("" when it is in a STRUCT column). With
// flatten_nested_columns a top-level object becomes a column per field.
func (e *evolver) add(col, name string, typ *schema.Type) {
	switch {
	case col != "" && e.opts.FlattenNested && typ.Kind == schema.Struct:
		for _, f := range schema.Flatten([]schema.Field{{Name: strings.Clone(col), Type: typ}}) {
			e.ask(change{path: []step{{name: f.Name}}, typ: f.Type, add: true})
		}
	case col != "":
		e.ask(change{path: []step{{name: strings.Clone(col)}}, typ: typ, add: true})
	default:
		e.ask(change{path: append(columnPath(slices.Clip(e.path)), step{name: strings.Clone(name)}), typ: typ, add: true})
	}
}

// hasPrefixedFold reports whether names holds prefix followed by name,
// ignoring case.
func hasPrefixedFold(names []string, prefix, name string) bool {
	for _, n := range names {
		if len(n) == len(prefix)+len(name) && strings.EqualFold(n[:len(prefix)], prefix) && strings.EqualFold(n[len(prefix):], name) {
			return true
		}
	}
	return false
}

// hasColumn reports whether fields has one named name, ignoring case.
func hasColumn(fields []schema.Field, name string) bool {
	return slices.ContainsFunc(fields, func(f schema.Field) bool { return strings.EqualFold(f.Name, name) })
}

// scalar decodes a primitive value (or any value into a STRING) as
// [jsonDecoder.scalar] does, and decides what becomes of a value that does
// not fit t: a widened column, a rescued value, or a corrupt record.
func (e *evolver) scalar(d *jsonDecoder, t *jtype, depth int) (nonNull, ok bool) {
	start, was, fails := d.pos, d.corrupt, d.fails
	d.corrupt = false
	nonNull, ok = d.scalar(t, depth)
	if !ok || !d.corrupt {
		d.corrupt = d.corrupt || was
		return nonNull, ok
	}
	raw := d.data[start:d.pos]
	switch {
	case e.widens(raw):
	case e.rescue:
		e.keep(e.path, "", raw)
	default:
		return nonNull, ok // corrupt, as with an explicit schema
	}
	d.corrupt, d.fails = was, fails
	return nonNull, ok
}

// widens asks for the column at e.path to widen to the type of raw, and
// reports whether it can: only in ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, as
// far as Delta's type widening goes.
func (e *evolver) widens(raw []byte) bool {
	if e.mode != spec.SchemaEvolutionAddNewColumnsWithTypeWidening {
		return false
	}
	path := columnPath(e.path)
	cur := typeAt(e.fields, path)
	got, err := schema.InferValue(raw, e.opts)
	if cur == nil || err != nil || got == nil {
		return false
	}
	if got.Kind == schema.Double && (cur.Kind == schema.Decimal || cur.Kind == schema.Long || cur.Kind == schema.Int ||
		cur.Kind == schema.Short || cur.Kind == schema.Byte) {
		// A fraction in an integer or DECIMAL column: Delta widens to a
		// DECIMAL that holds it exactly, never to DOUBLE.
		if d, ok := schema.DecimalOf(raw); ok {
			got = d
		}
	}
	// Widen gives cur itself when no widening holds the value either.
	if w, ok := schema.Widen(cur, got); !ok || w.Equal(cur) {
		return false
	}
	e.ask(change{path: slices.Clone(path), typ: got})
	return true
}

// ask records change c of the record being decoded.
func (e *evolver) ask(c change) {
	if e.first < 0 {
		e.first = e.record
	}
	if c.typed {
		e.typedAt = append(e.typedAt, len(e.changes))
	}
	e.changes = append(e.changes, c)
}

// typed reports whether a change event of the chunk typed new top-level
// field name.
func (e *evolver) typed(name string) bool {
	for _, i := range e.typedAt {
		if c := &e.changes[i]; len(c.path) == 1 && strings.EqualFold(c.path[0].name, name) {
			return true
		}
	}
	return false
}

// hasFold reports whether names holds name, ignoring case.
func hasFold(names []string, name string) bool {
	for _, n := range names {
		if len(n) == len(name) && strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// keep adds raw, the value at path (then name, when not empty), to the
// record's rescue object.
func (e *evolver) keep(path []step, name string, raw []byte) {
	if len(e.obj) == 0 {
		e.obj = append(e.obj, '{')
	} else {
		e.obj = append(e.obj, ',')
	}
	e.text = appendPath(e.text[:0], path, name)
	e.obj = jsontext.AppendQuoted(e.obj, e.text)
	e.obj = append(e.obj, ':')
	e.obj = append(e.obj, raw...)
}

// pathString spells path, then name when not empty, as the rescue object's
// keys and error messages do.
func pathString(path []step, name string) string { return string(appendPath(nil, path, name)) }

// appendPath appends path, then name when not empty, to b: the names of
// struct fields joined by '.', a name holding '.', '`', '[' or ']' in
// backticks (a backtick in it doubled), and array indexes in brackets.
func appendPath(b []byte, path []step, name string) []byte {
	start := len(b)
	put := func(n string) {
		if len(b) > start {
			b = append(b, '.')
		}
		if !strings.ContainsAny(n, ".`[]") {
			b = append(b, n...)
			return
		}
		b = append(b, '`')
		for i := 0; i < len(n); i++ {
			if n[i] == '`' {
				b = append(b, '`')
			}
			b = append(b, n[i])
		}
		b = append(b, '`')
	}
	for _, s := range path {
		if s.elem {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
		} else {
			put(s.name)
		}
	}
	if name != "" {
		put(name)
	}
	return b
}

// typeAt returns the type of the value at path in fields, nil if there is
// none.
func typeAt(fields []schema.Field, path []step) *schema.Type {
	t := &schema.Type{Kind: schema.Struct, Fields: fields}
	for _, s := range path {
		switch {
		case s.elem && t.Kind == schema.Array:
			t = t.Elem
		case !s.elem && t.Kind == schema.Struct:
			i := slices.IndexFunc(t.Fields, func(f schema.Field) bool { return f.Name == s.name })
			if i < 0 {
				return nil
			}
			t = t.Fields[i].Type
		default:
			return nil
		}
	}
	return t
}

// apply returns fields with the changes made, in order, and the paths of
// the columns they add or widen. A field that exists by then (another
// change added it, or it differs from a column only in case) takes the
// unified type when a change of cs added it, and is left alone otherwise;
// a widening Delta cannot make is left out.
func apply(fields []schema.Field, cs []change) ([]schema.Field, []string) {
	var names []string
	added := map[string]bool{}
	for _, c := range cs {
		key := pathString(c.path, "")
		next, ok := edit(fields, c.path, func(old *schema.Type) (*schema.Type, bool) {
			switch {
			case c.add && old == nil:
				return c.typ, true
			case c.add && added[key]:
				u := schema.Unify(old, c.typ)
				return u, !u.Equal(old)
			case c.add:
				return nil, false
			}
			w, ok := schema.Widen(old, c.typ)
			return w, ok && !w.Equal(old)
		})
		if !ok {
			continue
		}
		fields = next
		if c.add {
			added[key] = true
		}
		if !slices.Contains(names, key) {
			names = append(names, key)
		}
	}
	return fields, names
}

// edit returns fields with the type at path replaced by what fn returns
// for the old one (nil for a field that is not there, which the new type
// then adds, nullable, at the end of its struct), copying what it changes;
// false, with fields unchanged, when fn declines or the path leads nowhere.
// A field matches a name step ignoring case.
func edit(fields []schema.Field, path []step, fn func(old *schema.Type) (*schema.Type, bool)) ([]schema.Field, bool) {
	i := slices.IndexFunc(fields, func(f schema.Field) bool { return strings.EqualFold(f.Name, path[0].name) })
	var t *schema.Type
	if i >= 0 {
		t = fields[i].Type
	}
	var ok bool
	if len(path) == 1 {
		t, ok = fn(t)
	} else if t != nil {
		t, ok = editType(t, path[1:], fn)
	}
	if !ok {
		return fields, false
	}
	out := slices.Clone(fields)
	if i < 0 {
		return append(out, schema.Field{Name: path[0].name, Type: t, Nullable: true}), true
	}
	out[i].Type = t
	return out, true
}

// editType is edit for the type t of a field, path leading into it.
func editType(t *schema.Type, path []step, fn func(old *schema.Type) (*schema.Type, bool)) (*schema.Type, bool) {
	switch {
	case !path[0].elem && t.Kind == schema.Struct:
		fs, ok := edit(t.Fields, path, fn)
		return &schema.Type{Kind: schema.Struct, Fields: fs}, ok
	case path[0].elem && t.Kind == schema.Array:
		var e *schema.Type
		var ok bool
		if len(path) == 1 {
			e, ok = fn(t.Elem)
		} else {
			e, ok = editType(t.Elem, path[1:], fn)
		}
		return &schema.Type{Kind: schema.Array, Elem: e}, ok
	}
	return t, false
}

// inferredPart decodes a JSON object into the current columns of an
// inferred part, and its rescue column; see the comment at the top.
type inferredPart struct {
	jsonPart
	ev *evolver
	// rescue is the top-level field of the rescue column, -1 for none.
	rescue int
}

// newInferredPart returns the part decoder of inferred part sp, whose
// columns start at top-level field first of b's rows and whose rescue
// column, if any, is field rescue; taken holds the names of the table's
// other columns. Its JSON parser options (json_options) are those of an
// explicit schema: single quotes, non-numeric numbers, the timestamp and
// date formats of the columns schema hints declare.
func newInferredPart(b *rows.Builder, first, rescue int, sp *spec.Part, taken []string) (*inferredPart, error) {
	jo := sp.Transformer.JSONOptions
	d, err := newJSONDecoder(b, sp.Transformer)
	if err != nil {
		return nil, err
	}
	ev := &evolver{mode: jo.EvolutionMode(), rescue: rescue >= 0, fields: sp.Fields, taken: taken, prefix: sp.Prefix, opts: InferOptions(jo)}
	t := compileJSON(&schema.Type{Kind: schema.Struct, Fields: sp.Fields}, false)
	if ev.opts.FlattenNested {
		t = compileFlat(sp.Fields)
	}
	p := &inferredPart{jsonPart: jsonPart{d: d, t: t, first: first}, ev: ev, rescue: rescue}
	p.begin()
	return p, nil
}

// begin starts a chunk.
func (p *inferredPart) begin() {
	p.ev.changes, p.ev.typedAt, p.ev.first, p.ev.record = p.ev.changes[:0], p.ev.typedAt[:0], -1, -1
}

// at says the next decode calls are of record rec of the chunk, an index
// into the records Decode got, and returns a mark for drop. A record may
// decode into several rows (a change event's row images) or none.
func (p *inferredPart) at(rec int) int {
	p.ev.record = rec
	return len(p.ev.changes)
}

// drop forgets what the record since mark asked: it gets no row
// ([Options.SkipBad]), so it must not add columns either.
func (p *inferredPart) drop(mark int) {
	e := p.ev
	e.changes = e.changes[:mark]
	for len(e.typedAt) > 0 && e.typedAt[len(e.typedAt)-1] >= mark {
		e.typedAt = e.typedAt[:len(e.typedAt)-1]
	}
	if mark == 0 {
		e.first = -1
	}
}

func (p *inferredPart) Decode(ctx context.Context, data []byte) error {
	e := p.ev
	e.path, e.obj = e.path[:0], e.obj[:0]
	p.d.ev = e
	err := p.jsonPart.Decode(ctx, data)
	if p.rescue >= 0 {
		p.d.b.Field(p.rescue)
		if err != nil || len(e.obj) == 0 {
			p.d.b.Null()
		} else {
			e.obj = append(e.obj, '}')
			p.d.b.Bytes(append(p.d.b.Alloc(len(e.obj))[:0], e.obj...))
		}
	}
	return err
}

// end finishes a chunk of recs: a [*NewColumnsError] when its records ask
// for columns the part lacks, for side "key" or "value"; nil otherwise.
func (p *inferredPart) end(recs []record.Record, side string) *NewColumnsError {
	e := p.ev
	defer p.begin()
	if len(e.changes) == 0 {
		return nil
	}
	r := &recs[e.first]
	fields, names := apply(e.fields, e.changes)
	return &NewColumnsError{
		Side: side, Record: e.first, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Fields: fields, Columns: names, Fail: e.mode == spec.SchemaEvolutionFailOnNewColumns,
		changes: slices.Clone(e.changes),
	}
}
