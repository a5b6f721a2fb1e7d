package changelog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fixture reads testdata/changelog/name: a record per line,
// {"key": JSON or null, "value": JSON or null}.
func fixture(t testing.TB, name string) []record.Record {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "changelog", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct{ Key, Value json.RawMessage }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s:%d: %v", name, len(recs)+1, err)
		}
		r := record.Record{Topic: "cdc", Offset: int64(len(recs))}
		if string(line.Key) != "null" {
			r.Key = line.Key
		}
		if string(line.Value) != "null" {
			r.Value = line.Value
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// changelogLayout is the layout of a table whose value is a changelog
// transformer tr, inferred in ADD_NEW_COLUMNS unless tr's json_options
// say otherwise, with no columns yet.
func changelogLayout(tr *spec.Transformer) *spec.Layout {
	if tr.JSONOptions == nil {
		tr.JSONOptions = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}
	}
	return &spec.Layout{
		Key: spec.Part{Column: spec.KeyColumn},
		Value: spec.Part{Format: tr.Format, Transformer: tr, Fields: []schema.Field{}, Column: spec.ValueColumn,
			Rescue: tr.JSONOptions.RescueColumn()},
		Op: true, Source: true, CorruptRecord: true,
	}
}

// evolve decodes recs with layout l as a table does: when a chunk asks for
// new columns, it adds them to the value part and decodes again. It returns
// the rows rendered, the batch and the value's columns.
func evolve(t *testing.T, l *spec.Layout, opts decode.Options, recs []record.Record) ([]map[string]string, decode.Batch) {
	t.Helper()
	for range 5 {
		d, err := New(l, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		d.SetOptions(opts)
		b, err := d.Decode(context.Background(), recs)
		var nc *decode.NewColumnsError
		if errors.As(err, &nc) {
			l.Value.Fields, _ = nc.Apply(l.Value.Fields)
			continue
		}
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		return renderBatch(t, d, &b), b
	}
	t.Fatal("the columns never settled")
	return nil, decode.Batch{}
}

// picks returns pick(r, cols...) of each row.
func picks(rows []map[string]string, cols ...string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, pick(r, cols...))
	}
	return out
}

// ddl spells fields as DDL.
func ddl(fields []schema.Field) string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Name+" "+f.Type.String())
	}
	return strings.Join(out, ", ")
}

func debezium(schemaInclude bool) *spec.Transformer {
	return &spec.Transformer{Format: spec.FormatDebeziumJSON, DebeziumOptions: &spec.DebeziumOptions{SchemaInclude: &schemaInclude}}
}

func canal(co *spec.CanalOptions) *spec.Transformer {
	return &spec.Transformer{Format: spec.FormatCanalJSON, CanalOptions: co}
}

// TestDebeziumMySQL decodes the MySQL connector's events of
// inventory.customers: a snapshot, an insert, an update of an email, a
// delete and its tombstone, with and without the Connect schema.
func TestDebeziumMySQL(t *testing.T) {
	wantRows := []string{
		`"r" 1001 "sally.thomas@acme.com" {db="inventory" table="customers" ts=2023-11-14T22:13:20Z}`,
		`"r" 1002 "gbailey@foobar.com" {db="inventory" table="customers" ts=2023-11-14T22:13:20.001Z}`,
		`"r" 1003 "ed@walker.com" {db="inventory" table="customers" ts=2023-11-14T22:13:20.002Z}`,
		`"r" 1004 "annek@noanswer.org" {db="inventory" table="customers" ts=2023-11-14T22:13:20.003Z}`,
		`"c" 1005 "kitt@acme.com" {db="inventory" table="customers" ts=2023-11-14T22:14:20Z}`,
		`"u" 1004 "anne.marie@noanswer.org" {db="inventory" table="customers" ts=2023-11-14T22:15:20Z}`,
		`"d" 1004 "anne.marie@noanswer.org" {db="inventory" table="customers" ts=2023-11-14T22:16:20Z}`,
	}
	for _, tc := range []struct {
		file    string
		include bool
		columns string
	}{
		{"debezium-mysql-customers.jsonl", false, "id BIGINT, first_name STRING, last_name STRING, email STRING"},
		{"debezium-mysql-customers-schema.jsonl", true, "id INT, first_name STRING, last_name STRING, email STRING"},
		// Without schema_include, the wrapper is read but its schema not.
		{"debezium-mysql-customers-schema.jsonl", false, "id BIGINT, first_name STRING, last_name STRING, email STRING"},
	} {
		t.Run(tc.file+map[bool]string{true: " schema_include"}[tc.include], func(t *testing.T) {
			l := changelogLayout(debezium(tc.include))
			rows, b := evolve(t, l, decode.Options{}, fixture(t, tc.file))
			if got := ddl(l.Value.Fields); got != tc.columns {
				t.Errorf("columns %s, want %s", got, tc.columns)
			}
			if got := picks(rows, "_op", "id", "email", "_source"); !slices.Equal(got, wantRows) {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
			}
			if !slices.Equal(b.RowRecord, []int32{0, 1, 2, 3, 4, 5, 6}) || b.Filtered != 1 || b.Corrupt != 0 {
				t.Errorf("RowRecord %v, Filtered %d, Corrupt %d; want 0..6, 1 (the tombstone), 0", b.RowRecord, b.Filtered, b.Corrupt)
			}
		})
	}
}

