//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// cdcTopic produces the fixture testdata/cdc/<file>.jsonl to a new topic
// of one partition with cdc_records.py, with more of its arguments, and
// returns the topic.
func cdcTopic(t *testing.T, file string, more ...string) string {
	t.Helper()
	topic := uniqueName("e2e-cdc-" + strings.ReplaceAll(file, "_", "-"))
	cdcProduce(t, topic, filepath.Join("testdata", "cdc", file+".jsonl"), more...)
	return topic
}

// cdcProduce produces the records of the fixture at path to topic with
// cdc_records.py, with more of its arguments.
func cdcProduce(t *testing.T, topic, path string, more ...string) {
	t.Helper()
	python(t, "cdc_records.py", append([]string{"--bootstrap", env.bootstrap, "--topic", topic, "--file", path}, more...)...)
}

// cdcTable is a table of a changelog test: how it reads and what it must
// hold.
type cdcTable struct {
	name  string
	topic string
	tr    *spec.Transformer
	// key parses the key, whose columns are named with keyPrefix; nil
	// keeps it BINARY.
	key       *spec.Transformer
	keyPrefix string
	// columns are the table's top-level columns and types, as delta-rs
	// names them, in order; pick the columns rows shows, in order.
	columns []string
	pick    []string
	// rows are the rows, sorted by _source (its ts) and id, each its
	// picked values as JSON.
	rows []string
}

// rowOrder is the order of the rows of changelog tables: by the change's
// time, then by id (the rows of one Canal event share their time).
var rowOrder = []string{"_source", "id"}

// render returns each row's picked values as one line of JSON values.
func render(rows []map[string]any, pick []string) []string {
	var out []string
	for _, r := range rows {
		var vals []string
		for _, c := range pick {
			b, _ := json.Marshal(r[c])
			vals = append(vals, string(b))
		}
		out = append(out, strings.Join(vals, " "))
	}
	return out
}

// checkCDCTable reads the table at location with the three readers and
// compares its columns and rows with tb's.
func checkCDCTable(t *testing.T, location string, tb cdcTable) {
	t.Helper()
	cols, rows := readTable(t, location, tb.pick, rowOrder)
	var got []string
	for _, c := range cols {
		got = append(got, c[0]+" "+c[1])
	}
	if !slices.Equal(got, tb.columns) {
		t.Errorf("table %s: columns\n%s\nwant\n%s", tb.name, strings.Join(got, "\n"), strings.Join(tb.columns, "\n"))
	}
	if r := render(rows, tb.pick); !slices.Equal(r, tb.rows) {
		t.Errorf("table %s: rows (%s)\n%s\nwant\n%s", tb.name, strings.Join(tb.pick, " "), strings.Join(r, "\n"), strings.Join(tb.rows, "\n"))
	}
}

func debeziumTr(schemaInclude bool) *spec.Transformer {
	return &spec.Transformer{Format: spec.FormatDebeziumJSON, DebeziumOptions: &spec.DebeziumOptions{SchemaInclude: &schemaInclude}}
}

func canalTr(co *spec.CanalOptions) *spec.Transformer {
	return &spec.Transformer{Format: spec.FormatCanalJSON, CanalOptions: co}
}

// imageColumns are the columns of a changelog table of the key, the
// columns image, _op, _source, the rescue column and _corrupt_record.
func imageColumns(image ...string) []string {
	return slices.Concat([]string{"key binary"}, image,
		[]string{"_op string", "_source struct", "_rescued_data string", "_corrupt_record binary"})
}

// customerRows are the rows of debezium_customers.jsonl and its variants,
// whose source.db is db: _op id first_name last_name email _source.
func customerRows(db string) []string {
	src := func(ts string) string {
		return fmt.Sprintf(`{"db":%q,"table":"customers","ts":"2023-11-14T22:%s"}`, db, ts)
	}
	return []string{
		`"r" 1001 "Sally" "Thomas" "sally.thomas@acme.com" ` + src("13:20.000000"),
		`"r" 1002 "George" "Bailey" "gbailey@foobar.com" ` + src("13:20.001000"),
		`"r" 1003 "Edward" "Walker" "ed@walker.com" ` + src("13:20.002000"),
		`"r" 1004 "Anne" "Kretchmar" "annek@noanswer.org" ` + src("13:20.003000"),
		`"c" 1005 "Kenneth" "Anderson" "kander@acme.com" ` + src("14:20.000000"),
		`"u" 1004 "Anne Marie" "Kretchmar" "annek@noanswer.org" ` + src("15:20.000000"),
		`"d" 1004 "Anne Marie" "Kretchmar" "annek@noanswer.org" ` + src("16:20.000000"),
	}
}

