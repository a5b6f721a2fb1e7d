package changelog

import (
	"context"
	"fmt"
	"math"
	"regexp"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Changelog formats (DEBEZIUM_JSON, CANAL_JSON) give each record zero or
// more rows: a change event's row images, each with its operation in _op
// and its source table and time in _source.
//
// A Debezium event is {op, before, after, source: {db, table, ts_ms, ...},
// ts_ms}, possibly wrapped as {"schema": ..., "payload": event} (the JSON
// converter's schemas.enable). Operations c (insert), r (snapshot read) and
// u (update) give one row of after; d (delete) one row of before (null
// columns when before is null); t (truncate), m (message) and events
// without op (heartbeats, schema changes) give no row. A Canal event is
// {data: [...], old: [...], type, database, table, es, ts, isDdl, sql,
// sqlType, mysqlType, pkNames}: INSERT gives a c row per element of data,
// UPDATE a u row per element (the row after the update; old is not read),
// DELETE a d row per element, and a DDL event (isDdl) no row: its CREATE
// TABLE or ALTER TABLE ADD COLUMN adds columns to an inferred part (see
// ddl.go). Other Canal types give no row. A null (or empty) value, a
// tombstone, gives no row, or with json_options.empty_value_as_delete one d
// row with the value's columns null.
//
// The envelope is scanned at its top level only; the row images are
// sub-slices of the record's value, decoded by the part's JSON decoder
// against the table's columns (inferred or declared), without copying.

// badEvent returns [decode.ErrBadEvent] with what is wrong.
func badEvent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", decode.ErrBadEvent, fmt.Sprintf(format, args...))
}

// event is what the scan of one change event found: sub-slices of the
// record's value, valid as long as it is.
type event struct {
	// db and table are the raw contents of the source's JSON strings
	// (escaped when dbEsc, tableEsc); nil when absent.
	db, table       []byte
	dbEsc, tableEsc bool
	// ts is the source's time in milliseconds since the epoch, when hasTS.
	ts    int64
	hasTS bool
	// schema is a Debezium event's Connect schema, nil when absent.
	schema []byte
	// sqlType and mysqlType are a Canal event's column type objects, nil
	// when absent.
	sqlType, mysqlType []byte
	// ddl says a Canal event is a DDL statement, sql its raw text.
	ddl    bool
	sql    []byte
	sqlEsc bool
}

// changePart reads the change events of a changelog value: the envelope
// here, the row images with img against the value's columns.
type changePart struct {
	canal bool
	img   *decode.Image
	// deleteOnEmpty is json_options.empty_value_as_delete.
	deleteOnEmpty bool
	// tinyBool and ntz are canal_options' tinyint1_as_boolean and
	// mysql_timestamp_as_ntz, for the types of DDL columns.
	tinyBool, ntz bool
	// dbInclude and tableInclude are canal_options' filters, nil for all.
	dbInclude, tableInclude *regexp.Regexp
	// types types the fields of the events' row images; nil infers them.
	// convGen is the schema generation of types whose conversions the
	// image has.
	types   *eventTypes
	convGen int

	sc   decode.Scanner
	ev   event
	imgs [][]byte
	ops  []byte
	// name holds an unescaped db or table name.
	name []byte
}

// newChangePart returns the reader of the change events of the value
// that img writes, a changelog format.
func newChangePart(img *decode.Image) (*changePart, error) {
	tr := img.Value.Transformer
	c := &changePart{canal: tr.Format == spec.FormatCanalJSON, img: img,
		deleteOnEmpty: tr.DeletesOnEmpty(), tinyBool: true, ntz: true}
	var err error
	if co := tr.CanalOptions; c.canal {
		c.tinyBool, c.ntz = co.TinyintAsBoolean(), co.TimestampAsNTZ()
		if c.dbInclude, c.tableInclude, err = co.Includes(); err != nil {
			return nil, fmt.Errorf("canal_options.%w", err)
		}
	}
	c.types = newEventTypes(tr)
	if c.canal {
		img.ReadStringsLeniently()
	}
	if c.types != nil {
		img.TypeNewFields(func(name string) *schema.Type { return c.types.field(&c.ev, name) })
	}
	return c, nil
}

// Scan reads the change event data and returns how many rows it gives;
// an error wrapping [decode.ErrBadEvent] when it is not an event of its
// format.
func (c *changePart) Scan(data []byte) (int, error) {
	c.imgs, c.ops, c.ev = c.imgs[:0], c.ops[:0], event{}
	data = trimSpace(data)
	if len(data) == 0 {
		if c.deleteOnEmpty {
			c.add(nil, decode.OpDelete)
		}
		return len(c.imgs), nil
	}
	var err error
	if c.canal {
		err = c.scanCanal(data)
	} else {
		err = c.scanDebezium(data, true)
	}
	if err != nil {
		return 0, err
	}
	if !c.included() {
		c.imgs, c.ops = c.imgs[:0], c.ops[:0]
		return 0, nil
	}
	if c.ev.ddl {
		c.applyDDL()
	}
	if c.types != nil {
		c.types.setConvs(&c.ev, c.img, &c.convGen)
	}
	return len(c.imgs), nil
}