// TestDebeziumPostgres decodes the PostgreSQL connector's events, whose
// source has a schema, whose deletes' before holds only the key (replica
// identity DEFAULT), and a truncate, which gives no row.
func TestDebeziumPostgres(t *testing.T) {
	l := changelogLayout(debezium(false))
	rows, b := evolve(t, l, decode.Options{}, fixture(t, "debezium-postgres-customers.jsonl"))
	want := []string{
		`"r" 1001 "sally.thomas@acme.com" {db="postgres" table="customers" ts=2023-11-14T22:13:20Z}`,
		`"c" 1005 "kitt@acme.com" {db="postgres" table="customers" ts=2023-11-14T22:13:21Z}`,
		`"u" 1005 "sarah@example.com" {db="postgres" table="customers" ts=2023-11-14T22:13:22Z}`,
		`"d" 1005 null {db="postgres" table="customers" ts=2023-11-14T22:13:23Z}`,
	}
	if got := picks(rows, "_op", "id", "email", "_source"); !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b.Filtered != 2 || !slices.Equal(b.RowRecord, []int32{0, 1, 2, 3}) {
		t.Errorf("Filtered %d, RowRecord %v; want 2 (tombstone, truncate), [0 1 2 3]", b.Filtered, b.RowRecord)
	}
}

// TestEmptyValueAsDelete checks that a tombstone becomes a d row with its
// key columns and null value columns, for a changelog and a JSON value, and
// that a declared json_options.schema types a changelog's row images.
func TestEmptyValueAsDelete(t *testing.T) {
	on := true
	key := spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{null("id", tInt)}, Column: spec.KeyColumn,
		Transformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT"}}}
	jo := &spec.JSONOptions{Schema: "first_name STRING, email STRING", EmptyValueAsDelete: &on}
	value := []schema.Field{null("first_name", tString), null("email", tString)}

	tr := debezium(false)
	tr.JSONOptions = jo
	l := changelogLayout(tr)
	l.Key, l.Value.Fields = key, value
	recs := fixture(t, "debezium-mysql-customers.jsonl")[5:]
	rows, b := evolve(t, l, decode.Options{}, recs)
	want := []string{`"u" 1004 "anne.marie@noanswer.org" "Anne"`, `"d" 1004 "anne.marie@noanswer.org" "Anne"`, `"d" 1004 null null`}
	if got := picks(rows, "_op", "id", "email", "first_name"); !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if rows[2]["_source"] != "null" || b.Filtered != 0 || b.RowRecord != nil {
		t.Errorf("tombstone row: _source %s, Filtered %d, RowRecord %v; want null, 0, nil", rows[2]["_source"], b.Filtered, b.RowRecord)
	}

	jl := &spec.Layout{Key: key, Value: spec.Part{Format: spec.FormatJSON, Fields: value, Column: spec.ValueColumn,
		Transformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: jo}}, Op: true, CorruptRecord: true}
	rows, _ = evolve(t, jl, decode.Options{}, []record.Record{{Key: []byte(`{"id":1}`), Value: []byte(`{"email":"a@b"}`)}, {Key: []byte(`{"id":1}`)}})
	if got := picks(rows, "_op", "id", "email"); !slices.Equal(got, []string{`"c" 1 "a@b"`, `"d" 1 null`}) {
		t.Errorf("JSON rows %q", got)
	}
}

