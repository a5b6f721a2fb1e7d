package decode

import (
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The JSON decoder is a hand-written single-pass scanner: it parses a
// record's bytes straight into a rows.Builder, matching object keys against
// the schema and skipping unknown ones, with no intermediate tree and no
// allocation once its buffers have grown. Measured on ~100-byte records,
// fastjson only parsing and visiting the fields (no conversion, no rows, no
// UTF-8 validation) cost about as much as this scanner's whole JSON side, and
// a tree would still need converting and could not give STRING fields the
// raw text of non-string values.
//
// This file assembles the values into the columns a schema describes, as
// Spark's from_json does: objects into structs (NOT NULL fields, keys in
// any order, unknown keys skipped), arrays, maps, VARIANT fields, and what
// becomes of a value that does not fit. The tokens are read by the
// jsonScanner it embeds (json_scan.go), and a value's text becomes its
// column's type in json_value.go.

// jtype is a schema type compiled for JSON decoding.
type jtype struct {
	kind schema.Kind
	// notNull is set on a struct field declared NOT NULL.
	notNull bool
	// precision and scale of a DECIMAL; size of its fixed-length bytes
	// (precision above 18).
	precision, scale, size int
	// fields and index describe a STRUCT; required says one of its fields
	// is NOT NULL.
	fields   []*jtype
	index    map[string]int
	required bool
	// names holds each field's name where index finds that field (a name
	// declared twice finds its last field): keys usually come in the
	// schema's order, so the field after the previous key is tried first,
	// with one comparison instead of a map look-up.
	names []string
	// named[i] says names[i] is usable: the name is not declared again.
	// spelled[i] says, further, that the name can be matched against a
	// document's key by its plain bytes between double quotes (it has no
	// quote, backslash, control character or invalid UTF-8), without
	// scanning the key as a string.
	named, spelled []bool
	// elem of an ARRAY; key and value of a MAP.
	elem, key, value *jtype
	// flat and cols describe the top-level struct of a part with
	// flattened columns, and its groups: see flatten.go. flat is nil
	// otherwise; cols is the root's number of columns.
	flat []int
	cols int
	// conv says how a JSON number or string becomes a value of the type
	// where the type alone does not tell (json_events.go).
	conv Conversion
}

// compileJSON compiles t; notNull marks a NOT NULL struct field.
func compileJSON(t *schema.Type, notNull bool) *jtype {
	j := &jtype{kind: t.Kind, notNull: notNull}
	switch t.Kind {
	case schema.Decimal:
		j.precision, j.scale = t.Precision, t.Scale
		if j.precision > 18 {
			j.size = rows.DecimalBytes(j.precision)
		}
	case schema.Struct:
		j.index = make(map[string]int, len(t.Fields))
		for i, f := range t.Fields {
			j.fields = append(j.fields, compileJSON(f.Type, !f.Nullable))
			j.index[f.Name] = i // duplicate names: the last declared wins
			j.required = j.required || !f.Nullable
		}
		for i, f := range t.Fields {
			j.addName(f.Name, j.index[f.Name] == i)
		}
	case schema.Array:
		j.elem = compileJSON(t.Elem, false)
	case schema.Map:
		j.key, j.value = compileJSON(t.Key, true), compileJSON(t.Value, false)
	}
	return j
}

// addName appends the name of t's next field; usable says no later field
// has the same name.
func (t *jtype) addName(name string, usable bool) {
	t.names = append(t.names, name)
	t.named = append(t.named, usable)
	t.spelled = append(t.spelled, usable && jsontext.IsPlain(name))
}

// jsonDecoder parses JSON documents into a Builder. It is reused across
// records and is not safe for concurrent use.
type jsonDecoder struct {
	b *rows.Builder
	// jsonScanner reads the document's tokens, with the parser options
	// single quotes and non-numeric numbers.
	jsonScanner
	// timestamps and dates are the compiled timestamp_format and
	// date_format, nil for Spark's lenient parsing; sqlTimestamps says
	// timestamp_format is "SQL", which the lenient parser reads once the
	// text has its shape (see sqlTimestamp).
	timestamps, dates *sparktime.Pattern
	sqlTimestamps     bool
	// lenient parses strings into numbers, booleans and the other types
	// as Canal's row images need (see [jsonDecoder.lenientString]).
	lenient bool

	// corrupt is set when a value did not fit its field, or a NOT NULL
	// field ended up null.
	corrupt bool
	// fails counts the values that did not fit, so that a struct field
	// knows whether one failed inside it (see object).
	fails int
	// inField says the value being parsed is a struct field's own, not an
	// element or map value: one that does not fit is not written, which
	// leaves what the field held (null unless the key came before).
	inField bool
	// written tracks, per struct being decoded that has NOT NULL fields,
	// which fields hold a non-null value.
	written []bool
	// enc encodes the values of VARIANT fields.
	enc variant.Encoder
	// ev, set by an inferred part (infer.go), sees the fields and values
	// the schema does not take; nil for an explicit schema.
	ev *evolver
}

// newJSONDecoder returns a decoder writing to b with the parser options of
// transformer tr (nil: Spark's defaults).
func newJSONDecoder(b *rows.Builder, tr *spec.Transformer) (jsonDecoder, error) {
	var o *spec.JSONOptions
	if tr != nil {
		o = tr.JSONOptions
	}
	d := jsonDecoder{b: b, jsonScanner: jsonScanner{singleQuotes: o.SingleQuotes(), nonNumeric: o.NonNumericNumbers()},
		sqlTimestamps: o.TimestampFormatName() == spec.TimestampFormatSQL}
	var err error
	if d.timestamps, d.dates, err = jsonFormats(o); err != nil {
		return d, err
	}
	return d, nil
}

// decode parses one document whose object feeds the top-level fields
// [base, base+len(t.fields)) of the open row and reports whether the
// document is corrupt. On malformed JSON, or a document that is not an
// object, it leaves those fields null. Empty or all-blank input is not a
// document: the fields are null and it is not corrupt, as in Spark. What
// follows the object is not read, as Spark reads only the first value.
func (d *jsonDecoder) decode(t *jtype, base int, data []byte) bool {
	d.data, d.pos, d.corrupt, d.written = data, 0, false, d.written[:0]
	d.ws()
	if d.pos == len(data) {
		return false
	}
	if data[d.pos] == '{' && d.object(t, base) {
		return d.corrupt
	}
	n := len(t.fields)
	if t.flat != nil {
		n = t.cols
	}
	d.b.DiscardFields(base, base+n)
	return true
}

// object parses the object at d.pos into the fields of struct t, numbered
// from base in the Builder's open struct; false means malformed JSON.
func (d *jsonDecoder) object(t *jtype, base int) bool {
	d.pos++ // '{'
	mark := len(d.written)
	if t.required {
		for range t.fields {
			d.written = append(d.written, false)
		}
	}
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
	} else {
		guess := 0 // the field the next key probably names
		for {
			var key []byte
			i, found := guess, guess < len(t.names) && t.spelled[guess] && d.knownKey(t.names[guess])
			if !found {
				var ok bool
				if key, ok = d.key(); !ok {
					return false
				}
				found = guess < len(t.names) && t.named[guess] && t.names[guess] == str(key)
			}
			if !found {
				i, found = t.index[str(key)]
			}
			if found && t.flat != nil && t.flat[i] < 0 {
				guess = i + 1
				if d.ev != nil {
					d.ev.enterGroup(t.names[i])
				}
				if !d.group(t.fields[i], base) {
					return false
				}
				if d.ev != nil {
					d.ev.leave()
				}
			} else if found {
				guess = i + 1
				if t.flat != nil {
					d.b.Field(base + t.flat[i])
				} else {
					d.b.Field(base + i)
				}
				if d.ev != nil {
					d.ev.enter(t.names[i])
				}
				fails := d.fails
				d.inField = true
				nonNull, ok := d.value(t.fields[i], 0)
				if !ok {
					return false
				}
				if d.ev != nil {
					d.ev.leave()
				}
				failed := d.fails != fails
				d.fails = fails
				container := t.fields[i].kind == schema.Array || t.fields[i].kind == schema.Map
				if failed && container {
					// An element or map value that does not fit nulls the
					// whole array or map, as in Spark.
					d.b.Field(base + i)
					d.b.Null()
					nonNull = false
				}
				// A scalar that does not fit leaves what the field held,
				// as in Spark.
				if t.required && (!failed || container) {
					d.written[mark+i] = nonNull
				}
			} else if d.ev != nil {
				if !d.ev.unknown(d, t, key) {
					return false
				}
			} else if !d.skip(0) {
				return false
			}
			if !d.next('}') {
				return false
			}
			if d.data[d.pos-1] == '}' {
				break
			}
		}
	}
	if t.required {
		for i, f := range t.fields {
			if f.notNull && !d.written[mark+i] {
				d.corrupt = true
			}
		}
		d.written = d.written[:mark]
	}
	return true
}

