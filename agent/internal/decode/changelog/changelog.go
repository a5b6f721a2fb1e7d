package decode

import (
	"context"
	"fmt"
	"math"
	"regexp"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
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

// errBadEvent marks a value that is not a change event of its format: a
// malformed event stops the table unless kafka_options.ignore_errors
// leaves it out (see [RecordError]).
var errBadEvent = fmt.Errorf("%w: not a change event", errBadInput)

// badEvent returns errBadEvent with what is wrong.
func badEvent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadEvent, fmt.Sprintf(format, args...))
}

// Operations of changelog rows, the values of _op.
const (
	opInsert = 'c'
	opUpdate = 'u'
	opDelete = 'd'
	opRead   = 'r'
)

// opText holds the _op value of each operation byte.
var opText = [256][]byte{opInsert: []byte("c"), opUpdate: []byte("u"), opDelete: []byte("d"), opRead: []byte("r")}

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

// changePart decodes the value of a changelog format: the envelope here,
// the row images with img against the part's columns.
type changePart struct {
	b     *rows.Builder
	canal bool
	// img decodes a row image into the part's columns; inferred is img
	// when the columns are inferred, nil otherwise.
	img      part
	inferred *inferredPart
	// op and source are the top-level fields of _op and _source.
	op, source int
	// deleteOnEmpty is json_options.empty_value_as_delete.
	deleteOnEmpty bool
	// tinyBool and ntz are canal_options' tinyint1_as_boolean and
	// mysql_timestamp_as_ntz, for the types of DDL columns.
	tinyBool, ntz bool
	// dbInclude and tableInclude are canal_options' filters, nil for all.
	dbInclude, tableInclude *regexp.Regexp
	// types types the fields of the events' row images; nil infers them.
	// imgType is the image's compiled type, whose conversions types sets,
	// as of its schema generation convGen.
	types   *eventTypes
	imgType *jtype
	convGen int

	sc   jsonDecoder
	ev   event
	imgs [][]byte
	ops  []byte
	// name holds an unescaped db or table name.
	name []byte
}

// newChangePart returns the changelog part of sp, a value of a changelog
// format, writing to b: img decodes the row images into the part's
// columns (nil when only scan is used), and _op and _source are the
// top-level fields op and source (-1: none).
func newChangePart(b *rows.Builder, sp *spec.Part, img part, op, source int) (*changePart, error) {
	tr := sp.Transformer
	c := &changePart{b: b, canal: tr.Format == spec.FormatCanalJSON, img: img, op: op, source: source,
		deleteOnEmpty: tr.DeletesOnEmpty(), tinyBool: true, ntz: true}
	c.inferred, _ = img.(*inferredPart)
	var err error
	if co := tr.CanalOptions; c.canal {
		c.tinyBool, c.ntz = co.TinyintAsBoolean(), co.TimestampAsNTZ()
		if c.dbInclude, c.tableInclude, err = co.Includes(); err != nil {
			return nil, fmt.Errorf("canal_options.%w", err)
		}
	}
	c.types = newEventTypes(tr)
	if jp, ok := img.(*jsonPart); ok {
		jp.d.lenient, c.imgType = c.canal, jp.t
	}
	if c.inferred != nil {
		c.inferred.d.lenient, c.imgType = c.canal, c.inferred.t
		if c.types != nil {
			c.inferred.ev.typeOf = func(name string) *schema.Type { return c.types.field(&c.ev, name) }
		}
	}
	return c, nil
}

