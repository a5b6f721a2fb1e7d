package decode

import (
	"math"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
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

// maxDepth bounds the nesting of skipped JSON values, so that hostile input
// cannot exhaust the stack; deeper documents are malformed.
const maxDepth = 1000

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
	named []bool
	// elem of an ARRAY; key and value of a MAP.
	elem, key, value *jtype
	// flat and cols describe the top-level struct of a part with
	// flattened columns, and its groups: see flatten.go. flat is nil
	// otherwise; cols is the root's number of columns.
	flat []int
	cols int
	// conv says how a JSON number or string becomes a value of the type
	// where the type alone does not tell (changelog_types.go).
	conv uint8
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
			j.names = append(j.names, f.Name)
			j.named = append(j.named, j.index[f.Name] == i)
		}
	case schema.Array:
		j.elem = compileJSON(t.Elem, false)
	case schema.Map:
		j.key, j.value = compileJSON(t.Key, true), compileJSON(t.Value, false)
	}
	return j
}

// jsonDecoder parses JSON documents into a Builder. It is reused across
// records and is not safe for concurrent use.
type jsonDecoder struct {
	b *rows.Builder
	// singleQuotes accepts 'single-quoted' strings and names, nonNumeric
	// the numbers NaN, Infinity, +Infinity and -Infinity, as Spark's
	// allowSingleQuotes and allowNonNumericNumbers.
	singleQuotes, nonNumeric bool
	// timestamps and dates are the compiled timestamp_format and
	// date_format, nil for Spark's lenient parsing; sqlTimestamps says
	// timestamp_format is "SQL", which the lenient parser reads once the
	// text has its shape (see sqlTimestamp).
	timestamps, dates *sparktime.Pattern
	sqlTimestamps     bool
	// lenient parses strings into numbers, booleans and the other types
	// as Canal's row images need (see [jsonDecoder.lenientString]).
	lenient bool

	data []byte
	pos  int
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
	// scratch holds unescaped text that is not kept (keys, timestamps).
	scratch []byte
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
	d := jsonDecoder{b: b, singleQuotes: o.SingleQuotes(), nonNumeric: o.NonNumericNumbers(),
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

// isQuote reports whether c opens a string: a double quote, or a single
// quote when single quotes are allowed.
func (d *jsonDecoder) isQuote(c byte) bool {
	return c == '"' || (c == '\'' && d.singleQuotes)
}

// ws skips JSON whitespace.
func (d *jsonDecoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
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
			key, ok := d.key()
			if !ok {
				return false
			}
			i, found := guess, guess < len(t.names) && t.named[guess] && t.names[guess] == str(key)
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

// key parses `"name"` and the colon after it, and returns the unescaped
// name (valid until the next key).
func (d *jsonDecoder) key() ([]byte, bool) {
	d.ws()
	if d.pos >= len(d.data) || !d.isQuote(d.data[d.pos]) {
		return nil, false
	}
	raw, esc, ok := d.str()
	if !ok {
		return nil, false
	}
	if esc {
		d.scratch = jsontext.AppendUnescaped(d.scratch[:0], raw)
		raw = d.scratch
	}
	d.ws()
	if d.pos >= len(d.data) || d.data[d.pos] != ':' {
		return nil, false
	}
	d.pos++
	d.ws()
	return raw, true
}

// next consumes the ',' between members or elements or the closing byte
// end; false means neither came.
func (d *jsonDecoder) next(end byte) bool {
	d.ws()
	if d.pos >= len(d.data) {
		return false
	}
	c := d.data[d.pos]
	d.pos++
	return c == ',' || c == end
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

// fromNumber writes a JSON number (its text) as type t; false if it does
// not fit.
func (d *jsonDecoder) fromNumber(t *jtype, text []byte) bool {
	if t.conv != convNone && t.conv != convDecimalBytes {
		return d.converted(t, text)
	}
	integral := isIntegral(text)
	switch t.kind {
	case schema.Byte:
		return integral && d.int32(parseInt(text, math.MinInt8, math.MaxInt8))
	case schema.Short:
		return integral && d.int32(parseInt(text, math.MinInt16, math.MaxInt16))
	case schema.Int:
		return integral && d.int32(parseInt(text, math.MinInt32, math.MaxInt32))
	case schema.Long:
		if !integral {
			return false
		}
		v, ok := parseInt(text, math.MinInt64, math.MaxInt64)
		if ok {
			d.b.Int64(v)
		}
		return ok
	case schema.Float, schema.Double:
		bitSize := 64
		if t.kind == schema.Float {
			bitSize = 32
		}
		f, ok := parseFloat(text, bitSize)
		return ok && d.float(t, f)
	case schema.Decimal:
		return d.decimal(t, text)
	case schema.Timestamp:
		// Whole seconds since the epoch, as Spark reads an integer.
		v, ok := parseInt(text, math.MinInt64/1_000_000, math.MaxInt64/1_000_000)
		if ok && integral {
			d.b.Int64(v * 1_000_000)
		}
		return ok && integral
	}
	return false
}

// fromString writes the (unescaped) content of a JSON string as type t;
// false if it does not fit.
func (d *jsonDecoder) fromString(t *jtype, s []byte) bool {
	switch t.kind {
	case schema.Float, schema.Double:
		f, ok := d.specialFloat(s)
		return ok && d.float(t, f)
	case schema.Decimal:
		if t.conv == convDecimalBytes {
			return d.decimalBytes(t, s)
		}
		return d.decimal(t, s)
	case schema.Binary:
		return d.base64(s)
	case schema.Date:
		var days int64
		var ok bool
		if d.dates != nil {
			var t sparktime.Time
			t, ok = d.dates.Parse(s)
			days = t.Days
		} else {
			days, ok = sparktime.ParseDate(s)
		}
		ok = ok && days >= math.MinInt32 && days <= math.MaxInt32
		if ok {
			d.b.Int32(int32(days))
		}
		return ok
	case schema.Timestamp:
		var t sparktime.Time
		var ok bool
		switch {
		case d.timestamps != nil:
			t, ok = d.timestamps.Parse(s)
		case d.sqlTimestamps && !sqlTimestamp(s):
		default:
			t, ok = sparktime.ParseTimestamp(s)
		}
		if ok {
			d.b.Int64(t.UnixMicros())
		}
		return ok
	case schema.TimestampNTZ:
		// Spark's timestampNTZFormat, not timestampFormat, applies.
		t, ok := sparktime.ParseTimestampNTZ(s)
		if ok {
			d.b.Int64(t.UnixMicros())
		}
		return ok
	}
	return false
}

// int32 writes v when ok.
func (d *jsonDecoder) int32(v int64, ok bool) bool {
	if ok {
		d.b.Int32(int32(v))
	}
	return ok
}

// float writes f as a FLOAT or DOUBLE.
func (d *jsonDecoder) float(t *jtype, f float64) bool {
	if t.kind == schema.Float {
		d.b.Float(float32(f))
	} else {
		d.b.Double(f)
	}
	return true
}

// decimal writes decimal text as t's unscaled value.
func (d *jsonDecoder) decimal(t *jtype, text []byte) bool {
	u, neg, ok := parseDecimal(text, t.precision, t.scale)
	if ok {
		d.unscaled(t, u, neg)
	}
	return ok
}

// unscaled writes the unscaled value u (negated when neg), which fits t's
// precision, as DECIMAL t: an INT32, an INT64 or t.size bytes of two's
// complement, as the precision says.
func (d *jsonDecoder) unscaled(t *jtype, u uint128, neg bool) {
	switch {
	case t.precision <= 9:
		d.b.Int32(int32(int64Of(u, neg)))
	case t.precision <= 18:
		d.b.Int64(int64Of(u, neg))
	default:
		buf := d.b.Alloc(t.size)
		putDecimal(buf, u, neg)
		d.b.Bytes(buf)
	}
}

// base64 writes standard base64 as BINARY, read the way Jackson's MIME
// variant (Spark's) reads it: groups of four characters, the last one or
// two of a group may be '=' padding, which is required; whitespace and
// control characters are skipped before a group but refused inside one
// ("AQ\nID" is not base64); a group may follow a padded one, and the bits
// padding drops are not checked.
func (d *jsonDecoder) base64(s []byte) bool {
	buf := d.b.Alloc(len(s) / 4 * 3)
	n := 0
	for i := 0; ; i += 4 {
		for i < len(s) && s[i] <= ' ' {
			i++
		}
		if i == len(s) {
			break
		}
		if len(s)-i < 4 {
			return false
		}
		a, b, c, e := base64Values[s[i]], base64Values[s[i+1]], base64Values[s[i+2]], base64Values[s[i+3]]
		if a < 0 || b < 0 {
			return false
		}
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(max(c, 0))<<6 | uint32(max(e, 0))
		switch {
		case c >= 0 && e >= 0:
			buf[n], buf[n+1], buf[n+2] = byte(v>>16), byte(v>>8), byte(v)
			n += 3
		case c >= 0 && e == base64Pad:
			buf[n], buf[n+1] = byte(v>>16), byte(v>>8)
			n += 2
		case c == base64Pad && e == base64Pad:
			buf[n] = byte(v >> 16)
			n++
		default:
			return false
		}
	}
	d.b.Bytes(buf[:n])
	return true
}

// base64Pad is the value base64Values gives '='.
const base64Pad = -2

// base64Values maps a byte to its value in the standard base64 alphabet,
// base64Pad for '=' and -1 for the others.
var base64Values = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = int8(i)
	}
	t['='] = base64Pad
	return t
}()

// isIntegral reports whether a JSON number has neither fraction nor
// exponent.
func isIntegral(text []byte) bool {
	for _, c := range text {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// literal consumes lit (true, false, null).
func (d *jsonDecoder) literal(lit string) bool {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return false
	}
	d.pos += len(lit)
	return true
}

// numberEnd returns the end of the JSON number starting at s[i], or -1.
func numberEnd(s []byte, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return -1
		}
	}
	return i
}

// maxNumberDigits is how many digits (of the integer part, fraction and
// exponent together) a number of a document may have: Jackson's default
// maximum number length, which Spark keeps. Jackson refuses a longer number
// as it reads it, so Spark finds the whole record corrupt, wherever the
// number is and whatever the type of its field.
const maxNumberDigits = 1000

// numberTokenEnd is [numberEnd] for a number of a document, -1 also when
// it has more than maxNumberDigits digits.
func numberTokenEnd(s []byte, i int) int {
	end := numberEnd(s, i)
	if end-i <= maxNumberDigits {
		return end
	}
	digits := 0
	for _, c := range s[i:end] {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	if digits > maxNumberDigits {
		return -1
	}
	return end
}

// str scans the string at d.pos (its opening quote, double or single) and
// returns its raw content, whether [jsontext.AppendUnescaped] must rewrite
// it (it holds escapes or invalid UTF-8, which Spark's UTF-8 reader
// replaces), and false if it is malformed: an unterminated string, a
// control character or a bad escape.
func (d *jsonDecoder) str() (raw []byte, esc, ok bool) {
	s := d.data
	quote := s[d.pos]
	i := d.pos + 1
	start := i
	for i < len(s) {
		c := s[i]
		switch {
		case c == quote:
			d.pos = i + 1
			return s[start:i], esc, true
		case c == '\\':
			esc = true
			n := jsontext.EscapeLen(s[i:], d.singleQuotes)
			if n == 0 {
				return nil, false, false
			}
			i += n
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n <= 1 {
				esc = true
			}
			i += n
		}
	}
	return nil, false, false
}

// skip validates and passes over the value at d.pos.
func (d *jsonDecoder) skip(depth int) bool {
	d.ws()
	if d.pos >= len(d.data) || depth > maxDepth {
		return false
	}
	if _, n := d.nonNumber(); n > 0 {
		d.pos += n
		return true
	}
	switch c := d.data[d.pos]; {
	case d.isQuote(c):
		_, _, ok := d.str()
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		end := numberTokenEnd(d.data, d.pos)
		d.pos = max(end, d.pos)
		return end >= 0
	case c == '[':
		d.pos++
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return true
		}
		for {
			if !d.skip(depth+1) || !d.next(']') {
				return false
			}
			if d.data[d.pos-1] == ']' {
				return true
			}
		}
	case c == '{':
		d.pos++
		d.ws()
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			return true
		}
		for {
			if _, ok := d.key(); !ok || !d.skip(depth+1) || !d.next('}') {
				return false
			}
			if d.data[d.pos-1] == '}' {
				return true
			}
		}
	}
	return false
}