// value parses the value at d.pos into the Builder's current position as
// type t: nonNull reports whether a non-null value was written, ok=false
// malformed JSON. A value that does not fit t is written as null and marks
// the document corrupt.
func (d *jsonDecoder) value(t *jtype, depth int) (nonNull, ok bool) {
	if d.pos >= len(d.data) {
		return false, false
	}
	if depth > maxDepth {
		return false, false
	}
	if t.kind == schema.Variant {
		return d.variant(depth)
	}
	switch c := d.data[d.pos]; {
	case c == 'n':
		if !d.literal("null") {
			return false, false
		}
		d.b.Null()
		return false, true
	case c == '{' && t.kind == schema.Struct:
		d.b.BeginStruct()
		if !d.object(t, 0) {
			return false, false
		}
		d.b.EndStruct()
		return true, true
	case c == '[' && t.kind == schema.Array:
		return true, d.array(t, depth)
	case c == '{' && t.kind == schema.Map:
		return true, d.mapping(t, depth)
	}
	if d.ev != nil {
		return d.ev.scalar(d, t, depth)
	}
	return d.scalar(t, depth)
}

// variant parses the value at d.pos, whatever it is, into a VARIANT, as
// Spark's from_json does for a VARIANT field: JSON null too becomes a
// VARIANT null rather than a SQL NULL. A value the VARIANT encoder refuses
// (an object with a duplicate key) is written as null and marks the
// document corrupt.
func (d *jsonDecoder) variant(depth int) (nonNull, ok bool) {
	start := d.pos
	if !d.skip(depth) {
		return false, false
	}
	return d.fit(writeVariant(d.b, &d.enc, d.data[start:d.pos]) == nil)
}