// TestCanal decodes Canal events of inventory.products: DDL that creates
// the table and adds columns, a multi-row insert, an update, a delete, and
// an event of another table, typed by each infer_schema_strategy.
func TestCanal(t *testing.T) {
	f := false
	tests := []struct {
		name    string
		co      *spec.CanalOptions
		columns string
		rows    []string // _op id weight on_sale updated_at stock
	}{
		{"DDL types, strings parsed", nil,
			"id INT, name STRING, description STRING, weight DECIMAL(10,3), on_sale BOOLEAN, updated_at TIMESTAMP_NTZ, stock BIGINT, color STRING",
			[]string{`"c" 101 3.140 true 2020-05-13T12:38:35 null`, `"c" 102 8.100 true 2020-05-13T12:38:35 null`,
				`"c" 103 0.800 false 2020-05-13T12:38:35 null`, `"u" 101 5.180 true 2020-05-13T12:39:06 null`,
				`"d" 102 8.100 true 2020-05-13T12:38:35 null`, `"c" 104 0.750 true 2020-05-13T12:40:00 12`,
				`"c" 1 null null null null`}},
		{"tinyint(1) as TINYINT, timestamp as TIMESTAMP", &spec.CanalOptions{Tinyint1AsBoolean: &f, MySQLTimestampAsNTZ: &f},
			"id INT, name STRING, description STRING, weight DECIMAL(10,3), on_sale TINYINT, updated_at TIMESTAMP, stock BIGINT, color STRING",
			[]string{`"c" 101 3.140 1 2020-05-13T12:38:35Z null`, `"c" 102 8.100 1 2020-05-13T12:38:35Z null`,
				`"c" 103 0.800 0 2020-05-13T12:38:35Z null`, `"u" 101 5.180 1 2020-05-13T12:39:06Z null`,
				`"d" 102 8.100 1 2020-05-13T12:38:35Z null`, `"c" 104 0.750 1 2020-05-13T12:40:00Z 12`,
				`"c" 1 null null null null`}},
		{"filtered to inventory.products", &spec.CanalOptions{DatabaseInclude: "inv.*", TableInclude: "prod|products"},
			"id INT, name STRING, description STRING, weight DECIMAL(10,3), on_sale BOOLEAN, updated_at TIMESTAMP_NTZ, stock BIGINT, color STRING",
			[]string{`"c" 101 3.140 true 2020-05-13T12:38:35 null`, `"c" 102 8.100 true 2020-05-13T12:38:35 null`,
				`"c" 103 0.800 false 2020-05-13T12:38:35 null`, `"u" 101 5.180 true 2020-05-13T12:39:06 null`,
				`"d" 102 8.100 true 2020-05-13T12:38:35 null`, `"c" 104 0.750 true 2020-05-13T12:40:00 12`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := changelogLayout(canal(tc.co))
			rows, b := evolve(t, l, decode.Options{}, fixture(t, "canal-products.jsonl"))
			if got := ddl(l.Value.Fields); got != tc.columns {
				t.Errorf("columns %s, want %s", got, tc.columns)
			}
			if got := picks(rows, "_op", "id", "weight", "on_sale", "updated_at", "stock"); !slices.Equal(got, tc.rows) {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.rows, "\n"))
			}
			wantRec := []int32{1, 1, 1, 2, 3, 5, 6}[:len(tc.rows)]
			if !slices.Equal(b.RowRecord, wantRec) || b.Filtered != 7-len(slices.Compact(slices.Clone(wantRec))) || b.Corrupt != 0 {
				t.Errorf("RowRecord %v, Filtered %d, Corrupt %d; want %v", b.RowRecord, b.Filtered, b.Corrupt, wantRec)
			}
			if got := rows[0]["_source"]; got != `{db="inventory" table="products" ts=2020-05-13T12:38:21Z}` {
				t.Errorf("_source %s", got)
			}
		})
	}
}

