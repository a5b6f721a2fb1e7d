//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// columnsReport is what columns_records.py read prints: the log's columns
// and each reader's rows.
type columnsReport struct {
	Columns json.RawMessage             `json:"columns"`
	Readers map[string][]map[string]any `json:"readers"`
}

// readColumns reads the table at location with columns_records.py, rows
// ordered by column order.
func readColumns(t *testing.T, location, order string) columnsReport {
	t.Helper()
	var r columnsReport
	out := python(t, "columns_records.py", "read", location, "--order", order)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("columns_records.py read %s: %v\n%s", location, err, out)
	}
	return r
}

// canonJSON renders v as JSON with object keys sorted: JSON values that
// are equal render the same.
func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(back)
	return string(b)
}

// columnsRecord returns the key and value of record i as
// columns_records.py produces them.
func columnsRecord(i int) (key, value string) {
	user := fmt.Sprintf(`{"name":"u%d","addr":{"city":"c%d"}`, i, i)
	extra := ""
	if i >= 5 {
		user += fmt.Sprintf(`,"age":%d`, i)
		extra = `,"z":true`
	}
	return fmt.Sprintf(`{"id": %d}`, i), fmt.Sprintf(
		`{"id":%d,"name":"n%d","user":%s},"ts":"2024-01-02 03:04:05.%03d","iso":"2024-01-02T03:04:05.%03dZ"%s}`,
		100+i, i, user, i, i, extra)
}

// columnsTable is one table of TestColumnShaping: its spec, the log's
// columns (JSON of [name, type] pairs, types as columns_records.py gives
// them) before and after the restart, and its row for record i.
type columnsTable struct {
	table          spec.Table
	order          string
	before, after  string
	row            func(i int, after bool) map[string]any
	hasTime, extra bool
}

