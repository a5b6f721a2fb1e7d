package avro

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
)

// NewDecoder compiles the decoding of data written with writer into cols,
// the part's table columns, resolving writer to reader by Avro's schema
// resolution: record fields match by name or reader alias (record names are
// not compared), writer-only fields are skipped, reader-only fields take the
// reader's default; int promotes to long, float and double, long to float
// and double, float to double, string and bytes to each other; enum symbols
// match by name, falling back to the reader's default symbol; a writer
// union resolves branch by branch, and a writer value against a reader
// union takes the first branch of the same type (named types: of the same
// name), else the first it resolves to. Logical types are read as the
// reader declares them. Pass reader == writer for inline and file schemas.
//
// cols may hold more columns, and structs more fields, than reader has:
// those stay null. A reader record becomes the top-level fields (matched to
// cols by name); any other reader fills the column named column. A reader
// type fits a column of the type avroschema.Columns gives it, or of a wider one:
// INT into BIGINT or DOUBLE, FLOAT into DOUBLE. The error names the field
// when writer cannot be resolved to reader or to cols. A writer union
// branch that the reader cannot resolve is an error only when data uses it,
// as the specification says. A reader field without a column is an error
// too, unless it is a top-level field whose name dropped (nil: none)
// reports: one the table leaves out on purpose
// (kafka_options.duplicate_field_strategy), skipped.
func NewDecoder(writer, reader avro.Schema, cols []schema.Field, column string, dropped func(name string) bool) (*Decoder, error) {
	c := &compiler{skips: map[avro.Schema]*node{}, dropped: dropped}
	root := &schema.Type{Kind: schema.Struct, Fields: cols}
	if r, ok := avroschema.Deref(reader).(*avro.RecordSchema); ok {
		top, err := c.resolve(writer, r, root, "", true)
		if err != nil {
			return nil, fmt.Errorf("resolving avro schemas: %w", err)
		}
		return &Decoder{top: top, column: -1}, nil
	}
	i := colIndex(cols, column)
	if i < 0 {
		return nil, fmt.Errorf("resolving avro schemas: the table has no %s column", column)
	}
	top, err := c.resolve(writer, reader, cols[i].Type, column, false)
	if err != nil {
		return nil, fmt.Errorf("resolving avro schemas: %w", err)
	}
	return &Decoder{top: top, column: i}, nil
}

// compiler builds a program; skips holds the skip nodes of named writer
// types, so that a recursive type compiles to a cycle.
type compiler struct {
	skips   map[avro.Schema]*node
	dropped func(name string) bool
}

// resolve compiles writer schema w, read as reader schema r, into column
// type col at path; top marks the reader record of the row itself.
func (c *compiler) resolve(w, r avro.Schema, col *schema.Type, path string, top bool) (*node, error) {
	w, r = avroschema.Deref(w), avroschema.Deref(r)
	if col == nil {
		return nil, fmt.Errorf("%s: the column has no type", nameOr(path))
	}
	if wu, ok := w.(*avro.UnionSchema); ok {
		return c.writerUnion(wu, r, col, path, top)
	}
	if ru, ok := r.(*avro.UnionSchema); ok {
		return c.readerUnion(w, ru, col, path)
	}
	if w.Type() == avro.Null || r.Type() == avro.Null {
		return nil, fmt.Errorf("%s: the writer's %s cannot be read as the reader's %s", nameOr(path), w.Type(), r.Type())
	}
	switch rr := r.(type) {
	case *avro.RecordSchema:
		wr, ok := w.(*avro.RecordSchema)
		if !ok {
			return nil, fmt.Errorf("%s: the writer's %s cannot be read as the reader's record %s", nameOr(path), w.Type(), rr.FullName())
		}
		return c.record(wr, rr, col, path, top)
	case *avro.ArraySchema:
		wa, ok := w.(*avro.ArraySchema)
		if !ok || col.Kind != schema.Array {
			return nil, mismatch(w, r, col, path)
		}
		elem, err := c.resolve(wa.Items(), rr.Items(), col.Elem, path+"[]", false)
		if err != nil {
			return nil, err
		}
		return &node{op: opArray, path: path, elem: elem, minSize: 1}, nil
	case *avro.MapSchema:
		wm, ok := w.(*avro.MapSchema)
		if !ok || col.Kind != schema.Map || col.Key == nil || col.Key.Kind != schema.String {
			return nil, mismatch(w, r, col, path)
		}
		elem, err := c.resolve(wm.Values(), rr.Values(), col.Value, path+"{}", false)
		if err != nil {
			return nil, err
		}
		return &node{op: opMap, path: path, elem: elem, minSize: 1}, nil
	}
	return leaf(w, r, col, path)
}

