package changelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
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
	convs  map[string]decode.Conversion
	// gen counts the schemas parsed, so that a part knows when to set
	// its columns' conversions again.
	gen int
	sc  decode.Scanner
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
	var found []byte
	_, err := t.sc.Members(obj, func(key, val []byte) error {
		if string(key) == name {
			found = val
			return errFound
		}
		return nil
	})
	if !errors.Is(err, errFound) {
		return nil
	}
	return found
}

// errFound stops a scan that found what it looks for.
var errFound = errors.New("found")

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
	t.fields, t.convs = map[string]*schema.Type{}, map[string]decode.Conversion{}
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

// setConvs sets the conversions of the top-level fields of the row
// images img decodes from the Connect schema of ev, when it is not the one
// seen at generation *gen.
func (t *eventTypes) setConvs(ev *event, img *decode.Image, gen *int) {
	if !t.schemaInclude || ev.schema == nil {
		return
	}
	t.parse(ev.schema)
	if *gen == t.gen {
		return
	}
	*gen = t.gen
	img.Convert(t.convs)
}

// connectType returns the column type of Connect schema s and how its JSON
// values convert; nil for a type without one.
func connectType(s *connectSchema) (*schema.Type, decode.Conversion) {
	k := func(kind schema.Kind) *schema.Type { return &schema.Type{Kind: kind} }
	switch s.Name {
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		return k(schema.Date), decode.ConvDays
	case "io.debezium.time.Timestamp":
		return k(schema.TimestampNTZ), decode.ConvMillis
	case "io.debezium.time.MicroTimestamp":
		return k(schema.TimestampNTZ), decode.ConvMicros
	case "io.debezium.time.NanoTimestamp":
		return k(schema.TimestampNTZ), decode.ConvNanos
	case "org.apache.kafka.connect.data.Timestamp":
		return k(schema.Timestamp), decode.ConvMillis
	case "io.debezium.time.ZonedTimestamp":
		return k(schema.Timestamp), decode.ConvNone
	case "org.apache.kafka.connect.data.Decimal":
		scale, err := strconv.Atoi(s.Parameters["scale"])
		if err != nil || scale < 0 || scale > 38 {
			return nil, decode.ConvNone
		}
		p := 38
		if v, err := strconv.Atoi(s.Parameters["connect.decimal.precision"]); err == nil && v >= 1 && v <= 38 && v >= scale {
			p = v
		}
		return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: scale}, decode.ConvDecimalBytes
	}
	switch s.Type {
	case "int8":
		return k(schema.Byte), decode.ConvNone
	case "int16":
		return k(schema.Short), decode.ConvNone
	case "int32":
		return k(schema.Int), decode.ConvNone
	case "int64":
		return k(schema.Long), decode.ConvNone
	case "float32":
		return k(schema.Float), decode.ConvNone
	case "float64":
		return k(schema.Double), decode.ConvNone
	case "boolean":
		return k(schema.Boolean), decode.ConvNone
	case "string":
		return k(schema.String), decode.ConvNone
	case "bytes":
		return k(schema.Binary), decode.ConvNone
	case "array":
		if s.Items != nil {
			if e, _ := connectType(s.Items); e != nil {
				return &schema.Type{Kind: schema.Array, Elem: e}, decode.ConvNone
			}
		}
	case "map":
		if s.Keys != nil && s.Values != nil {
			key, _ := connectType(s.Keys)
			val, _ := connectType(s.Values)
			if key != nil && val != nil && key.Kind == schema.String {
				return &schema.Type{Kind: schema.Map, Key: key, Value: val}, decode.ConvNone
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
			return &schema.Type{Kind: schema.Struct, Fields: fs}, decode.ConvNone
		}
	}
	return nil, decode.ConvNone
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
