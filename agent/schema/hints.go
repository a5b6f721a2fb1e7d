package schema

import (
	"fmt"
	"slices"
	"strings"
)

// Hint fixes the type of one path of an inferred schema. Path names a
// column and then, one part at a time, a struct member, "element" for the
// element of an array, or "key" or "value" for the keys or values of a map:
// the hint "user.dob DATE" is {["user", "dob"], DATE}, "tags.element STRING"
// is {["tags", "element"], STRING}, "attrs.value INT" is {["attrs",
// "value"], INT}.
type Hint struct {
	Path []string
	Type *Type
}

// String returns h as ParseHints reads it ("user.dob DATE", "`a.b`.c INT").
func (h Hint) String() string { return pathString(h.Path) + " " + h.Type.String() }

// pathString returns a hint path in DDL form, each part quoted as needed.
func pathString(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = QuoteName(p)
	}
	return strings.Join(parts, ".")
}

// ParseHints parses json_options.schema_hints: a comma-separated list of
// Spark DDL columns whose names may be dotted paths, such as
//
//	id BIGINT, user.dob DATE, tags ARRAY<STRING>, tags.element STRING,
//	attrs MAP<STRING, STRING>, attrs.value INT, `a.b`.c DOUBLE
//
// A backquoted part may hold dots: `a.b`.c is the member c of column
// "a.b". Types are those of [ParseDDL]. Hints are applied in order, so a
// later hint may fix a part of an earlier hint's type, as tags.element does
// above. It returns (nil, nil) for an input that holds only whitespace and
// comments, and a *ParseError for a syntax error, a NOT NULL or COMMENT
// (inferred columns are nullable and hints only fix types), a path given
// twice (ignoring case), a path that goes through a part of a type that
// has none, such as "a INT, a.b STRING", or one that nests deeper than
// [MaxDepth] with its type.
func ParseHints(s string) ([]Hint, error) {
	p, err := newParser(s, true)
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return nil, nil
	}
	var (
		hints   []Hint
		applied []Field            // the hints so far applied to no columns
		seen    = map[string]int{} // lower-case path → offset of its hint
	)
	for {
		off := p.tok.off
		h, err := p.hint()
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(pathString(h.Path))
		if first, dup := seen[key]; dup {
			line, col := p.lineCol(first)
			return nil, p.errorf(off, "schema hint for %s is given twice (names are case-insensitive; first given at line %d, column %d)",
				pathString(h.Path), line, col)
		}
		seen[key] = off
		hints = append(hints, h)
		if applied, err = ApplyHints(applied, hints[len(hints)-1:]); err == nil {
			err = Validate(applied)
		}
		if err != nil {
			return nil, p.errorf(off, "%s", err)
		}
		switch {
		case p.isPunct(","):
			if err := p.next(); err != nil {
				return nil, err
			}
			if p.tok.kind == tokEOF {
				return nil, p.errorf(p.tok.off, "expected a column name after \",\", found end of input (a trailing comma is not allowed)")
			}
		case p.tok.kind == tokEOF:
			return hints, nil
		default:
			return nil, p.errorf(p.tok.off, "expected \",\" or end of input after the schema hint for %s, found %s", pathString(h.Path), p.found())
		}
	}
}

// hint parses one "path type" pair.
func (p *parser) hint() (Hint, error) {
	var h Hint
	for {
		name, err := p.name("column")
		if err != nil {
			return h, err
		}
		h.Path = append(h.Path, name)
		if !p.isPunct(".") {
			break
		}
		if err := p.next(); err != nil {
			return h, err
		}
	}
	t, err := p.typ(fmt.Sprintf("a type after %s", pathString(h.Path)))
	if err != nil {
		return h, err
	}
	switch {
	case p.isWord("NOT"):
		return h, p.errorf(p.tok.off, "a schema hint cannot be NOT NULL: inferred columns are always nullable")
	case p.isWord("COMMENT"):
		return h, p.errorf(p.tok.off, "a schema hint cannot have a COMMENT: it only fixes the type of %s", pathString(h.Path))
	case hasNotNull(t):
		return h, p.errorf(p.tok.off, "the type of the schema hint for %s has a NOT NULL field: inferred columns are always nullable", pathString(h.Path))
	}
	h.Type = t
	return h, nil
}