// writerUnion compiles each branch of a writer union against r.
func (c *compiler) writerUnion(wu *avro.UnionSchema, r avro.Schema, col *schema.Type, path string, top bool) (*node, error) {
	n := &node{op: opUnion, path: path, minSize: 1}
	var first error
	for _, wb := range wu.Types() {
		bn, err := c.resolve(wb, r, col, path, top)
		if err != nil {
			first = cmpOr(first, err)
			bn = &node{op: opFail, path: path, msg: err.Error()}
		}
		n.branches = append(n.branches, bn)
	}
	if !slices.ContainsFunc(n.branches, func(b *node) bool { return b.op != opFail }) {
		return nil, first
	}
	return n, nil
}

// cmpOr returns a unless it is nil, else b.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// readerUnion compiles writer schema w (not a union) against the branch of
// reader union ru that it matches.
func (c *compiler) readerUnion(w avro.Schema, ru *avro.UnionSchema, col *schema.Type, path string) (*node, error) {
	branches, nullable := avroschema.NonNull(ru)
	if w.Type() == avro.Null {
		if !nullable {
			return nil, fmt.Errorf("%s: the writer's null is not a branch of the reader's union", nameOr(path))
		}
		return &node{op: opNull, path: path}, nil
	}
	_, wide := avroschema.Widened(branches)
	members := len(branches) > 1 && !wide
	var last error
	for pass := range 2 {
		for k, rb := range branches {
			if pass == 0 && !sameType(w, rb) {
				continue
			}
			target, member, bpath := col, -1, path
			if members {
				if col.Kind == schema.Struct {
					member = colIndex(col.Fields, avroschema.MemberName(k))
				}
				if member < 0 {
					return nil, fmt.Errorf("%s: the column has no STRUCT field %s for the reader's union branch %s", nameOr(path), avroschema.MemberName(k), rb.Type())
				}
				target, bpath = col.Fields[member].Type, join(path, avroschema.MemberName(k))
			}
			bn, err := c.resolve(w, rb, target, bpath, false)
			if err != nil {
				last = cmpOr(last, err)
				continue
			}
			if members {
				bn = &node{op: opMember, path: path, member: member, elem: bn, minSize: bn.minSize}
			}
			return bn, nil
		}
	}
	if last != nil {
		return nil, last
	}
	return nil, fmt.Errorf("%s: the writer's %s matches no branch of the reader's union", nameOr(path), w.Type())
}

// sameType reports whether w and r are of one type, and for named types of
// one name (or r's alias).
func sameType(w, r avro.Schema) bool {
	w, r = avroschema.Deref(w), avroschema.Deref(r)
	if w.Type() != r.Type() {
		return false
	}
	wn, ok := w.(avro.NamedSchema)
	if !ok {
		return true
	}
	rn := r.(avro.NamedSchema)
	return wn.FullName() == rn.FullName() || slices.Contains(rn.Aliases(), wn.FullName())
}

// record compiles writer record w read as reader record r into STRUCT col.
func (c *compiler) record(w, r *avro.RecordSchema, col *schema.Type, path string, top bool) (*node, error) {
	if col.Kind != schema.Struct {
		return nil, mismatch(w, r, col, path)
	}
	n := &node{op: opRecord, path: path, top: top}
	used := make([]bool, len(r.Fields()))
	filled := make([]bool, len(col.Fields))
	for _, wf := range w.Fields() {
		fp := join(path, wf.Name())
		j := readerField(r, wf.Name())
		if j < 0 {
			sk := c.skip(wf.Type())
			n.fields = append(n.fields, field{index: -1, n: sk})
			n.minSize += sk.minSize
			continue
		}
		used[j] = true
		rf := r.Fields()[j]
		ci := colIndex(col.Fields, rf.Name())
		if ci < 0 {
			if err := c.noColumn(rf, fp, top); err != nil {
				return nil, err
			}
			sk := c.skip(wf.Type())
			n.fields = append(n.fields, field{index: -1, n: sk})
			n.minSize += sk.minSize
			continue
		}
		fn, err := c.resolve(wf.Type(), rf.Type(), col.Fields[ci].Type, fp, false)
		if err != nil {
			return nil, err
		}
		n.fields = append(n.fields, field{index: ci, n: fn})
		n.minSize += fn.minSize
		filled[ci] = true
	}
	for j, rf := range r.Fields() {
		if used[j] {
			continue
		}
		fp := join(path, rf.Name())
		ci := colIndex(col.Fields, rf.Name())
		if ci < 0 {
			if err := c.noColumn(rf, fp, top); err != nil {
				return nil, err
			}
			continue
		}
		if !rf.HasDefault() {
			return nil, fmt.Errorf("field %s: the writer's schema lacks it and the reader's gives no default", fp)
		}
		ds, enc, err := encodeDefault(rf)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", fp, err)
		}
		dn, err := c.resolve(ds, rf.Type(), col.Fields[ci].Type, fp, false)
		if err != nil {
			return nil, err
		}
		n.defaults = append(n.defaults, field{index: ci, n: dn, encoded: enc})
		filled[ci] = true
	}
	for i, f := range col.Fields {
		if !filled[i] && !f.Nullable {
			return nil, fmt.Errorf("field %s: the column is NOT NULL but the reader's schema has no such field", join(path, f.Name))
		}
	}
	return n, nil
}