// TestCanalTypeStrategies checks that SQL_TYPE and MYSQL_TYPE type new
// columns from the events alone (no DDL seen), and AUTO from the values,
// which Canal writes as strings: STRING columns.
func TestCanalTypeStrategies(t *testing.T) {
	recs := fixture(t, "canal-products.jsonl")[1:2] // the multi-row insert
	for _, tc := range []struct {
		strategy, columns string
	}{
		{spec.InferSchemaSQLType, "id INT, name STRING, description STRING, weight DECIMAL(38,18), on_sale TINYINT, updated_at TIMESTAMP_NTZ"},
		{spec.InferSchemaMySQLType, "id INT, name STRING, description STRING, weight DECIMAL(10,3), on_sale BOOLEAN, updated_at TIMESTAMP_NTZ"},
		{spec.InferSchemaAuto, "id STRING, name STRING, description STRING, weight STRING, on_sale STRING, updated_at STRING"},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			l := changelogLayout(canal(&spec.CanalOptions{InferSchemaStrategy: tc.strategy}))
			rows, _ := evolve(t, l, decode.Options{}, recs)
			if got := ddl(l.Value.Fields); got != tc.columns {
				t.Errorf("columns %s, want %s", got, tc.columns)
			}
			if len(rows) != 3 || strings.Trim(rows[2]["id"], `"`) != "103" || rows[2][spec.RescuedDataColumn] != "null" {
				t.Errorf("rows %v", rows)
			}
		})
	}
}

