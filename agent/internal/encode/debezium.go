package encode

import (
	"fmt"
	"strconv"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// debezium writes Debezium change events:
//
//	{"before": {...}|null, "after": {...}|null,
//	 "source": {"db": "inventory", "table": "customers", "ts_ms": 1700000000000},
//	 "op": "c", "ts_ms": 1700000000123}
//
// c, r and u carry the row in after, d in before; an update's before is
// its before image when the row has one (only the changed fields with
// keep_changed_fields_only), else null. With include_schema the event is
// {"schema": <Connect schema>, "payload": <event>}.
type debezium struct {
	options
	// schemas keeps the Connect schema of the last table id and fields.
	schemas fieldsMemo[[]byte]
}

// Value appends r's change event to dst.
func (e *debezium) Value(dst []byte, r *Row) ([]byte, error) {
	connect := e.schema
	if connect {
		dst = append(dst, `{"schema":`...)
		id := TableID(r)
		dst = append(dst, e.schemas.get(r.Fields, id, func() []byte { return envelopeSchema(nil, id, r.Fields) })...)
		dst = append(dst, `,"payload":`...)
	}
	var err error
	dst = append(dst, `{"before":`...)
	switch {
	case r.Op == 'd':
		dst, err = appendObject(dst, r.Fields, r.Values, nil, connect)
	case r.Op == 'u' && r.Before != nil:
		var idx []int
		if e.changedOnly {
			idx = changed(r)
		}
		dst, err = appendObject(dst, r.Fields, r.Before, idx, connect)
	default:
		dst = append(dst, "null"...)
	}
	if err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	dst = append(dst, `,"after":`...)
	if r.Op == 'd' {
		dst = append(dst, "null"...)
	} else if dst, err = appendObject(dst, r.Fields, r.Values, nil, connect); err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	dst = append(dst, `,"source":{"db":`...)
	dst = appendNullableString(dst, r.DB)
	dst = append(dst, `,"table":`...)
	dst = jsontext.AppendQuotedString(dst, e.table(r))
	dst = append(dst, `,"ts_ms":`...)
	if r.TS.IsZero() {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, r.TS.UnixMilli(), 10)
	}
	dst = append(dst, `},"op":`...)
	dst = jsontext.AppendQuotedString(dst, string(r.Op))
	dst = append(dst, `,"ts_ms":`...)
	dst = strconv.AppendInt(dst, e.now().UnixMilli(), 10)
	dst = append(dst, '}')
	if connect {
		dst = append(dst, '}')
	}
	return dst, nil
}

// appendNullableString appends s, or null for "".
func appendNullableString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return jsontext.AppendQuotedString(dst, s)
}

// envelopeSchema appends the Connect schema of the events of the table
// with id name and image fields, named as Debezium names them
// ("<table id>.Envelope", "<table id>.Value").
func envelopeSchema(dst []byte, name string, fields []schema.Field) []byte {
	row := func(dst []byte, field string) []byte {
		dst = append(dst, `{"type":"struct","fields":`...)
		dst = appendFieldSchemas(dst, fields)
		dst = append(dst, `,"optional":true,"name":`...)
		dst = jsontext.AppendQuotedString(dst, name+".Value")
		dst = append(dst, `,"field":`...)
		dst = jsontext.AppendQuotedString(dst, field)
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"struct","fields":[`...)
	dst = row(dst, "before")
	dst = append(dst, ',')
	dst = row(dst, "after")
	dst = append(dst, `,{"type":"struct","fields":[`+
		`{"type":"string","optional":true,"field":"db"},`+
		`{"type":"string","optional":true,"field":"table"},`+
		`{"type":"int64","optional":true,"field":"ts_ms"}],`+
		`"optional":false,"name":"io.debezium.connector.source","field":"source"},`+
		`{"type":"string","optional":false,"field":"op"},`+
		`{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":`...)
	dst = jsontext.AppendQuotedString(dst, name+".Envelope")
	return append(dst, '}')
}

// appendFieldSchemas appends the Connect schemas of fields as a JSON
// array, each with its "field" name.
func appendFieldSchemas(dst []byte, fields []schema.Field) []byte {
	dst = append(dst, '[')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendConnectSchema(dst, f.Type, f.Nullable, f.Name)
	}
	return append(dst, ']')
}

// appendConnectSchema appends the Connect schema of type t; field is the
// member name of a struct field, "" for an element, key or value.
func appendConnectSchema(dst []byte, t *schema.Type, optional bool, field string) []byte {
	dst = append(dst, `{"type":`...)
	switch t.Kind {
	case schema.Boolean:
		dst = append(dst, `"boolean"`...)
	case schema.Byte:
		dst = append(dst, `"int8"`...)
	case schema.Short:
		dst = append(dst, `"int16"`...)
	case schema.Int:
		dst = append(dst, `"int32"`...)
	case schema.Long:
		dst = append(dst, `"int64"`...)
	case schema.Float:
		dst = append(dst, `"float32"`...)
	case schema.Double:
		dst = append(dst, `"float64"`...)
	case schema.Binary:
		dst = append(dst, `"bytes"`...)
	case schema.Decimal:
		dst = fmt.Appendf(dst, `"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,`+
			`"parameters":{"scale":"%d","connect.decimal.precision":"%d"}`, t.Scale, t.Precision)
	case schema.Date:
		dst = append(dst, `"int32","name":"io.debezium.time.Date","version":1`...)
	case schema.Timestamp:
		dst = append(dst, `"string","name":"io.debezium.time.ZonedTimestamp","version":1`...)
	case schema.TimestampNTZ:
		dst = append(dst, `"int64","name":"io.debezium.time.MicroTimestamp","version":1`...)
	case schema.Variant:
		dst = append(dst, `"string","name":"io.debezium.data.Json","version":1`...)
	case schema.Array:
		dst = append(dst, `"array","items":`...)
		dst = appendConnectSchema(dst, t.Elem, true, "")
	case schema.Map:
		dst = append(dst, `"map","keys":`...)
		dst = appendConnectSchema(dst, t.Key, false, "")
		dst = append(dst, `,"values":`...)
		dst = appendConnectSchema(dst, t.Value, true, "")
	case schema.Struct:
		dst = append(dst, `"struct","fields":`...)
		dst = appendFieldSchemas(dst, t.Fields)
	default:
		dst = append(dst, `"string"`...)
	}
	dst = append(dst, `,"optional":`...)
	dst = strconv.AppendBool(dst, optional)
	if field != "" {
		dst = append(dst, `,"field":`...)
		dst = jsontext.AppendQuotedString(dst, field)
	}
	return append(dst, '}')
}