// hasNotNull reports whether t has a NOT NULL struct field at any depth.
func hasNotNull(t *Type) bool {
	switch {
	case t == nil:
		return false
	case t.Kind == Array:
		return hasNotNull(t.Elem)
	case t.Kind == Map:
		return hasNotNull(t.Key) || hasNotNull(t.Value)
	case t.Kind == Struct:
		for _, f := range t.Fields {
			if !f.Nullable || hasNotNull(f.Type) {
				return true
			}
		}
	}
	return false
}

// ApplyHints returns fields with each hint's type at its path, hints
// applied in order. A path a hint names that fields lack is added: a
// missing column at the end of the columns, a missing struct member at the
// end of its struct, and a missing part in between as a struct (so
// "user.dob DATE" on a schema without user adds "user STRUCT<dob: DATE>").
// Names match ignoring case, an exact spelling first ([Lookup]); "element",
// "key" and "value" name the parts of arrays and maps. Every field the
// result gains is nullable, and hinted types are made nullable throughout.
// fields is not modified. An error names the hint whose path goes through a
// type without such a part: a scalar, the elements of an array other than
// "element", a map's parts other than "key" and "value".
func ApplyHints(fields []Field, hints []Hint) ([]Field, error) {
	out := fields
	for _, h := range hints {
		if len(h.Path) == 0 || h.Type == nil {
			return nil, fmt.Errorf("schema hint %q has no path or no type", h.String())
		}
		var err error
		if out, err = setField(out, h.Path, nullableType(h.Type)); err != nil {
			return nil, fmt.Errorf("schema hint for %s: %w", pathString(h.Path), err)
		}
	}
	return out, nil
}

// setField returns a copy of fields with the type at path, whose first part
// names one of fields, set to t.
func setField(fields []Field, path []string, t *Type) ([]Field, error) {
	out := slices.Clone(fields)
	i, _ := Lookup(out, path[0])
	if i < 0 {
		out = append(out, Field{Name: path[0], Nullable: true})
		i = len(out) - 1
	}
	nt, err := setType(out[i].Type, path[1:], t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", QuoteName(out[i].Name), err)
	}
	out[i].Type = nt
	return out, nil
}

// setType returns cur with the type at path, relative to cur, set to t; a
// nil cur is a part that does not exist yet.
func setType(cur *Type, path []string, t *Type) (*Type, error) {
	if len(path) == 0 {
		return t, nil
	}
	c := Type{Kind: Struct}
	if cur != nil {
		c = *cur
	}
	var err error
	switch {
	case c.Kind == Struct:
		c.Fields, err = setField(c.Fields, path, t)
	case c.Kind == Array && strings.EqualFold(path[0], "element"):
		c.Elem, err = setType(c.Elem, path[1:], t)
	case c.Kind == Map && strings.EqualFold(path[0], "key"):
		c.Key, err = setType(c.Key, path[1:], t)
	case c.Kind == Map && strings.EqualFold(path[0], "value"):
		c.Value, err = setType(c.Value, path[1:], t)
	case c.Kind == Array:
		return nil, fmt.Errorf("%s has no part %s (its elements are \"element\")", cur, QuoteName(path[0]))
	case c.Kind == Map:
		return nil, fmt.Errorf("%s has no part %s (its parts are \"key\" and \"value\")", cur, QuoteName(path[0]))
	default:
		return nil, fmt.Errorf("%s has no part %s (only STRUCT, ARRAY and MAP types have parts)", cur, QuoteName(path[0]))
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Lookup finds the field of fields that name designates: the one spelled
// exactly name if there is one (exact true), else the first whose name
// equals name ignoring case (exact false), else -1. Delta column names are
// case-insensitive, so a JSON key that differs from a column only in case
// cannot become a column of its own: inference keeps the spelling seen
// first ([Inferrer]), and the values of a key found only ignoring case do
// not belong to the column (the decoder matches keys exactly), so they go
// to the rescued data column.
func Lookup(fields []Field, name string) (index int, exact bool) {
	index = -1
	for i := range fields {
		switch {
		case fields[i].Name == name:
			return i, true
		case index < 0 && strings.EqualFold(fields[i].Name, name):
			index = i
		}
	}
	return index, false
}
