package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Types from change events. An inferred changelog part types a new column
// by the value it first sees (canal infer_schema_strategy AUTO, Debezium
// without schema_include), or by what the event says of the field:
//
//   - debezium_options.schema_include: the Connect schema of the event's
//     after (or before) struct. int8, int16, int32, int64, float32,
//     float64, boolean, string and bytes are TINYINT, SMALLINT, INT,
//     BIGINT, FLOAT, DOUBLE, BOOLEAN, STRING and BINARY (base64 in JSON);
//     io.debezium.time.Date and org.apache.kafka.connect.data.Date (days)
//     are DATE; io.debezium.time.Timestamp (ms), MicroTimestamp (µs) and
//     NanoTimestamp (ns), local date-times, are TIMESTAMP_NTZ;
//     io.debezium.time.ZonedTimestamp (ISO 8601 text) and
//     org.apache.kafka.connect.data.Timestamp (ms) are TIMESTAMP;
//     org.apache.kafka.connect.data.Decimal (base64 of the unscaled
//     two's-complement value) is DECIMAL(connect.decimal.precision, scale),
//     precision 38 when the schema has none; struct, array and map nest.
//     The numbers of the date and time types and the bytes of decimals are
//     read as such in columns of those types.
//   - canal infer_schema_strategy SQL_TYPE: the event's sqlType code
//     (java.sql.Types). MYSQL_TYPE: its mysqlType text, which also tells
//     tinyint(1) (BOOLEAN with tinyint1_as_boolean), unsigned integers (the
//     next wider type; bigint unsigned DECIMAL(20,0)), decimal(p,s) and
//     timestamp (TIMESTAMP_NTZ with mysql_timestamp_as_ntz, else TIMESTAMP
//     read as UTC) apart from datetime (TIMESTAMP_NTZ).
//
// Canal gives every value as a JSON string ("101"): its row images are
// parsed leniently, a string becoming the number, boolean ("1", "0",
// "true", "false"), decimal, date or timestamp its column's type says, and
// a BINARY column taking the string's characters as bytes (Canal writes
// bytes as ISO-8859-1 text).

// Conversions of JSON numbers and strings that the column's type alone does
// not tell (jtype.conv), from a Debezium Connect schema.
const (
	convNone = iota
	// convDays: a number of days since the epoch (DATE).
	convDays
	// convMillis, convMicros, convNanos: a number of milli-, micro- or
	// nanoseconds since the epoch (TIMESTAMP, TIMESTAMP_NTZ).
	convMillis
	convMicros
	convNanos
	// convDecimalBytes: base64 of a two's-complement big-endian unscaled
	// value (DECIMAL).
	convDecimalBytes
)

// eventTypes types the fields of change events' row images.
type eventTypes struct {
	// schemaInclude: from Debezium Connect schemas; else strategy is
	// canal's SQL_TYPE or MYSQL_TYPE.
	schemaInclude bool
	strategy      string
	tinyBool, ntz bool
	// text is a copy of the last Connect schema parsed, fields its after
	// struct's types and convs their conversions, by field name.
	text   []byte
	fields map[string]*schema.Type
	convs  map[string]uint8
	// gen counts the schemas parsed, so that a part knows when to set
	// its columns' conversions again.
	gen int
	sc  jsonDecoder
}

// newEventTypes returns the event typing of transformer tr, nil when its
// row images are typed by their values.
func newEventTypes(tr *spec.Transformer) *eventTypes {
	switch {
	case tr.Format == spec.FormatDebeziumJSON && tr.DebeziumOptions.SchemaIncluded():
		return &eventTypes{schemaInclude: true}
	case tr.Format == spec.FormatCanalJSON && tr.CanalOptions.Strategy() != spec.InferSchemaAuto:
		co := tr.CanalOptions
		return &eventTypes{strategy: co.Strategy(), tinyBool: co.TinyintAsBoolean(), ntz: co.TimestampAsNTZ()}
	}
	return nil
}