// TestDebeziumSchemaTypes checks the Connect types of schema_include:
// logical dates, timestamps and decimals read from their numbers and bytes.
func TestDebeziumSchemaTypes(t *testing.T) {
	value := `{"schema":{"type":"struct","fields":[{"type":"struct","field":"after","optional":true,"fields":[` +
		`{"type":"int16","optional":false,"field":"n"},` +
		`{"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"born"},` +
		`{"type":"int64","optional":true,"name":"io.debezium.time.Timestamp","version":1,"field":"at_ms"},` +
		`{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"at_us"},` +
		`{"type":"int64","optional":true,"name":"io.debezium.time.NanoTimestamp","version":1,"field":"at_ns"},` +
		`{"type":"string","optional":true,"name":"io.debezium.time.ZonedTimestamp","version":1,"field":"zoned"},` +
		`{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,` +
		`"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"},` +
		`{"type":"bytes","optional":true,"field":"raw"},` +
		`{"type":"array","optional":true,"items":{"type":"float64","optional":false},"field":"xs"}]}]},` +
		`"payload":{"op":"c","before":null,"after":{"n":7,"born":19000,"at_ms":1700000000123,"at_us":1700000000123456,` +
		`"at_ns":1700000000123456789,"zoned":"2023-11-14T22:13:20.5+01:00","price":"%s","raw":"AAE=","xs":[1.5]},` +
		`"source":{"db":"d","table":"t","ts_ms":0}}}`
	l := changelogLayout(debezium(true))
	recs := []record.Record{{Value: []byte(strings.Replace(value, "%s", "MDk=", 1))}, {Value: []byte(strings.Replace(value, "%s", "/89=", 1))}}
	rows, _ := evolve(t, l, decode.Options{}, recs)
	if got, want := ddl(l.Value.Fields), "n SMALLINT, born DATE, at_ms TIMESTAMP_NTZ, at_us TIMESTAMP_NTZ, at_ns TIMESTAMP_NTZ, "+
		"zoned TIMESTAMP, price DECIMAL(10,2), raw BINARY, xs ARRAY<DOUBLE>"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	want := []string{
		`7 2022-01-08 2023-11-14T22:13:20.123 2023-11-14T22:13:20.123456 2023-11-14T22:13:20.123456 2023-11-14T21:13:20.5Z 123.45 b"\x00\x01" [1.5]`,
		`7 2022-01-08 2023-11-14T22:13:20.123 2023-11-14T22:13:20.123456 2023-11-14T22:13:20.123456 2023-11-14T21:13:20.5Z -0.49 b"\x00\x01" [1.5]`,
	}
	if got := picks(rows, "n", "born", "at_ms", "at_us", "at_ns", "zoned", "price", "raw", "xs"); !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBadEvents checks that a value that is not a change event stops the
// batch with a decode.RecordError naming ignore_errors, or, with SkipBad, is left
// out; and that events without rows are counted as filtered.
func TestBadEvents(t *testing.T) {
	tests := []struct {
		name     string
		tr       *spec.Transformer
		value    string
		bad      bool
		filtered bool
	}{
		{"not JSON", debezium(false), `nope`, true, false},
		{"not an object", debezium(false), `[1]`, true, false},
		{"truncated", debezium(false), `{"op":"c","after":{"id":1}`, true, false},
		{"unknown op", debezium(false), `{"op":"x","after":{"id":1}}`, true, false},
		{"insert without after", debezium(false), `{"op":"c","after":null}`, true, false},
		{"after not an object", debezium(false), `{"op":"c","after":3}`, true, false},
		{"source not an object", debezium(false), `{"op":"c","after":{},"source":1}`, true, false},
		{"heartbeat", debezium(false), `{"ts_ms":1}`, false, true},
		{"message", debezium(false), `{"op":"m","message":{"prefix":"p"}}`, false, true},
		{"wrapped tombstone", debezium(true), `{"schema":null,"payload":null}`, false, true},
		{"canal data not an array", canal(nil), `{"type":"INSERT","data":{"id":"1"}}`, true, false},
		{"canal element not an object", canal(nil), `{"type":"INSERT","data":[1]}`, true, false},
		{"canal isDdl not a boolean", canal(nil), `{"type":"INSERT","isDdl":"yes","data":[]}`, true, false},
		{"canal query", canal(nil), `{"type":"QUERY","data":null,"sql":"BEGIN"}`, false, true},
		{"canal empty data", canal(nil), `{"type":"INSERT","data":[]}`, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := []record.Record{{Topic: "cdc", Offset: 9, Value: []byte(tc.value)}}
			d, err := New(changelogLayout(tc.tr), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := d.Decode(context.Background(), recs)
			var re *decode.RecordError
			if tc.bad != errors.As(err, &re) || tc.bad && (re.Offset != 9 || !strings.Contains(err.Error(), "ignore_errors")) {
				t.Fatalf("Decode: %v; want a RecordError: %v", err, tc.bad)
			}
			if err == nil && (b.Rows != 0 || (b.Filtered == 1) != tc.filtered) {
				t.Errorf("Rows %d, Filtered %d", b.Rows, b.Filtered)
			}
			d.SetOptions(decode.Options{SkipBad: true})
			b, err = d.Decode(context.Background(), recs)
			if err != nil || b.Rows != 0 || (len(b.Bad) == 1) != tc.bad {
				t.Errorf("SkipBad: %v, %d rows, Bad %v", err, b.Rows, b.Bad)
			}
		})
	}
}

// TestSkipBadMultiRow checks that a Canal event whose second row image
// does not fit its columns gives none of its rows with SkipBad, and keeps
// them, the bad one's bytes in _corrupt_record, without.
func TestSkipBadMultiRow(t *testing.T) {
	l := changelogLayout(canal(nil))
	l.Value.Fields = []schema.Field{null("id", tInt)}
	l.Value.Transformer.JSONOptions = &spec.JSONOptions{Schema: "id INT"}
	l.Value.Rescue = ""
	recs := []record.Record{
		{Value: []byte(`{"type":"INSERT","data":[{"id":"1"}],"database":"d","table":"t"}`)},
		{Value: []byte(`{"type":"INSERT","data":[{"id":"2"},{"id":"two"},{"id":"3"}],"database":"d","table":"t"}`)},
		{Value: []byte(`{"type":"DELETE","data":[{"id":"4"}],"database":"d","table":"t"}`)},
	}
	rows, b := evolve(t, l, decode.Options{SkipBad: true}, recs)
	if got := picks(rows, "_op", "id"); !slices.Equal(got, []string{`"c" 1`, `"d" 4`}) || !slices.Equal(b.RowRecord, []int32{0, 2}) ||
		len(b.Bad) != 1 || b.Bad[0].Record != 1 {
		t.Errorf("SkipBad: rows %q, RowRecord %v, Bad %v", got, b.RowRecord, b.Bad)
	}
	rows, b = evolve(t, l, decode.Options{}, recs)
	if got := picks(rows, "id", spec.CorruptRecordColumn); len(got) != 5 || got[2] != `null b`+quoteBytes(recs[1].Value) || b.Corrupt != 1 {
		t.Errorf("rows %q, Corrupt %d", got, b.Corrupt)
	}
}

// TestDDLColumns checks the MySQL DDL reader.
func TestDDLColumns(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"CREATE TABLE IF NOT EXISTS `db`.`t` (\n id BIGINT UNSIGNED NOT NULL, `na``me` VARCHAR(10) COMMENT 'x, y',\n" +
			" price DECIMAL(12, 4) DEFAULT '0.0', flag tinyint(1), PRIMARY KEY (id), UNIQUE KEY u (id, price)) ENGINE=InnoDB",
			"id DECIMAL(20,0), na`me STRING, price DECIMAL(12,4), flag BOOLEAN"},
		{"create temporary table t (a int) -- comment", "a INT"},
		{"/* hint */ ALTER TABLE t ADD b DATE, ADD COLUMN (c DATETIME, d BLOB), DROP e, ADD INDEX i (b), MODIFY f INT", "b DATE, c TIMESTAMP_NTZ, d BINARY"},
		{"ALTER TABLE db.t ADD COLUMN `x` json AFTER y", "x STRING"},
		{"CREATE TABLE t LIKE u", ""},
		{"DROP TABLE t", ""},
		{"ALTER TABLE t RENAME TO u", ""},
		{"CREATE TABLE t (a int", "a INT"},
		{"ALTER TABLE `t", ""},
		{"", ""},
	} {
		var got []string
		for _, c := range ddlColumns(tc.sql, true, true) {
			got = append(got, c.name+" "+c.typ.String())
		}
		if strings.Join(got, ", ") != tc.want {
			t.Errorf("%q: %q, want %q", tc.sql, strings.Join(got, ", "), tc.want)
		}
	}
}