// array parses the array at d.pos into list type t.
func (d *jsonDecoder) array(t *jtype, depth int) bool {
	d.pos++ // '['
	d.b.BeginList()
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.b.EndList()
		return true
	}
	for n := 0; ; n++ {
		d.ws()
		if d.ev != nil {
			d.ev.enterElem(n)
		}
		d.inField = false
		if _, ok := d.value(t.elem, depth+1); !ok {
			return false
		}
		if d.ev != nil {
			d.ev.leave()
		}
		if !d.next(']') {
			return false
		}
		if d.data[d.pos-1] == ']' {
			d.b.EndList()
			return true
		}
	}
}

// mapping parses the object at d.pos into map type t. A key whose text does
// not parse as the key type drops its entry and marks the document corrupt.
func (d *jsonDecoder) mapping(t *jtype, depth int) bool {
	if ev := d.ev; ev != nil {
		// Map values decode as with an explicit schema (see infer.go).
		d.ev = nil
		defer func() { d.ev = ev }()
	}
	d.pos++ // '{'
	d.b.BeginMap()
	d.ws()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.b.EndMap()
		return true
	}
	for {
		d.ws()
		if d.pos >= len(d.data) || !d.isQuote(d.data[d.pos]) {
			return false
		}
		raw, esc, ok := d.str()
		if !ok {
			return false
		}
		d.ws()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return false
		}
		d.pos++
		d.ws()
		if d.mapKey(t.key, raw, esc) {
			d.inField = false
			if _, ok := d.value(t.value, depth+1); !ok {
				return false
			}
		} else {
			d.corrupt = true
			d.fails++
			if !d.skip(depth + 1) {
				return false
			}
		}
		if !d.next('}') {
			return false
		}
		if d.data[d.pos-1] == '}' {
			d.b.EndMap()
			return true
		}
	}
}