// field returns the type event ev gives top-level field name, nil when it
// says nothing of it.
func (t *eventTypes) field(ev *event, name string) *schema.Type {
	switch {
	case t.schemaInclude:
		t.parse(ev.schema)
		return t.fields[name]
	case t.strategy == spec.InferSchemaSQLType:
		raw := t.lookup(ev.sqlType, name)
		if code, err := strconv.Atoi(string(raw)); err == nil {
			return sqlType(code, t.ntz)
		}
	default:
		if s, _, ok := stringOf(t.lookup(ev.mysqlType, name)); ok {
			return MySQLType(string(s), t.tinyBool, t.ntz)
		}
	}
	return nil
}

// lookup returns the raw value of member name of JSON object obj, nil
// when it has none.
func (t *eventTypes) lookup(obj []byte, name string) []byte {
	if obj == nil {
		return nil
	}
	sc := &t.sc
	sc.data, sc.pos = obj, 1
	sc.ws()
	if sc.pos < len(obj) && obj[sc.pos] == '}' {
		return nil
	}
	for {
		key, ok := sc.key()
		if !ok {
			return nil
		}
		start := sc.pos
		if !sc.skip(1) {
			return nil
		}
		if string(key) == name {
			return obj[start:sc.pos]
		}
		if !sc.next('}') || obj[sc.pos-1] == '}' {
			return nil
		}
	}
}

// connectSchema is a Kafka Connect schema as the JSON converter writes it.
type connectSchema struct {
	Type       string            `json:"type"`
	Name       string            `json:"name"`
	Field      string            `json:"field"`
	Optional   bool              `json:"optional"`
	Parameters map[string]string `json:"parameters"`
	Fields     []connectSchema   `json:"fields"`
	Items      *connectSchema    `json:"items"`
	Keys       *connectSchema    `json:"keys"`
	Values     *connectSchema    `json:"values"`
}

// parse reads the Connect schema text of an event, unless it is the one
// read last, into t.fields and t.convs.
func (t *eventTypes) parse(text []byte) {
	if text == nil || bytes.Equal(text, t.text) && t.fields != nil {
		return
	}
	t.text = append(t.text[:0], text...)
	t.gen++
	t.fields, t.convs = map[string]*schema.Type{}, map[string]uint8{}
	var s connectSchema
	if json.Unmarshal(text, &s) != nil {
		return
	}
	for _, name := range []string{"before", "after"} {
		for _, f := range s.Fields {
			if f.Field != name || f.Type != "struct" {
				continue
			}
			for i := range f.Fields {
				g := &f.Fields[i]
				if typ, conv := connectType(g); typ != nil {
					t.fields[g.Field], t.convs[g.Field] = typ, conv
				}
			}
		}
	}
}

// setConvs sets the conversions of the top-level fields of struct j, the
// row image's columns, from the Connect schema of ev when it is not the
// one seen at generation *gen.
func (t *eventTypes) setConvs(ev *event, j *jtype, gen *int) {
	if !t.schemaInclude || ev.schema == nil {
		return
	}
	t.parse(ev.schema)
	if *gen == t.gen {
		return
	}
	*gen = t.gen
	for i, name := range j.names {
		j.fields[i].conv = t.convs[name]
	}
}