// nonNumber matches the numbers Spark's allowNonNumericNumbers accepts at
// d.pos (NaN, Infinity, +Infinity, -Infinity): their value and length, 0
// when none is there or the option is off.
func (d *jsonDecoder) nonNumber() (float64, int) {
	rest := d.data[d.pos:]
	if !d.nonNumeric || (rest[0] != 'N' && rest[0] != 'I' && rest[0] != '+' && (rest[0] != '-' || len(rest) < 2 || rest[1] != 'I')) {
		return 0, 0
	}
	for _, nn := range nonNumbers {
		if len(rest) >= len(nn.text) && string(rest[:len(nn.text)]) == nn.text {
			return nn.value, len(nn.text)
		}
	}
	return 0, 0
}

// nonNumbers are the unquoted numbers of allowNonNumericNumbers.
var nonNumbers = []struct {
	text  string
	value float64
}{{"NaN", math.NaN()}, {"Infinity", math.Inf(1)}, {"+Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}}

// specialFloat parses the strings Spark accepts for FLOAT and DOUBLE
// values that JSON numbers cannot express, when allowNonNumericNumbers is
// on.
func (d *jsonDecoder) specialFloat(s []byte) (float64, bool) {
	if !d.nonNumeric {
		return 0, false
	}
	switch string(s) {
	case "NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity", "+INF":
		return math.Inf(1), true
	case "-Infinity", "-INF":
		return math.Inf(-1), true
	}
	return 0, false
}

// number returns the text Spark gives a STRING field that holds the JSON
// number text: an integer as written ("-0" is "0"), any other number as
// Java writes the double it parses to.
func (d *jsonDecoder) number(text []byte) []byte {
	if isIntegral(text) {
		if string(text) == "-0" {
			return text[1:]
		}
		return text
	}
	f, _ := parseFloat(text, 64)
	if math.IsInf(f, 0) {
		// Jackson writes these numbers as strings.
		return quotedDouble(d.b.Alloc(12)[:0], f)
	}
	return appendJavaDouble(d.b.Alloc(24)[:0], f)
}

// reserialize appends a validated JSON object or array to dst as Spark
// gives it to a STRING field: written again by Jackson, without the
// whitespace between tokens, strings with their escapes resolved and
// written back with Jackson's escapes, numbers as [jsonDecoder.number]
// writes them.
func (d *jsonDecoder) reserialize(dst, v []byte) []byte {
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for v[j] != c {
				if v[j] == '\\' {
					j++
				}
				j++
			}
			d.scratch = jsontext.AppendUnescaped(d.scratch[:0], v[i+1:j])
			dst = jsontext.AppendQuoted(dst, d.scratch)
			i = j + 1
		case c == 'N' || c == 'I' || c == '+' || (c == '-' && i+1 < len(v) && v[i+1] == 'I'):
			n := 1
			for _, nn := range nonNumbers {
				if len(v)-i >= len(nn.text) && string(v[i:i+len(nn.text)]) == nn.text {
					dst = quotedDouble(dst, nn.value)
					n = len(nn.text)
					break
				}
			}
			i += n
		case c == '-' || (c >= '0' && c <= '9'):
			end := max(numberEnd(v, i), i+1)
			dst = append(dst, d.number(v[i:end])...)
			i = end
		default: // punctuation, true, false, null
			dst = append(dst, c)
			i++
		}
	}
	return dst
}