// keyed returns customerRows' rows, each led by its key's id, which is
// the row's id.
func keyed(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Fields(r)[1] + " " + r
	}
	return out
}

// customerPick are the columns customerRows shows.
var customerPick = []string{"_op", "id", "first_name", "last_name", "email", "_source"}

// productRows are the rows of canal_products.jsonl and, with alter,
// canal_products_alter.jsonl, for the products table: _op id description
// weight in_stock updated_at color _source, in_stock as yes and no are.
func productRows(alter bool, yes, no string) []string {
	src := func(s int) string {
		return fmt.Sprintf(`{"db":"inventory","table":"products","ts":"2020-05-13T12:38:%02d.000000"}`, s)
	}
	at := func(hm string) string { return `"2020-05-13T12:` + hm + `.000000"` }
	rows := []string{
		`"c" 101 "Small 2-wheel scooter" 3.14 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 102 "12V car battery" 8.1 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 103 "12-pack of drill bits with sizes ranging from #40 to #3" 0.8 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 104 "12oz carpenter's hammer" 0.75 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 105 "14oz carpenter's hammer" 0.875 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 106 "16oz carpenter's hammer" 1 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 107 "box of assorted rocks" 5.3 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 108 "water resistent black wind breaker" 0.1 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"c" 109 "24 inch spare tire" 22.2 ` + yes + ` ` + at("38:35") + ` null ` + src(21),
		`"u" 106 "18oz carpenter hammer" 1 ` + yes + ` ` + at("40:01") + ` null ` + src(22),
		`"u" 107 "box of assorted rocks" 5.1 ` + no + ` ` + at("41:12") + ` null ` + src(23),
	}
	if alter {
		rows = append(rows,
			`"c" 110 "water resistent white wind breaker" 0.2 `+yes+` `+at("45:00")+` "white" `+src(26),
			`"c" 111 "Big 2-wheel scooter " 5.18 `+yes+` `+at("45:00")+` "red" `+src(26),
			`"d" 111 "Big 2-wheel scooter " 5.18 `+yes+` `+at("45:00")+` "red" `+src(27),
		)
	}
	return rows
}

// productPick are the columns productRows shows.
var productPick = []string{"_op", "id", "description", "weight", "in_stock", "updated_at", "color", "_source"}