// connectType returns the column type of Connect schema s and how its JSON
// values convert; nil for a type without one.
func connectType(s *connectSchema) (*schema.Type, uint8) {
	k := func(kind schema.Kind) *schema.Type { return &schema.Type{Kind: kind} }
	switch s.Name {
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		return k(schema.Date), convDays
	case "io.debezium.time.Timestamp":
		return k(schema.TimestampNTZ), convMillis
	case "io.debezium.time.MicroTimestamp":
		return k(schema.TimestampNTZ), convMicros
	case "io.debezium.time.NanoTimestamp":
		return k(schema.TimestampNTZ), convNanos
	case "org.apache.kafka.connect.data.Timestamp":
		return k(schema.Timestamp), convMillis
	case "io.debezium.time.ZonedTimestamp":
		return k(schema.Timestamp), convNone
	case "org.apache.kafka.connect.data.Decimal":
		scale, err := strconv.Atoi(s.Parameters["scale"])
		if err != nil || scale < 0 || scale > 38 {
			return nil, convNone
		}
		p := 38
		if v, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil && v >= 1 && v <= 38 && v >= scale {
			p = v
		}
		return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: scale}, convDecimalBytes
	}
	switch s.Type {
	case "int8":
		return k(schema.Byte), convNone
	case "int16":
		return k(schema.Short), convNone
	case "int32":
		return k(schema.Int), convNone
	case "int64":
		return k(schema.Long), convNone
	case "float32":
		return k(schema.Float), convNone
	case "float64":
		return k(schema.Double), convNone
	case "boolean":
		return k(schema.Boolean), convNone
	case "string":
		return k(schema.String), convNone
	case "bytes":
		return k(schema.Binary), convNone
	case "array":
		if s.Items != nil {
			if e, _ := connectType(s.Items); e != nil {
				return &schema.Type{Kind: schema.Array, Elem: e}, convNone
			}
		}
	case "map":
		if s.Keys != nil && s.Values != nil {
			key, _ := connectType(s.Keys)
			val, _ := connectType(s.Values)
			if key != nil && val != nil && key.Kind == schema.String {
				return &schema.Type{Kind: schema.Map, Key: key, Value: val}, convNone
			}
		}
	case "struct":
		var fs []schema.Field
		for i := range s.Fields {
			if t, _ := connectType(&s.Fields[i]); t != nil {
				fs = append(fs, schema.Field{Name: s.Fields[i].Field, Type: t, Nullable: true})
			}
		}
		if len(fs) > 0 {
			return &schema.Type{Kind: schema.Struct, Fields: fs}, convNone
		}
	}
	return nil, convNone
}

// sqlType returns the column type of java.sql.Types code, nil for none;
// ntz types TIMESTAMP (93) as TIMESTAMP_NTZ.
func sqlType(code int, ntz bool) *schema.Type {
	k := func(kind schema.Kind) *schema.Type { return &schema.Type{Kind: kind} }
	switch code {
	case -7, 16: // BIT, BOOLEAN
		return k(schema.Boolean)
	case -6: // TINYINT
		return k(schema.Byte)
	case 5: // SMALLINT
		return k(schema.Short)
	case 4: // INTEGER
		return k(schema.Int)
	case -5: // BIGINT
		return k(schema.Long)
	case 7: // REAL
		return k(schema.Float)
	case 6, 8: // FLOAT, DOUBLE
		return k(schema.Double)
	case 2, 3: // NUMERIC, DECIMAL: no precision in the code; Spark's default
		return &schema.Type{Kind: schema.Decimal, Precision: 38, Scale: 18}
	case 91: // DATE
		return k(schema.Date)
	case 93: // TIMESTAMP
		if ntz {
			return k(schema.TimestampNTZ)
		}
		return k(schema.Timestamp)
	case -2, -3, -4, 2004: // BINARY, VARBINARY, LONGVARBINARY, BLOB
		return k(schema.Binary)
	}
	return k(schema.String) // CHAR, VARCHAR, TIME, CLOB and the rest
}

// MySQLType returns the column type of a MySQL column type as Canal's
// mysqlType and MySQL DDL spell it ("int(11)", "bigint(20) unsigned",
// "decimal(10,2)", "tinyint(1)", "timestamp"): tinyBool makes tinyint(1)
// BOOLEAN, ntz makes timestamp TIMESTAMP_NTZ. A type it does not know is
// STRING.
func MySQLType(text string, tinyBool, ntz bool) *schema.Type {
	k := func(kind schema.Kind) *schema.Type { return &schema.Type{Kind: kind} }
	text = strings.ToLower(strings.TrimSpace(text))
	base, args := text, ""
	if i := strings.IndexAny(text, "( "); i >= 0 {
		base = text[:i]
		if j := strings.IndexByte(text, ')'); text[i] == '(' && j > i {
			args = text[i+1 : j]
		}
	}
	unsigned := strings.Contains(text, "unsigned")
	switch base {
	case "tinyint":
		switch {
		case args == "1" && tinyBool:
			return k(schema.Boolean)
		case unsigned:
			return k(schema.Short)
		}
		return k(schema.Byte)
	case "smallint":
		if unsigned {
			return k(schema.Int)
		}
		return k(schema.Short)
	case "mediumint":
		return k(schema.Int)
	case "int", "integer":
		if unsigned {
			return k(schema.Long)
		}
		return k(schema.Int)
	case "bigint":
		if unsigned {
			return &schema.Type{Kind: schema.Decimal, Precision: 20}
		}
		return k(schema.Long)
	case "bit":
		if args == "" || args == "1" {
			return k(schema.Boolean)
		}
		return k(schema.Long)
	case "bool", "boolean":
		return k(schema.Boolean)
	case "float":
		return k(schema.Float)
	case "double", "real":
		return k(schema.Double)
	case "decimal", "numeric", "dec", "fixed":
		p, s := 10, 0
		if args != "" {
			ps := strings.SplitN(args, ",", 2)
			p, _ = strconv.Atoi(strings.TrimSpace(ps[0]))
			if len(ps) == 2 {
				s, _ = strconv.Atoi(strings.TrimSpace(ps[1]))
			}
		}
		p = min(max(p, 1), 38)
		s = min(max(s, 0), p)
		return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: s}
	case "date":
		return k(schema.Date)
	case "datetime":
		return k(schema.TimestampNTZ)
	case "timestamp":
		if ntz {
			return k(schema.TimestampNTZ)
		}
		return k(schema.Timestamp)
	case "year":
		return k(schema.Int)
	case "binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob":
		return k(schema.Binary)
	}
	return k(schema.String)
}