// TestMySQLType checks the MySQL type mapping.
func TestMySQLType(t *testing.T) {
	for _, tc := range []struct {
		text          string
		tinyBool, ntz bool
		want          string
	}{
		{"tinyint(1)", true, true, "BOOLEAN"}, {"tinyint(1)", false, true, "TINYINT"}, {"tinyint(4) unsigned", true, true, "SMALLINT"},
		{"smallint(6)", true, true, "SMALLINT"}, {"mediumint", true, true, "INT"}, {"int(10) unsigned", true, true, "BIGINT"},
		{"bigint(20)", true, true, "BIGINT"}, {"bigint(20) unsigned", true, true, "DECIMAL(20,0)"}, {"decimal(10,2)", true, true, "DECIMAL(10,2)"},
		{"DECIMAL", true, true, "DECIMAL(10,0)"}, {"decimal(65,30)", true, true, "DECIMAL(38,30)"}, {"float", true, true, "FLOAT"},
		{"double", true, true, "DOUBLE"}, {"timestamp", true, true, "TIMESTAMP_NTZ"}, {"timestamp(3)", true, false, "TIMESTAMP"},
		{"datetime(6)", true, false, "TIMESTAMP_NTZ"}, {"date", true, true, "DATE"}, {"bit(1)", true, true, "BOOLEAN"},
		{"bit(8)", true, true, "BIGINT"}, {"varbinary(16)", true, true, "BINARY"}, {"enum('a','b')", true, true, "STRING"},
		{"year", true, true, "INT"}, {"geometry", true, true, "STRING"},
	} {
		if got := MySQLType(tc.text, tc.tinyBool, tc.ntz).String(); got != tc.want {
			t.Errorf("MySQLType(%q, %v, %v) = %s, want %s", tc.text, tc.tinyBool, tc.ntz, got, tc.want)
		}
	}
}

// TestChangelogTableLayout decodes with the layout a table spec gives: a
// changelog value without json_options infers its row image, with the
// rescue column, _op, _source and the metadata column in layout order.
func TestChangelogTableLayout(t *testing.T) {
	tbl := &spec.Table{DestinationTable: "customers",
		TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"cdc"},
			ValueTransformer: &spec.Transformer{Format: spec.FormatDebeziumJSON}}}}
	l := layoutOf(t, tbl)
	rows, _ := evolve(t, l, decode.Options{}, fixture(t, "debezium-mysql-customers.jsonl"))
	if got, want := names(l.Columns()), "key,id,first_name,last_name,email,_op,_source,_kafka,_rescued_data,_corrupt_record"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	if len(rows) != 7 || pick(rows[6], "_op", "id", "_rescued_data", "_corrupt_record") != `"d" 1004 null null` {
		t.Errorf("rows %v", rows)
	}
}