// TestColumnShaping runs one pipeline over records with JSON keys,
// repeated headers and nested JSON values, produced by Confluent's client
// to a topic of one partition, with a table per column-shaping option:
// metadata_columns (all nine, beside source_metadata_column), key and
// value field prefixes, duplicate_field_strategy PREFER_KEY and
// PREFER_VALUE, an inferred prefixed value with initial_schemas,
// flatten_nested_columns, timestamp_format SQL and ISO-8601, and the
// headers column alone (Spark's includeHeaders). It reads
// each table with delta-rs, DuckDB and pyarrow and checks the exact
// columns, types and values; then it stops the agent, produces records
// with new fields, starts it again and checks that the inferred tables
// rebuilt their columns from the log (prefix stripped, flattened names
// kept) and added the new ones.
func TestColumnShaping(t *testing.T) {
	t.Parallel()
	topic := uniqueName("e2e-columns")
	a := startAgent(t, t.TempDir())
	python(t, "columns_records.py", "produce", "--bootstrap", env.bootstrap, "--topic", topic, "--from", "0", "--to", "5")

	jsonKey := func() *spec.Transformer {
		return &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT"}}
	}
	jsonValue := func(ddl, format string) *spec.Transformer {
		return &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: ddl, TimestampFormat: format}}
	}
	on := true
	inferred := func(jo spec.JSONOptions) *spec.Transformer {
		jo.SchemaEvolutionMode = spec.SchemaEvolutionAddNewColumns
		return &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &jo}
	}
	table := func(name string, ko spec.KafkaOptions, tc spec.TableConfiguration) spec.Table {
		ko.Topics, ko.StartingOffset = []string{topic}, spec.StartingOffsetEarliest
		return spec.Table{DestinationTable: name, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: ko}, TableConfiguration: tc}
	}
	ts := func(i int) string { return fmt.Sprintf("2024-01-02T03:04:05.%03d000Z", i) }
	raw := func(s string) map[string]any { return map[string]any{"bytes": s} }
	// headers are those columns_records.py gives every record: a repeated
	// key and a header without a value.
	headers := []any{map[string]any{"key": "h", "value": raw("a")}, map[string]any{"key": "h", "value": raw("b")},
		map[string]any{"key": "n", "value": nil}}
	// added sets, after the restart, the columns the records with new
	// fields added: their values from record 5 on, null before.
	added := func(m map[string]any, after bool, i int, cols map[string]any) map[string]any {
		for k, v := range cols {
			if !after {
				continue
			}
			if i < 5 {
				v = nil
			}
			m[k] = v
		}
		return m
	}
	tables := []columnsTable{{
		table: table("meta", spec.KafkaOptions{KeyTransformer: jsonKey(), KeyFieldsPrefix: "k_",
			ValueTransformer: jsonValue("id BIGINT, name STRING", "")},
			spec.TableConfiguration{SourceMetadataColumn: "_kafka", MetadataColumns: spec.MetadataColumnNames}),
		order: "offset", hasTime: true,
		before: `[["k_id","long"],["id","long"],["name","string"],["_kafka",{"topic":"string","partition":"integer","offset":"long",` +
			`"timestamp":"timestamp","timestampType":"integer","headers":[{"key":"string","value":"binary"}]}],` +
			`["topic","string"],["partition","integer"],["offset","long"],["timestamp","timestamp"],["timestamp_type","string"],` +
			`["headers",[{"key":"string","value":"binary"}]],["leader_epoch","integer"],["raw_key","binary"],["raw_value","binary"],` +
			`["_corrupt_record","binary"]]`,
		row: func(i int, _ bool) map[string]any {
			k, v := columnsRecord(i)
			return map[string]any{"k_id": i, "id": 100 + i, "name": fmt.Sprintf("n%d", i), "topic": topic, "partition": 0, "offset": i,
				"timestamp_type": "CreateTime", "leader_epoch": 0, "raw_key": raw(k), "raw_value": raw(v), "_corrupt_record": nil,
				"headers": headers}
		},
	}, {
		table: table("dup_key", spec.KafkaOptions{KeyTransformer: jsonKey(), ValueTransformer: jsonValue("id BIGINT, name STRING", ""),
			DuplicateFieldStrategy: spec.DuplicateFieldPreferKey}, spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset}}),
		order:  "offset",
		before: `[["id","long"],["name","string"],["offset","long"],["_corrupt_record","binary"]]`,
		row: func(i int, _ bool) map[string]any {
			return map[string]any{"id": i, "name": fmt.Sprintf("n%d", i), "offset": i, "_corrupt_record": nil}
		},
	}, {
		table: table("dup_value", spec.KafkaOptions{KeyTransformer: jsonKey(), ValueTransformer: jsonValue("id BIGINT, name STRING", ""),
			DuplicateFieldStrategy: spec.DuplicateFieldPreferValue}, spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset}}),
		order:  "offset",
		before: `[["id","long"],["name","string"],["offset","long"],["_corrupt_record","binary"]]`,
		row: func(i int, _ bool) map[string]any {
			return map[string]any{"id": 100 + i, "name": fmt.Sprintf("n%d", i), "offset": i, "_corrupt_record": nil}
		},
	}, {
		table: table("prefixed", spec.KafkaOptions{KeyTransformer: jsonKey(), KeyFieldsPrefix: "k_", ValueFieldsPrefix: "v_",
			ValueTransformer: inferred(spec.JSONOptions{InitialSchemas: map[string]string{"prefixed": "extra STRING, ts STRING"}})},
			spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset}}),
		order: "offset", extra: true,
		before: `[["k_id","long"],["v_extra","string"],["v_ts","string"],["v_id","long"],["v_name","string"],` +
			`["v_user",{"name":"string","addr":{"city":"string"}}],["v_iso","timestamp"],["offset","long"],` +
			`["_rescued_data","string"],["_corrupt_record","binary"]]`,
		after: `[["k_id","long"],["v_extra","string"],["v_ts","string"],["v_id","long"],["v_name","string"],` +
			`["v_user",{"name":"string","addr":{"city":"string"},"age":"long"}],["v_iso","timestamp"],["v_z","boolean"],["offset","long"],` +
			`["_rescued_data","string"],["_corrupt_record","binary"]]`,
		row: func(i int, after bool) map[string]any {
			user := added(map[string]any{"name": fmt.Sprintf("u%d", i), "addr": map[string]any{"city": fmt.Sprintf("c%d", i)}},
				after, i, map[string]any{"age": i})
			return added(map[string]any{"k_id": i, "v_extra": nil, "v_ts": fmt.Sprintf("2024-01-02 03:04:05.%03d", i), "v_id": 100 + i,
				"v_name": fmt.Sprintf("n%d", i), "v_user": user, "v_iso": ts(i), "offset": i,
				"_rescued_data": nil, "_corrupt_record": nil}, after, i, map[string]any{"v_z": true})
		},
	}, {
		table: table("flat", spec.KafkaOptions{ValueTransformer: inferred(spec.JSONOptions{FlattenNestedColumns: &on})},
			spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset}}),
		order: "offset", extra: true,
		before: `[["key","binary"],["id","long"],["name","string"],["user.name","string"],["user.addr.city","string"],["ts","string"],` +
			`["iso","timestamp"],["offset","long"],["_rescued_data","string"],["_corrupt_record","binary"]]`,
		after: `[["key","binary"],["id","long"],["name","string"],["user.name","string"],["user.addr.city","string"],["ts","string"],` +
			`["iso","timestamp"],["user.age","long"],["z","boolean"],["offset","long"],["_rescued_data","string"],["_corrupt_record","binary"]]`,
		row: func(i int, after bool) map[string]any {
			k, _ := columnsRecord(i)
			return added(map[string]any{"key": raw(k), "id": 100 + i, "name": fmt.Sprintf("n%d", i), "user.name": fmt.Sprintf("u%d", i),
				"user.addr.city": fmt.Sprintf("c%d", i), "ts": fmt.Sprintf("2024-01-02 03:04:05.%03d", i), "iso": ts(i),
				"offset": i, "_rescued_data": nil, "_corrupt_record": nil}, after, i, map[string]any{"user.age": i, "z": true})
		},
	}, {
		// SQL reads "yyyy-MM-dd HH:mm:ss.SSS" but not ISO 8601 text.
		table: table("sql_time", spec.KafkaOptions{ValueTransformer: jsonValue("ts TIMESTAMP, iso TIMESTAMP", spec.TimestampFormatSQL)},
			spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset}}),
		order:  "offset",
		before: `[["key","binary"],["ts","timestamp"],["iso","timestamp"],["offset","long"],["_corrupt_record","binary"]]`,
		row: func(i int, _ bool) map[string]any {
			k, v := columnsRecord(i)
			return map[string]any{"key": raw(k), "ts": ts(i), "iso": nil, "offset": i, "_corrupt_record": raw(v)}
		},
	}, {
		table: table("iso_time", spec.KafkaOptions{ValueTransformer: jsonValue("ts TIMESTAMP, iso TIMESTAMP", spec.TimestampFormatISO8601)},
			spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset}}),
		order:  "offset",
		before: `[["key","binary"],["ts","timestamp"],["iso","timestamp"],["offset","long"],["_corrupt_record","binary"]]`,
		row: func(i int, _ bool) map[string]any {
			k, _ := columnsRecord(i)
			return map[string]any{"key": raw(k), "ts": ts(i), "iso": ts(i), "offset": i, "_corrupt_record": nil}
		},
	}, {
		// Spark's includeHeaders: a top-level headers column of its type,
		// without the source metadata struct (offset orders the rows).
		table: table("spark_headers", spec.KafkaOptions{},
			spec.TableConfiguration{MetadataColumns: []string{spec.MetaOffset, spec.MetaHeaders}}),
		order:  "offset",
		before: `[["key","binary"],["value","binary"],["offset","long"],["headers",[{"key":"string","value":"binary"}]]]`,
		row: func(i int, _ bool) map[string]any {
			k, v := columnsRecord(i)
			return map[string]any{"key": raw(k), "value": raw(v), "offset": i, "headers": headers}
		},
	}}

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "cols", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	p := &spec.Pipeline{Name: "cols", Connection: "cols", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms"}
	for _, tt := range tables {
		p.Tables = append(p.Tables, tt.table)
	}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	check := func(rows int, after bool) {
		t.Helper()
		for idx, tt := range tables {
			st := a.waitRows("cols", idx, int64(rows), 2*time.Minute)
			r := readColumns(t, st.Location, tt.order)
			want := tt.before
			if after && tt.after != "" {
				want = tt.after
			}
			// In order, struct fields too.
			var got, w bytes.Buffer
			if err := errors.Join(json.Compact(&got, r.Columns), json.Compact(&w, []byte(want))); err != nil {
				t.Fatal(err)
			}
			t.Logf("table %s: %d rows by %d readers, columns %s", tt.table.DestinationTable, rows, len(r.Readers), got.String())
			if got.String() != w.String() {
				t.Errorf("table %s: columns\n%s\nwant\n%s", tt.table.DestinationTable, got.String(), w.String())
			}
			for reader, got := range r.Readers {
				if len(got) != rows {
					t.Errorf("table %s, %s: %d rows, want %d", tt.table.DestinationTable, reader, len(got), rows)
					continue
				}
				for i, row := range got {
					if tt.hasTime {
						if row["timestamp"] == nil || row["_kafka"] == nil {
							t.Errorf("table %s, %s, row %d: timestamp %v, _kafka %v", tt.table.DestinationTable, reader, i, row["timestamp"], row["_kafka"])
						}
						delete(row, "timestamp")
						delete(row, "_kafka")
					}
					if g, w := canonJSON(t, row), canonJSON(t, tt.row(i, after)); g != w {
						t.Errorf("table %s, %s, row %d:\n%s\nwant\n%s", tt.table.DestinationTable, reader, i, g, w)
					}
				}
			}
		}
	}
	check(5, false)

	// Records with new fields while the agent is down: the inferred
	// tables start from their columns in the log.
	a.stop()
	python(t, "columns_records.py", "produce", "--bootstrap", env.bootstrap, "--topic", topic, "--from", "5", "--to", "10", "--extra")
	a.start()
	check(10, true)
}
