package decode

import (
	"encoding/base64"
	"math"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
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
	b    *rows.Builder
	data []byte
	pos  int
	// corrupt is set when a value did not fit its field, or a NOT NULL
	// field ended up null.
	corrupt bool
	// scratch holds unescaped text that is not kept (keys, timestamps).
	scratch []byte
	// written tracks, per struct being decoded that has NOT NULL fields,
	// which fields hold a non-null value.
	written []bool
	// ev, set by an inferred part (infer.go), sees the fields and values
	// the schema does not take; nil for an explicit schema.
	ev *evolver
}

// decode parses one document whose object feeds the top-level fields
// [base, base+len(t.fields)) of the open row and reports whether the
// document is corrupt. On malformed JSON, or a document that is not an
// object, it leaves those fields null. Empty or all-blank input is not a
// document: the fields are null and it is not corrupt, as in Spark.
func (d *jsonDecoder) decode(t *jtype, base int, data []byte) bool {
	d.data, d.pos, d.corrupt, d.written = data, 0, false, d.written[:0]
	d.ws()
	if d.pos == len(data) {
		return false
	}
	if data[d.pos] == '{' && d.object(t, base) {
		if d.ws(); d.pos == len(data) {
			return d.corrupt
		}
	}
	d.b.DiscardFields(base, base+len(t.fields))
	return true
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
			if found {
				guess = i + 1
				d.b.Field(base + i)
				if d.ev != nil {
					d.ev.enter(t.names[i])
				}
				nonNull, ok := d.value(t.fields[i], 0)
				if !ok {
					return false
				}
				if d.ev != nil {
					d.ev.leave()
				}
				if t.required {
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
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, false
	}
	raw, esc, ok := d.str()
	if !ok {
		return nil, false
	}
	if esc {
		d.scratch = unescape(d.scratch[:0], raw)
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
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
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
			if _, ok := d.value(t.value, depth+1); !ok {
				return false
			}
		} else {
			d.corrupt = true
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
		text = unescape(d.b.Alloc(len(raw))[:0], raw)
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
		if f, ok := specialFloat(text); ok && (t.kind == schema.Float || t.kind == schema.Double) {
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
	switch c := d.data[d.pos]; {
	case c == '"':
		raw, esc, ok := d.str()
		if !ok {
			return false, false
		}
		if t.kind == schema.String {
			if esc {
				raw = unescape(d.b.Alloc(len(raw))[:0], raw)
			}
			d.b.Bytes(raw)
			return true, true
		}
		if esc {
			d.scratch = unescape(d.scratch[:0], raw)
			raw = d.scratch
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
		end := numberEnd(d.data, d.pos)
		if end < 0 {
			return false, false
		}
		d.pos = end
		if t.kind == schema.String {
			d.b.Bytes(d.data[start:end])
			return true, true
		}
		return d.fit(d.fromNumber(t, d.data[start:end]))
	case c == '{' || c == '[':
		if !d.skip(depth) {
			return false, false
		}
		if t.kind == schema.String {
			d.b.Bytes(d.compact(d.data[start:d.pos]))
			return true, true
		}
		return d.fit(false)
	}
	return false, false
}

// fit finishes a scalar: a value that did not fit is written as null and
// marks the document corrupt.
func (d *jsonDecoder) fit(ok bool) (nonNull, valid bool) {
	if !ok {
		d.corrupt = true
		d.b.Null()
	}
	return ok, true
}

// fromNumber writes a JSON number (its text) as type t; false if it does
// not fit.
func (d *jsonDecoder) fromNumber(t *jtype, text []byte) bool {
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
		// Seconds since the epoch, possibly fractional.
		u, neg, ok := parseDecimal(text, 18, 6)
		if ok {
			d.b.Int64(int64Of(u, neg))
		}
		return ok
	}
	return false
}

// fromString writes the (unescaped) content of a JSON string as type t;
// false if it does not fit.
func (d *jsonDecoder) fromString(t *jtype, s []byte) bool {
	switch t.kind {
	case schema.Float, schema.Double:
		f, ok := specialFloat(s)
		return ok && d.float(t, f)
	case schema.Decimal:
		return d.decimal(t, s)
	case schema.Binary:
		return d.base64(s)
	case schema.Date:
		dt, ok := parseDateTime(s)
		if ok {
			d.b.Int32(int32(dt.days))
		}
		return ok
	case schema.Timestamp:
		dt, ok := parseDateTime(s)
		if ok {
			d.b.Int64(dt.unixMicros())
		}
		return ok
	case schema.TimestampNTZ:
		dt, ok := parseDateTime(s)
		if ok && !dt.zone {
			d.b.Int64(dt.unixMicros())
		}
		return ok && !dt.zone
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
	switch {
	case !ok:
	case t.precision <= 9:
		d.b.Int32(int32(int64Of(u, neg)))
	case t.precision <= 18:
		d.b.Int64(int64Of(u, neg))
	default:
		buf := d.b.Alloc(t.size)
		putDecimal(buf, u, neg)
		d.b.Bytes(buf)
	}
	return ok
}

// base64 writes standard base64 (padded or not) as BINARY.
func (d *jsonDecoder) base64(s []byte) bool {
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	buf := d.b.Alloc(enc.DecodedLen(len(s)))
	n, err := enc.Decode(buf, s)
	if err != nil {
		return false
	}
	d.b.Bytes(buf[:n])
	return true
}

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

// str scans the string at d.pos (its opening quote) and returns its raw
// content, whether it holds escapes, and false if it is malformed: an
// unterminated string, a control character, a bad escape or invalid UTF-8
// (which Jackson rejects too).
func (d *jsonDecoder) str() (raw []byte, esc, ok bool) {
	s := d.data
	i := d.pos + 1
	start := i
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return s[start:i], esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(s) {
				return nil, false, false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) || !isHex4(s[i+2:i+6]) {
					return nil, false, false
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, false, false
			}
			i += n
		}
	}
	return nil, false, false
}

// isHex4 reports whether b is four hex digits.
func isHex4(b []byte) bool {
	for _, c := range b {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}

// hexVal returns the value of hex digit c, or -1.
func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescape appends the content of a validated JSON string (raw, between
// its quotes) to dst with escapes resolved; an unpaired surrogate becomes
// U+FFFD. The result is never longer than raw.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := hex4(raw[i+2:]); lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r) // lone surrogates encode as U+FFFD
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// hex4 returns the value of four validated hex digits.
func hex4(b []byte) rune {
	return rune(hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3]))
}

// skip validates and passes over the value at d.pos.
func (d *jsonDecoder) skip(depth int) bool {
	d.ws()
	if d.pos >= len(d.data) || depth > maxDepth {
		return false
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		_, _, ok := d.str()
		return ok
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		end := numberEnd(d.data, d.pos)
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

// compact returns the text of a validated JSON value without the
// whitespace between tokens, the form Spark gives a STRING field that holds
// a non-string value. It aliases v when there is nothing to remove.
func (d *jsonDecoder) compact(v []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inStr && c == '\\':
			i++ // the escaped byte cannot end the string
			if out != nil {
				out = append(out, c, v[i])
			}
			continue
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			if out == nil {
				out = append(d.b.Alloc(len(v))[:0], v[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return v
	}
	return out
}