// TestCanalStrings checks the lenient parsing of Canal's string values
// into typed columns: what fits, what is corrupt with a declared schema,
// and what is rescued in an inferred part.
func TestCanalStrings(t *testing.T) {
	cols := []schema.Field{null("b", tBool), null("i", tInt), null("l", tLong), null("f", tDouble), null("d", tDec(5, 2)),
		null("dt", tDate), null("ts", tNTZ), null("bin", tBinary), null("s", tString)}
	tests := []struct {
		data, want string // b i l f d dt ts bin s
		corrupt    bool
	}{
		{`{"b":"1","i":"-7","l":"9007199254740993","f":"2.5","d":"1.005","dt":"2020-05-13","ts":"2020-05-13 12:38:35.5","bin":"\u00ff\u0000a","s":"x"}`,
			`true -7 9007199254740993 2.5 1.01 2020-05-13 2020-05-13T12:38:35.5 b"\xff\x00a" "x"`, false},
		{`{"b":"false","i":"7","s":7}`, `false 7 null null null null null null "7"`, false},
		{`{"b":"2"}`, `true null null null null null null null null`, false},
		{`{"b":"-1"}`, `true null null null null null null null null`, false},
		{`{"b":"0"}`, `false null null null null null null null null`, false},
		{`{"b":"1.0"}`, `null null null null null null null null null`, true},
		{`{"i":"seven"}`, `null null null null null null null null null`, true},
		{`{"b":"yes"}`, `null null null null null null null null null`, true},
		{`{"i":"1.5"}`, `null null null null null null null null null`, true},
		{`{"bin":"\u0100"}`, `null null null null null null null null null`, true},
		{`{"i":7}`, `null 7 null null null null null null null`, false},
	}
	for _, tc := range tests {
		tr := canal(nil)
		tr.JSONOptions = &spec.JSONOptions{Schema: "b BOOLEAN, i INT, l BIGINT, f DOUBLE, d DECIMAL(5,2), dt DATE, ts TIMESTAMP_NTZ, bin BINARY, s STRING"}
		l := changelogLayout(tr)
		l.Value.Fields, l.Value.Rescue = cols, ""
		rows, b := evolve(t, l, decode.Options{}, []record.Record{{Value: []byte(`{"type":"INSERT","data":[` + tc.data + `]}`)}})
		if got := pick(rows[0], "b", "i", "l", "f", "d", "dt", "ts", "bin", "s"); got != tc.want || (b.Corrupt == 1) != tc.corrupt {
			t.Errorf("%s: %s (corrupt %d), want %s (corrupt %v)", tc.data, got, b.Corrupt, tc.want, tc.corrupt)
		}
	}
	l := changelogLayout(canal(nil))
	l.Value.Fields = []schema.Field{null("i", tInt)}
	rows, _ := evolve(t, l, decode.Options{}, []record.Record{{Value: []byte(`{"type":"INSERT","data":[{"i":"seven"}]}`)}})
	if got := pick(rows[0], "i", spec.RescuedDataColumn, spec.CorruptRecordColumn); got != `null "{\"i\":\"seven\"}" null` {
		t.Errorf("inferred: %s, want the value rescued", got)
	}
}

// TestDebeziumNullSourceTS checks that a null source.ts_ms leaves the
// event's top-level ts_ms as _source.ts, whichever comes first.
func TestDebeziumNullSourceTS(t *testing.T) {
	for _, value := range []string{
		`{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","ts_ms":null},"ts_ms":1700000000000}`,
		`{"ts_ms":1700000000000,"op":"c","after":{"id":1},"source":{"db":"d","table":"t","ts_ms":null}}`,
	} {
		rows, _ := evolve(t, changelogLayout(debezium(false)), decode.Options{}, []record.Record{{Value: []byte(value)}})
		if got, want := pick(rows[0], spec.SourceColumn), `{db="d" table="t" ts=2023-11-14T22:13:20Z}`; got != want {
			t.Errorf("%s: _source %s, want %s", value, got, want)
		}
	}
}