// TestChangelogPipelineTables ingests Debezium and Canal change events,
// authored in the shape of the tools' documented examples, into the tables
// of a pipeline: each event becomes its rows with _op, _source and the row
// image (a delete's before image; a Debezium tombstone no row), typed by
// inference, by the event's Connect schema (schema_include) or by Canal's
// DDL and mysqlType (tinyint(1) as BOOLEAN or TINYINT, timestamp as
// TIMESTAMP_NTZ or TIMESTAMP); canal_options' database_include and
// table_include leave another table's events out; a Canal ALTER TABLE that
// comes once the table has rows adds its column; with
// json_options.empty_value_as_delete the tombstone is a delete row of its
// key alone (parsed, its field prefixed), and with schema_include a key
// wrapped in its Connect schema is read from its payload. delta-rs, DuckDB and pyarrow read the same rows. A table of
// 300 copies of the Debezium events holds each copy's rows.
func TestChangelogPipelineTables(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	name := uniqueName("e2e-cdc")
	canal := cdcTopic(t, "canal_products")
	f, on := false, true
	deletesTr := debeziumTr(false)
	deletesTr.JSONOptions = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns, EmptyValueAsDelete: &on}
	customers := imageColumns("id long", "first_name string", "last_name string", "email string")
	customersSchema := imageColumns("id integer", "first_name string", "last_name string", "email string")
	schemaDeletesTr := debeziumTr(true)
	schemaDeletesTr.JSONOptions = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns, EmptyValueAsDelete: &on}
	tables := []cdcTable{
		{name: "customers", topic: cdcTopic(t, "debezium_customers"), tr: debeziumTr(false), columns: customers,
			pick: customerPick, rows: customerRows("inventory")},
		{name: "customers_schema", topic: cdcTopic(t, "debezium_customers_schema"), tr: debeziumTr(true),
			columns: customersSchema, pick: customerPick, rows: customerRows("inventory")},
		{name: "customers_pg", topic: cdcTopic(t, "debezium_customers_postgres"), tr: debeziumTr(false), columns: customers,
			pick: customerPick, rows: customerRows("postgres")},
		// The tombstone is a delete row of its key alone, whose id is a
		// column of its own with key_fields_prefix.
		{name: "customers_deletes", topic: cdcTopic(t, "debezium_customers"), tr: deletesTr, keyPrefix: "k_",
			key:     &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT"}},
			columns: slices.Concat([]string{"k_id long"}, customers[1:]), pick: append([]string{"k_id"}, customerPick...),
			rows: append([]string{`1004 "d" null null null null null`}, keyed(customerRows("inventory"))...)},
		{name: "products", topic: canal, tr: canalTr(&spec.CanalOptions{TableInclude: "products"}),
			columns: imageColumns("id integer", "name string", "description string", "weight float", "in_stock boolean",
				"updated_at timestamp_ntz", "color string"),
			pick: productPick, rows: productRows(true, "true", "false")},
		{name: "products_mysql", topic: canal, tr: canalTr(&spec.CanalOptions{DatabaseInclude: "inv.*", TableInclude: "prod.*",
			InferSchemaStrategy: spec.InferSchemaMySQLType, Tinyint1AsBoolean: &f, MySQLTimestampAsNTZ: &f}),
			columns: imageColumns("id integer", "name string", "description string", "weight float", "in_stock byte",
				"updated_at timestamp", "color string"),
			pick: productPick, rows: productRows(true, "1", "0")},
		// With schema_include the key, wrapped in {"schema", "payload"}
		// as the value is, is read from its payload, the tombstone's too.
		{name: "customers_schema_keys", topic: cdcTopic(t, "debezium_customers_schema"), tr: schemaDeletesTr, keyPrefix: "k_",
			key:     &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT"}},
			columns: slices.Concat([]string{"k_id integer"}, customersSchema[1:]), pick: append([]string{"k_id"}, customerPick...),
			rows: append([]string{`1004 "d" null null null null null`}, keyed(customerRows("inventory"))...)},
	}
	const copies = 300
	volume := cdcTopic(t, "debezium_customers", "--repeat", fmt.Sprint(copies))
	p := &spec.Pipeline{Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "cdc", FlushInterval: "300ms"}
	for _, tb := range append(tables, cdcTable{name: "customers_volume", topic: volume, tr: debeziumTr(false)}) {
		p.Tables = append(p.Tables, spec.Table{DestinationTable: tb.name, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{tb.topic}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: tb.tr,
			KeyTransformer: tb.key, KeyFieldsPrefix: tb.keyPrefix}}})
	}
	a.applyPipeline(p)
	rowsAtLeast := func(want ...int64) func(p *spec.PipelineResponse) bool {
		return func(p *spec.PipelineResponse) bool {
			for i, ts := range p.Status.Tables {
				if ts.Rows < want[i] {
					return false
				}
			}
			return true
		}
	}
	resp := a.waitFor(name, "the first rows", 2*time.Minute, rowsAtLeast(7, 7, 7, 8, 11, 11, 8, 7*copies))
	for _, i := range []int{4, 5} {
		var cols []string
		for _, c := range resp.Status.Tables[i].Columns {
			cols = append(cols, c.Name)
		}
		if slices.Contains(cols, "color") || !slices.Contains(cols, "updated_at") {
			t.Errorf("table %s has the columns %v before the ALTER TABLE, want updated_at and no color", tables[i].name, cols)
		}
	}
	// The ALTER TABLE, then rows with the new column.
	cdcProduce(t, canal, filepath.Join("testdata", "cdc", "canal_products_alter.jsonl"))
	// Filtered: Debezium's tombstone but with empty_value_as_delete;
	// Canal's CREATE, ALTER and the INSERT into orders. A tombstone after
	// the last row may be committed after it.
	filtered := []int64{1, 1, 1, 0, 3, 3, 0}
	resp = a.waitFor(name, "every row", 2*time.Minute, func(p *spec.PipelineResponse) bool {
		for i, want := range filtered {
			if p.Status.Tables[i].FilteredRecords < want {
				return false
			}
		}
		return rowsAtLeast(7, 7, 7, 8, 14, 14, 8, 7*copies)(p)
	})
	for i, tb := range tables {
		ts := resp.Status.Tables[i]
		if want := int64(len(tb.rows)); ts.Rows != want || ts.CorruptRecords != 0 || ts.ErrorRecords != 0 ||
			ts.FilteredRecords != filtered[i] {
			t.Errorf("table %s: %d rows, %d corrupt, %d error, %d filtered records; want %d, 0, 0, %d", tb.name, ts.Rows,
				ts.CorruptRecords, ts.ErrorRecords, ts.FilteredRecords, want, filtered[i])
		}
		checkCDCTable(t, ts.Location, tb)
	}

	// Copy k's ids are raised by k * 10000: each copy has the rows of one.
	vol := resp.Status.Tables[len(tables)]
	_, rows := readTable(t, vol.Location, []string{"_op", "id"}, []string{"id", "_op"})
	ops := map[string]int{}
	ids := map[int64]int{}
	for _, r := range rows {
		ops[r["_op"].(string)]++
		ids[int64(r["id"].(float64))%10000]++
	}
	if vol.Rows != 7*copies || len(rows) != 7*copies || ops["r"] != 4*copies || ops["c"] != copies || ops["u"] != copies ||
		ops["d"] != copies || ids[1004] != 3*copies || ids[1005] != copies {
		t.Errorf("customers_volume: %d rows (status %d), ops %v, ids mod 10000 %v; want %d rows, r %d, c u d %d each",
			len(rows), vol.Rows, ops, ids, 7*copies, 4*copies, copies)
	}
}