// lenientString writes s, the contents of a JSON string of a Canal row
// image, as type t: false if it does not fit.
func (d *jsonDecoder) lenientString(t *jtype, s []byte) bool {
	switch t.kind {
	case schema.Boolean:
		switch string(s) {
		case "true", "TRUE", "True":
			d.b.Bool(true)
			return true
		case "false", "FALSE", "False":
			d.b.Bool(false)
			return true
		}
		// tinyint(1) and BIT hold any integer: not zero is true, as JDBC
		// and Debezium read them.
		n, ok := parseInt(s, math.MinInt64, math.MaxInt64)
		if !ok {
			return false
		}
		d.b.Bool(n != 0)
		return true
	case schema.Byte, schema.Short, schema.Int, schema.Long, schema.Float, schema.Double:
		if numberEnd(s, 0) != len(s) || len(s) == 0 {
			return false
		}
		return d.fromNumber(t, s)
	case schema.Decimal:
		return d.decimal(t, s)
	case schema.Binary:
		// ISO-8859-1 text: each character is a byte.
		buf := d.b.Alloc(len(s))[:0]
		for _, r := range string(s) {
			if r > 0xff {
				return false
			}
			buf = append(buf, byte(r))
		}
		d.b.Bytes(buf)
		return true
	}
	return d.fromString(t, s)
}

// converted writes JSON number text as type t by conversion t.conv; false
// if it does not fit.
func (d *jsonDecoder) converted(t *jtype, text []byte) bool {
	if !isIntegral(text) {
		return false
	}
	v, ok := parseInt(text, math.MinInt64, math.MaxInt64)
	if !ok {
		return false
	}
	switch {
	case t.conv == convDays && t.kind == schema.Date:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return false
		}
		d.b.Int32(int32(v))
		return true
	case t.kind != schema.Timestamp && t.kind != schema.TimestampNTZ:
		return false
	case t.conv == convMillis:
		if v < math.MinInt64/1000 || v > math.MaxInt64/1000 {
			return false
		}
		v *= 1000
	case t.conv == convNanos:
		v /= 1000
	case t.conv != convMicros:
		return false
	}
	d.b.Int64(v)
	return true
}

// decimalBytes writes base64 text of a two's-complement big-endian
// unscaled value as DECIMAL t; false if it does not fit t's precision.
func (d *jsonDecoder) decimalBytes(t *jtype, s []byte) bool {
	buf := d.b.Alloc(len(s))
	n, err := base64.StdEncoding.Decode(buf, s)
	if err != nil || n == 0 || n > 16 {
		return false
	}
	raw := buf[:n]
	neg := raw[0]&0x80 != 0
	var u uint128
	for _, c := range raw {
		if neg {
			c = ^c
		}
		u = uint128{u.hi<<8 | u.lo>>56, u.lo<<8 | uint64(c)}
	}
	if neg {
		u.lo, u.hi = addCarry(u.lo, u.hi) // magnitude of ^x is x+1
	}
	if !u.less(pow10[t.precision]) {
		return false
	}
	d.unscaled(t, u, neg)
	return true
}