// trimSpace returns data without its leading JSON whitespace.
func trimSpace(data []byte) []byte {
	for len(data) > 0 {
		switch data[0] {
		case ' ', '\t', '\n', '\r':
			data = data[1:]
		default:
			return data
		}
	}
	return data
}

// add appends a row of image img (nil: null columns) and operation op.
func (c *changePart) add(img []byte, op byte) {
	c.imgs = append(c.imgs, img)
	c.ops = append(c.ops, op)
}

// included reports whether the event's table passes canal_options'
// database_include and table_include.
func (c *changePart) included() bool {
	return c.matches(c.dbInclude, c.ev.db, c.ev.dbEsc) && c.matches(c.tableInclude, c.ev.table, c.ev.tableEsc)
}

// matches reports whether re (nil: anything) matches the whole name raw.
func (c *changePart) matches(re *regexp.Regexp, raw []byte, esc bool) bool {
	if re == nil {
		return true
	}
	return re.Match(c.unescaped(raw, esc))
}

// unescaped returns the text of raw JSON string contents, unescaped into
// c.name when esc.
func (c *changePart) unescaped(raw []byte, esc bool) []byte {
	if !esc {
		return raw
	}
	c.name = jsontext.AppendUnescaped(c.name[:0], raw)
	return c.name
}

// Row writes row j of the last Scan: its image, _op and _source (those the
// table has). The error is [decode.Image.Decode]'s when the image does not
// fit the columns.
func (c *changePart) Row(ctx context.Context, j int) error {
	err := c.img.Decode(ctx, c.imgs[j])
	b := c.img.B
	if c.img.Op >= 0 {
		b.Field(c.img.Op)
		b.Bytes(decode.OpText(c.ops[j]))
	}
	if c.img.Source < 0 {
		return err
	}
	b.Field(c.img.Source)
	if c.imgs[j] == nil && c.ev.db == nil && c.ev.table == nil && !c.ev.hasTS {
		b.Null() // a tombstone's delete row
		return err
	}
	b.BeginStruct()
	for i, s := range [2]struct {
		raw []byte
		esc bool
	}{{c.ev.db, c.ev.dbEsc}, {c.ev.table, c.ev.tableEsc}} {
		b.Field(i)
		switch {
		case s.raw == nil:
			b.Null()
		case s.esc:
			b.Bytes(jsontext.AppendUnescaped(b.Alloc(len(s.raw))[:0], s.raw))
		default:
			b.Bytes(s.raw)
		}
	}
	b.Field(2)
	if c.ev.hasTS && c.ev.ts > math.MinInt64/1000 && c.ev.ts < math.MaxInt64/1000 {
		b.Int64(c.ev.ts * 1000)
	} else {
		b.Null()
	}
	b.EndStruct()
	return err
}

// members calls fn for each member of the JSON object raw, the event or a
// part of it named what, with the key (valid during the call) and the
// value's raw text (a sub-slice of raw). It is an error for raw not to be
// an object. What follows the object is not read.
func (c *changePart) members(what string, raw []byte, fn func(key, val []byte) error) error {
	if len(raw) == 0 || raw[0] != '{' {
		return badEvent("%s is not a JSON object", what)
	}
	end, err := c.sc.Members(raw, fn)
	if err == nil && end < 0 {
		err = badEvent("%s is malformed JSON", what)
	}
	return err
}

// isNull reports whether raw JSON text is null.
func isNull(raw []byte) bool { return string(raw) == "null" }

// stringOf returns the contents of raw JSON text that is a string, and
// whether it holds escapes; ok is false for anything else.
func stringOf(raw []byte) (s []byte, esc, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false, false
	}
	s = raw[1 : len(raw)-1]
	for _, ch := range s {
		if ch == '\\' || ch >= 0x80 {
			return s, true, true
		}
	}
	return s, false, true
}

// objectOrNull returns raw when it is an object, nil when it is null, and
// ok false otherwise.
func objectOrNull(raw []byte) ([]byte, bool) {
	switch {
	case isNull(raw):
		return nil, true
	case raw[0] == '{':
		return raw, true
	}
	return nil, false
}

// millis parses raw JSON text that is an integer number of milliseconds.
func millis(raw []byte) (int64, bool) { return decode.ParseInteger(raw) }