// TestChangelogFanoutDefaultRoute routes the change events of two topics,
// one of Debezium events of MySQL's inventory.customers and
// inventory.addresses and of PostgreSQL's postgres.inventory.customers,
// one of Canal events of inventory.products and inventory.orders, with
// fanout schemas that have neither fanout_by nor table_id_fields: each
// source table goes to its own table, named <db>_<table> (with a source
// schema, <db>_<schema>_<table>), Debezium's tombstone is skipped (no
// route error, no row), and Canal's DDL changes its table's columns. With ignore_errors, a change event of customers
// whose row image is not an object is left out, counted, and kept in the
// destination schema's _dirty_records; so is an event without its source
// database, which has no route, with no table.
func TestChangelogFanoutDefaultRoute(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	name := uniqueName("e2e-cdc-fanout")
	deb := cdcTopic(t, "debezium_customers")
	cdcProduce(t, deb, filepath.Join("testdata", "cdc", "debezium_addresses.jsonl"))
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"key":{"id":1006},"value":{"before":null,"after":"oops","source":{"db":"inventory",`+
		`"table":"customers","ts_ms":1700000300000},"op":"c","ts_ms":1700000300001}}`+"\n"+
		`{"key":{"id":1007},"value":{"before":null,"after":{"id":1007},"source":{"table":"customers"},"op":"c"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cdcProduce(t, deb, bad) // offsets 11 and 12: 8 customers, 3 addresses before them
	cdcProduce(t, deb, filepath.Join("testdata", "cdc", "debezium_customers_postgres.jsonl"))
	canal := cdcTopic(t, "canal_products")
	cdcProduce(t, canal, filepath.Join("testdata", "cdc", "canal_products_alter.jsonl"))

	a.applyPipeline(&spec.Pipeline{Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "cdc_none",
		FlushInterval: "300ms"})
	on := true
	for _, fo := range []struct {
		schema, topic string
		tr            *spec.Transformer
	}{{"deb", deb, debeziumTr(false)}, {"canal", canal, canalTr(nil)}} {
		f := &spec.FanoutSchema{Name: name + "-" + fo.schema, Pipeline: name, DestinationCatalog: "main", DestinationSchema: fo.schema,
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{fo.topic},
				StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: fo.tr, IgnoreErrors: &on}}}
		if _, err := a.client().PutFanoutSchema(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	a.waitFanout(name+"-deb", "past offset 12", 2*time.Minute, func(f *spec.FanoutSchemaResponse) bool {
		return len(f.Status.Partitions) == 1 && f.Status.Partitions[0].NextOffset >= 13
	})
	debResp := a.waitFanoutRows(name+"-deb", map[string]int64{"inventory_customers": 7, "inventory_addresses": 3,
		"postgres_inventory_customers": 7}, 2*time.Minute)
	canalResp := a.waitFanoutRows(name+"-canal", map[string]int64{"inventory_products": 14, "inventory_orders": 2}, 2*time.Minute)
	at := func(f *spec.FanoutSchemaResponse, table string) spec.TableStatus {
		for _, ts := range f.Status.Tables {
			if ts.DestinationTable == table {
				return ts
			}
		}
		t.Fatalf("fanout schema %s has no table %s", f.Spec.Name, table)
		return spec.TableStatus{}
	}
	cust := at(debResp, "inventory_customers")
	if cust.ErrorRecords != 1 {
		t.Errorf("inventory_customers: %d error records, want 1", cust.ErrorRecords)
	}
	// The fanout schemas' tables are in /metrics, as a pipeline's are, and
	// so are the fanout schemas themselves.
	metrics := a.metrics()
	for _, line := range []string{
		fmt.Sprintf(`tributary_table_rows_total{pipeline=%q,table="main.deb.inventory_customers"} 7`, name),
		fmt.Sprintf(`tributary_table_error_records_total{pipeline=%q,table="main.deb.inventory_customers"} 1`, name),
		fmt.Sprintf(`tributary_table_rows_total{pipeline=%q,table="main.canal.inventory_orders"} 2`, name),
	} {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", line, metrics)
		}
	}
	if series := fmt.Sprintf(`tributary_fanout_partition_lag{pipeline=%q,fanout="%s-deb",topic=%q,partition="0"} `, name, name, deb); !strings.Contains(metrics, series) {
		t.Errorf("/metrics lacks %s:\n%s", series, metrics)
	}
	checkCDCTable(t, cust.Location, cdcTable{name: "inventory_customers", pick: customerPick, rows: customerRows("inventory"),
		columns: imageColumns("id long", "first_name string", "last_name string", "email string")})
	// PostgreSQL's events name database, schema and table.
	checkCDCTable(t, at(debResp, "postgres_inventory_customers").Location, cdcTable{name: "postgres_inventory_customers",
		pick: customerPick, rows: customerRows("postgres"),
		columns: imageColumns("id long", "first_name string", "last_name string", "email string")})
	src := func(ts string) string {
		return `{"db":"inventory","table":"addresses","ts":"2023-11-14T22:` + ts + `"}`
	}
	checkCDCTable(t, at(debResp, "inventory_addresses").Location, cdcTable{name: "inventory_addresses",
		pick: []string{"_op", "id", "customer_id", "city", "type", "_source"},
		columns: imageColumns("id long", "customer_id long", "street string", "city string", "state string", "zip string",
			"type string"),
		rows: []string{
			`"r" 10 1001 "Euless" "SHIPPING" ` + src("13:20.010000"),
			`"r" 11 1001 "Harrisburg" "BILLING" ` + src("13:20.011000"),
			`"c" 12 1002 "Austin" "LIVING" ` + src("17:20.000000"),
		}})
	checkCDCTable(t, at(canalResp, "inventory_products").Location, cdcTable{name: "inventory_products", pick: productPick,
		rows: productRows(true, "true", "false"),
		columns: imageColumns("id integer", "name string", "description string", "weight float", "in_stock boolean",
			"updated_at timestamp_ntz", "color string")})
	checkCDCTable(t, at(canalResp, "inventory_orders").Location, cdcTable{name: "inventory_orders",
		pick: []string{"_op", "order_number", "order_date", "purchaser", "quantity", "product_id"},
		columns: imageColumns("order_number string", "order_date date", "purchaser string", "quantity string",
			"product_id string"),
		rows: []string{`"c" "10001" "2016-01-16" "1001" "1" "102"`, `"c" "10002" "2016-01-17" "1002" "2" "105"`}})

	// The bad events are in the deb schema's dirty records table, once.
	dirty := dirtyRows(t, cust.Location)
	if len(dirty) != 2 || dirty[0]["offset"] != 11.0 || dirty[0]["table"] != "inventory_customers" || dirty[0]["topic"] != deb ||
		dirty[1]["offset"] != 12.0 || dirty[1]["table"] != "" || !strings.Contains(fmt.Sprint(dirty[1]["error"]), "cannot be routed") {
		t.Errorf("dirty records %v, want the record at offset 11 of inventory_customers and the one at 12 of no table", dirty)
	}
}