// mapKey writes a map key of type t from the raw text of a JSON object key
// (esc: it holds escapes) and reports whether it fit. A STRING key is the
// text; other types parse the text as if it were the JSON value it spells
// (`{"1": ...}` for an INT key, `{"true": ...}` for BOOLEAN).
func (d *jsonDecoder) mapKey(t *jtype, raw []byte, esc bool) bool {
	text := raw
	if esc {
		text = jsontext.AppendUnescaped(d.b.Alloc(len(raw))[:0], raw)
	}
	switch t.kind {
	case schema.String:
		d.b.Bytes(text)
		return true
	case schema.Binary, schema.Date, schema.Timestamp, schema.TimestampNTZ:
		return d.fromString(t, text)
	case schema.Boolean:
		switch string(text) {
		case "true", "false":
			d.b.Bool(text[0] == 't')
			return true
		}
		return false
	case schema.Byte, schema.Short, schema.Int, schema.Long, schema.Float, schema.Double, schema.Decimal:
		if f, ok := d.specialFloat(text); ok && (t.kind == schema.Float || t.kind == schema.Double) {
			return d.float(t, f)
		}
		if numberEnd(text, 0) != len(text) || len(text) == 0 {
			return false
		}
		return d.fromNumber(t, text)
	}
	return false // complex keys cannot be spelled as a JSON object key
}

// scalar parses a primitive value at d.pos as type t, or any value as a
// STRING's raw JSON text.
func (d *jsonDecoder) scalar(t *jtype, depth int) (nonNull, ok bool) {
	start := d.pos
	if c := d.data[d.pos]; c == 'N' || c == 'I' || c == '+' || c == '-' {
		if f, n := d.nonNumber(); n > 0 {
			return d.nonNumberAs(t, f, n)
		}
	}
	switch c := d.data[d.pos]; {

	case d.isQuote(c):
		raw, esc, ok := d.str()
		if !ok {
			return false, false
		}
		if t.kind == schema.String {
			if esc {
				raw = jsontext.AppendUnescaped(d.b.Alloc(len(raw))[:0], raw)
			}
			d.b.Bytes(raw)
			return true, true
		}
		if esc {
			d.scratch = jsontext.AppendUnescaped(d.scratch[:0], raw)
			raw = d.scratch
		}
		if d.lenient {
			return d.fit(d.lenientString(t, raw))
		}
		return d.fit(d.fromString(t, raw))
	case c == 't' || c == 'f':
		lit := "false"
		if c == 't' {
			lit = "true"
		}
		if !d.literal(lit) {
			return false, false
		}
		switch t.kind {
		case schema.Boolean:
			d.b.Bool(c == 't')
			return true, true
		case schema.String:
			d.b.Bytes(d.data[start:d.pos])
			return true, true
		}
		return d.fit(false)
	case c == '-' || (c >= '0' && c <= '9'):
		if isInteger(t.kind) && t.conv == ConvNone {
			if v, end := shortInt(d.data, d.pos); end > 0 {
				d.pos = end
				return d.fit(d.integer(t, v))
			}
		}
		end := numberTokenEnd(d.data, d.pos)
		if end < 0 {
			return false, false
		}
		d.pos = end
		if t.kind == schema.String {
			d.b.Bytes(d.number(d.data[start:end]))
			return true, true
		}
		return d.fit(d.fromNumber(t, d.data[start:end]))
	case c == '{' || c == '[':
		if !d.skip(depth) {
			return false, false
		}
		if t.kind == schema.String {
			d.b.Bytes(d.reserialize(d.b.Alloc(d.pos - start)[:0], d.data[start:d.pos]))
			return true, true
		}
		return d.fit(false)
	}
	return false, false
}

// nonNumberAs writes the non-numeric number f, n bytes at d.pos, as type
// t.
func (d *jsonDecoder) nonNumberAs(t *jtype, f float64, n int) (nonNull, ok bool) {
	d.pos += n
	switch t.kind {
	case schema.Float, schema.Double:
		return d.fit(d.float(t, f))
	case schema.String:
		// Jackson writes these numbers as strings.
		d.b.Bytes(quotedDouble(d.b.Alloc(12)[:0], f))
		return true, true
	}
	return d.fit(false)
}

// fit finishes a scalar: a value that did not fit is written as null and
// marks the document corrupt.
func (d *jsonDecoder) fit(ok bool) (nonNull, valid bool) {
	if !ok {
		d.corrupt = true
		d.fails++
		if !d.inField {
			d.b.Null()
		}
	}
	return ok, true
}