// scanDebezium scans the Debezium event data; top says it may be the
// {"schema", "payload"} wrapper.
func (c *changePart) scanDebezium(data []byte, top bool) error {
	var op, before, after, payload []byte
	var hasOp, hasBefore, hasAfter bool
	err := c.members("the event", data, func(key, val []byte) error {
		var ok bool
		switch string(key) {
		case "op":
			if isNull(val) {
				return nil
			}
			if op, _, ok = stringOf(val); !ok {
				return badEvent("op is %.20s, not a string", val)
			}
			hasOp = true
		case "before":
			if before, ok = objectOrNull(val); !ok {
				return badEvent("before is not an object")
			}
			hasBefore = true
		case "after":
			if after, ok = objectOrNull(val); !ok {
				return badEvent("after is not an object")
			}
			hasAfter = true
		case "source":
			if isNull(val) {
				return nil
			}
			return c.debeziumSource(val)
		case "ts_ms":
			if !c.ev.hasTS {
				c.ev.ts, c.ev.hasTS = millis(val)
			}
		case "schema":
			if top && !isNull(val) {
				c.ev.schema = val
			}
		case "payload":
			if top {
				payload = val
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if payload != nil && !hasOp && !hasBefore && !hasAfter {
		if isNull(payload) {
			return nil // a tombstone wrapped with its schema: no row
		}
		return c.scanDebezium(payload, false)
	}
	if len(op) != 1 {
		if hasOp {
			return badEvent("op %q is not one of c, r, u, d, t, m", op)
		}
		return nil // a heartbeat or schema change: no row
	}
	switch op[0] {
	case decode.OpInsert, decode.OpRead, decode.OpUpdate:
		if after == nil {
			return badEvent("op %c without after", op[0])
		}
		c.add(after, op[0])
	case decode.OpDelete:
		c.add(before, decode.OpDelete)
	case 't', 'm':
	default:
		return badEvent("op %q is not one of c, r, u, d, t, m", op)
	}
	return nil
}

// debeziumSource scans raw, the source block of a Debezium event.
func (c *changePart) debeziumSource(raw []byte) error {
	return c.members("source", raw, func(key, val []byte) error {
		var ok bool
		switch string(key) {
		case "db":
			c.ev.db, c.ev.dbEsc, ok = stringOf(val)
		case "table":
			c.ev.table, c.ev.tableEsc, ok = stringOf(val)
		case "ts_ms":
			// A null source.ts_ms leaves the event's top-level ts_ms.
			var ts int64
			if ts, ok = millis(val); ok {
				c.ev.ts, c.ev.hasTS = ts, true
			}
		default:
			return nil
		}
		if !ok && !isNull(val) {
			return badEvent("source.%s is %.20s", key, val)
		}
		return nil
	})
}

// scanCanal scans the Canal event event.
func (c *changePart) scanCanal(event []byte) error {
	var data, typ []byte
	err := c.members("the event", event, func(key, val []byte) error {
		var ok bool
		switch string(key) {
		case "data":
			data, ok = val, isNull(val) || val[0] == '['
		case "type":
			typ, _, ok = stringOf(val)
		case "database":
			c.ev.db, c.ev.dbEsc, ok = stringOf(val)
		case "table":
			c.ev.table, c.ev.tableEsc, ok = stringOf(val)
		case "es":
			c.ev.ts, ok = millis(val)
			c.ev.hasTS = ok
		case "isDdl":
			c.ev.ddl, ok = string(val) == "true", string(val) == "true" || string(val) == "false"
		case "sql":
			c.ev.sql, c.ev.sqlEsc, ok = stringOf(val)
		case "sqlType":
			c.ev.sqlType, ok = objectOrNull(val)
		case "mysqlType":
			c.ev.mysqlType, ok = objectOrNull(val)
		default:
			return nil
		}
		if !ok && !isNull(val) {
			return badEvent("%s is %.20s", key, val)
		}
		return nil
	})
	if err != nil || c.ev.ddl {
		return err
	}
	var op byte
	switch string(typ) {
	case "INSERT":
		op = decode.OpInsert
	case "UPDATE":
		op = decode.OpUpdate
	case "DELETE":
		op = decode.OpDelete
	default:
		return nil // other statements give no row
	}
	if data == nil || isNull(data) {
		return nil
	}
	return c.canalRows(data, op)
}

// canalRows adds a row of operation op per object of the data array.
func (c *changePart) canalRows(data []byte, op byte) error {
	ok, err := c.sc.Elements(data, func(val []byte) error {
		img, ok := objectOrNull(val)
		if !ok {
			return badEvent("an element of data is not an object")
		}
		if img != nil {
			c.add(img, op)
		}
		return nil
	})
	if err == nil && !ok {
		err = badEvent("data is malformed JSON")
	}
	return err
}