// noColumn returns the error for reader field rf, which has no column: nil
// for a field of type null, which has none by design, and for a field of
// the top-level record (top) that the table leaves out (c.dropped).
func (c *compiler) noColumn(rf *avro.Field, path string, top bool) error {
	if top && c.dropped != nil && c.dropped(rf.Name()) {
		return nil
	}
	if t, err := avroschema.ColumnType(rf.Type()); err == nil && t == nil {
		return nil
	}
	return fmt.Errorf("field %s: the table has no column for it", path)
}

// readerField returns the index of r's field named name, by name or alias,
// or -1.
func readerField(r *avro.RecordSchema, name string) int {
	for i, f := range r.Fields() {
		if f.Name() == name {
			return i
		}
	}
	for i, f := range r.Fields() {
		if slices.Contains(f.Aliases(), name) {
			return i
		}
	}
	return -1
}

// colIndex returns the index of the field named name, matched exactly or
// else case-insensitively (as Spark resolves columns), or -1.
func colIndex(fields []schema.Field, name string) int {
	for i, f := range fields {
		if f.Name == name {
			return i
		}
	}
	for i, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// skip compiles the skipping of a writer value of schema s.
func (c *compiler) skip(s avro.Schema) *node {
	s = avroschema.Deref(s)
	if n, ok := c.skips[s]; ok {
		return n
	}
	n := &node{}
	switch t := s.(type) {
	case *avro.RecordSchema:
		n.op = opSkipRecord
		c.skips[s] = n // before the fields: a recursive record refers to n
		for _, f := range t.Fields() {
			fn := c.skip(f.Type())
			n.fields = append(n.fields, field{index: -1, n: fn})
			n.minSize += fn.minSize
		}
	case *avro.ArraySchema:
		n.op, n.elem, n.minSize = opSkipArray, c.skip(t.Items()), 1
	case *avro.MapSchema:
		n.op, n.elem, n.minSize = opSkipMap, c.skip(t.Values()), 1
	case *avro.UnionSchema:
		n.op, n.minSize = opSkipUnion, 1
		for _, b := range t.Types() {
			n.branches = append(n.branches, c.skip(b))
		}
	case *avro.FixedSchema:
		n.op, n.size, n.minSize = opSkipN, t.Size(), t.Size()
	default:
		switch s.Type() {
		case avro.Null:
			n.op = opSkipNull
		case avro.Boolean:
			n.op, n.minSize = opSkipBool, 1
		case avro.Float:
			n.op, n.size, n.minSize = opSkipN, 4, 4
		case avro.Double:
			n.op, n.size, n.minSize = opSkipN, 8, 8
		case avro.String, avro.Bytes:
			n.op, n.minSize = opSkipBytes, 1
		default: // int, long, enum
			n.op, n.minSize = opSkipVarint, 1
		}
	}
	return n
}

// mismatch is the error for a writer w and reader r that cannot fill col.
func mismatch(w, r avro.Schema, col *schema.Type, path string) error {
	if w.Type() != r.Type() {
		return fmt.Errorf("%s: the writer's %s cannot be read as the reader's %s", nameOr(path), w.Type(), r.Type())
	}
	return fmt.Errorf("%s: the reader's %s does not fit the column's %s", nameOr(path), r.Type(), col)
}

// join appends name to path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// nameOr names path for errors.
func nameOr(path string) string {
	if path == "" {
		return "the datum"
	}
	return "field " + path
}