// scan reads the change event data and returns how many rows it gives;
// an error wrapping errBadEvent when it is not an event of its format.
func (c *changePart) scan(data []byte) (int, error) {
	c.imgs, c.ops, c.ev = c.imgs[:0], c.ops[:0], event{}
	c.sc.data, c.sc.pos = data, 0
	c.sc.ws()
	if c.sc.pos == len(data) {
		if c.deleteOnEmpty {
			c.add(nil, opDelete)
		}
		return len(c.imgs), nil
	}
	var err error
	if c.canal {
		err = c.scanCanal()
	} else {
		err = c.scanDebezium(true)
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
	if c.types != nil && c.imgType != nil {
		c.types.setConvs(&c.ev, c.imgType, &c.convGen)
	}
	return len(c.imgs), nil
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

// row writes row j of the last scan: its image, _op and _source (those the
// table has). The error wraps errBadInput when the image does not fit the
// columns.
func (c *changePart) row(ctx context.Context, j int) error {
	err := c.img.decode(ctx, c.imgs[j])
	b := c.b
	if c.op >= 0 {
		b.Field(c.op)
		b.Bytes(opText[c.ops[j]])
	}
	if c.source < 0 {
		return err
	}
	b.Field(c.source)
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

// members scans the object at c.sc.pos, calling fn for each member with
// the key (valid during the call) and the value's raw text (a sub-slice of
// the data). It is an error for the value not to be an object.
func (c *changePart) members(what string, fn func(key, val []byte) error) error {
	sc := &c.sc
	sc.ws()
	if sc.pos >= len(sc.data) || sc.data[sc.pos] != '{' {
		return badEvent("%s is not a JSON object", what)
	}
	sc.pos++
	sc.ws()
	if sc.pos < len(sc.data) && sc.data[sc.pos] == '}' {
		sc.pos++
		return nil
	}
	for {
		key, ok := sc.key()
		if !ok {
			return badEvent("%s is malformed JSON", what)
		}
		start := sc.pos
		if !sc.skip(1) {
			return badEvent("%s is malformed JSON", what)
		}
		if err := fn(key, sc.data[start:sc.pos]); err != nil {
			return err
		}
		if !sc.next('}') {
			return badEvent("%s is malformed JSON", what)
		}
		if sc.data[sc.pos-1] == '}' {
			return nil
		}
	}
}

// within runs fn with the scanner on raw, a value scanned earlier, and
// puts it back where it was.
func (c *changePart) within(raw []byte, fn func() error) error {
	data, pos := c.sc.data, c.sc.pos
	c.sc.data, c.sc.pos = raw, 0
	err := fn()
	c.sc.data, c.sc.pos = data, pos
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
func millis(raw []byte) (int64, bool) {
	if len(raw) == 0 || !isIntegral(raw) || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	return parseInt(raw, math.MinInt64, math.MaxInt64)
}

// scanDebezium scans a Debezium event at c.sc.pos; top says it may be the
// {"schema", "payload"} wrapper.
func (c *changePart) scanDebezium(top bool) error {
	var op, before, after, payload []byte
	var hasOp, hasBefore, hasAfter bool
	err := c.members("the event", func(key, val []byte) error {
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
			return c.within(val, c.debeziumSource)
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
		return c.within(payload, func() error { return c.scanDebezium(false) })
	}
	if len(op) != 1 {
		if hasOp {
			return badEvent("op %q is not one of c, r, u, d, t, m", op)
		}
		return nil // a heartbeat or schema change: no row
	}
	switch op[0] {
	case opInsert, opRead, opUpdate:
		if after == nil {
			return badEvent("op %c without after", op[0])
		}
		c.add(after, op[0])
	case opDelete:
		c.add(before, opDelete)
	case 't', 'm':
	default:
		return badEvent("op %q is not one of c, r, u, d, t, m", op)
	}
	return nil
}

// debeziumSource scans the source block of a Debezium event.
func (c *changePart) debeziumSource() error {
	return c.members("source", func(key, val []byte) error {
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

// scanCanal scans a Canal event at c.sc.pos.
func (c *changePart) scanCanal() error {
	var data, typ []byte
	err := c.members("the event", func(key, val []byte) error {
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
		op = opInsert
	case "UPDATE":
		op = opUpdate
	case "DELETE":
		op = opDelete
	default:
		return nil // other statements give no row
	}
	if data == nil || isNull(data) {
		return nil
	}
	return c.within(data, func() error { return c.canalRows(op) })
}

// canalRows adds a row of operation op per object of the data array at
// c.sc.pos.
func (c *changePart) canalRows(op byte) error {
	sc := &c.sc
	sc.pos++ // '['
	sc.ws()
	if sc.pos < len(sc.data) && sc.data[sc.pos] == ']' {
		return nil
	}
	for {
		sc.ws()
		start := sc.pos
		if !sc.skip(1) {
			return badEvent("data is malformed JSON")
		}
		img, ok := objectOrNull(sc.data[start:sc.pos])
		if !ok {
			return badEvent("an element of data is not an object")
		}
		if img != nil {
			c.add(img, op)
		}
		if !sc.next(']') {
			return badEvent("data is malformed JSON")
		}
		if sc.data[sc.pos-1] == ']' {
			return nil
		}
	}
}

// imagePart returns the part that decodes the row images of changelog
// part sp: JSON into sp's columns, with the options
// [spec.Transformer.RowOptions] gives (inferred in ADD_NEW_COLUMNS unless
// json_options declares a schema).
func imagePart(sp *spec.Part) *spec.Part {
	p, tr := *sp, *sp.Transformer
	tr.JSONOptions = tr.RowOptions()
	p.Format, p.Transformer = spec.FormatJSON, &tr
	return &p
}
