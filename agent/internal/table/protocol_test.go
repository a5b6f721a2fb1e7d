package table_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// protocol is a protocol action as the log holds it.
type protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures"`
	WriterFeatures   []string `json:"writerFeatures"`
}

// logAction decodes the action of kind in log version v into out and
// reports whether the entry has one.
func logAction(t *testing.T, dir string, v int, kind string, out any) bool {
	t.Helper()
	for _, l := range readLog(t, dir, v) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log %d: %v", v, err)
		}
		if raw, ok := m[kind]; ok {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("log %d: %s: %v", v, kind, err)
			}
			return true
		}
	}
	return false
}

// metaConfig returns the configuration of log version v's metaData action.
func metaConfig(t *testing.T, dir string, v int) map[string]string {
	t.Helper()
	var md struct {
		Configuration map[string]string `json:"configuration"`
	}
	if !logAction(t, dir, v, "metaData", &md) {
		t.Fatalf("log %d has no metaData action", v)
	}
	return md.Configuration
}

func field(name string, k schema.Kind, nullable bool) schema.Field {
	return schema.Field{Name: name, Type: &schema.Type{Kind: k}, Nullable: nullable}
}

// TestProtocolNewTable: a new table is append-only (delta.appendOnly =
// true) and its protocol lists every feature its metadata implies, so that
// Spark accepts it.
func TestProtocolNewTable(t *testing.T) {
	nullable := []schema.Field{field("id", schema.Long, true), field("name", schema.String, true)}
	ntz := field("at", schema.TimestampNTZ, true)
	variant := field("v", schema.Variant, true)
	nested := func(nullable bool) schema.Field {
		return schema.Field{Name: "m", Nullable: true, Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
			field("offset", schema.Long, nullable),
		}}}
	}
	tests := []struct {
		name   string
		fields []schema.Field
		want   protocol
	}{
		{"nullable columns", nullable, protocol{1, 2, nil, nil}},
		{"NOT NULL column", testFields, protocol{1, 2, nil, nil}},
		{"TIMESTAMP_NTZ", append(slices.Clone(nullable), ntz),
			protocol{3, 7, []string{"timestampNtz"}, []string{"appendOnly", "timestampNtz"}}},
		{"TIMESTAMP_NTZ and NOT NULL column", append(slices.Clone(testFields), ntz),
			protocol{3, 7, []string{"timestampNtz"}, []string{"appendOnly", "invariants", "timestampNtz"}}},
		{"TIMESTAMP_NTZ and nested NOT NULL field", append(slices.Clone(nullable), ntz, nested(false)),
			protocol{3, 7, []string{"timestampNtz"}, []string{"appendOnly", "invariants", "timestampNtz"}}},
		{"TIMESTAMP_NTZ and nested nullable field", append(slices.Clone(nullable), ntz, nested(true)),
			protocol{3, 7, []string{"timestampNtz"}, []string{"appendOnly", "timestampNtz"}}},
		{"nested TIMESTAMP_NTZ", append(slices.Clone(nullable), schema.Field{Name: "a", Nullable: true,
			Type: &schema.Type{Kind: schema.Array, Elem: &schema.Type{Kind: schema.TimestampNTZ}}}),
			protocol{3, 7, []string{"timestampNtz"}, []string{"appendOnly", "timestampNtz"}}},
		{"VARIANT", append(slices.Clone(nullable), variant),
			protocol{3, 7, []string{"variantType"}, []string{"appendOnly", "variantType"}}},
		{"nested VARIANT and NOT NULL column", append(slices.Clone(testFields), schema.Field{Name: "s", Nullable: true,
			Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{variant}}}),
			protocol{3, 7, []string{"variantType"}, []string{"appendOnly", "invariants", "variantType"}}},
		{"TIMESTAMP_NTZ and VARIANT", append(slices.Clone(nullable), variant, ntz),
			protocol{3, 7, []string{"timestampNtz", "variantType"}, []string{"appendOnly", "timestampNtz", "variantType"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tb := openTable(t, dir, table.Options{})
			mustCommit(t, tb, table.Commit{Schema: tt.fields})
			var got protocol
			if !logAction(t, dir, 0, "protocol", &got) {
				t.Fatal("log 0 has no protocol action")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("protocol = %+v, want %+v", got, tt.want)
			}
			if c := metaConfig(t, dir, 0); c["delta.appendOnly"] != "true" {
				t.Errorf("configuration = %v, want delta.appendOnly = true", c)
			}
			// Later commits leave a complete protocol alone.
			mustCommit(t, tb, table.Commit{Schema: tt.fields, Txns: map[string]int64{"a": 1}})
			if hasAction(t, dir, 1, "protocol") {
				t.Error("a commit without changes wrote a protocol action")
			}
		})
	}
}

// The metadata column as versions before nullable nested fields wrote it.
var (
	oldMetaFields = []schema.Field{
		field("value", schema.Binary, true),
		field("at", schema.TimestampNTZ, true),
		{Name: "_kafka", Nullable: true, Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
			field("topic", schema.String, false),
			field("offset", schema.Long, false),
			field("timestamp", schema.Timestamp, true),
		}}},
	}
	newMetaFields = []schema.Field{
		oldMetaFields[0], oldMetaFields[1],
		{Name: "_kafka", Nullable: true, Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
			field("topic", schema.String, true),
			field("offset", schema.Long, true),
			field("timestamp", schema.Timestamp, true),
		}}},
	}
)

// writeOldTable writes version 0 of a table as an earlier version of this
// package did: protocol, schema and configuration as given.
func writeOldTable(t *testing.T, proto string, fields []schema.Field, config string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	js, err := schema.SparkJSON(fields)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(js)
	writeLog(t, dir, 0, strings.Join([]string{
		`{"commitInfo":{"timestamp":1,"operation":"STREAMING UPDATE","operationParameters":{"outputMode":"Append"},"isBlindAppend":true,"operationMetrics":{"numAddedFiles":"0","numOutputBytes":"0","numOutputRows":"0"},"engineInfo":"tributary-agent"}}`,
		`{"protocol":` + proto + `}`,
		fmt.Sprintf(`{"metaData":{"id":"0d5c4fa4-4c47-4c39-8d7a-2b0b4a0d4f1e","format":{"provider":"parquet","options":{}},"schemaString":%s,"partitionColumns":[],"configuration":%s,"createdTime":1}}`, q, config),
	}, "\n")+"\n")
	return dir
}

// TestProtocolOldTables: tables written by earlier versions (NOT NULL
// fields nested in the metadata column without the invariants feature,
// which Spark refuses; no delta.appendOnly) open and take appends. The
// first commit repairs the protocol, or relaxes the schema so that nothing
// needs repair; their configuration is left as it is.
func TestProtocolOldTables(t *testing.T) {
	const ntzOnly = `{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}`
	t.Run("nested fields relaxed", func(t *testing.T) {
		dir := writeOldTable(t, ntzOnly, oldMetaFields, `{}`)
		tb := openTable(t, dir, table.Options{})
		mustCommit(t, tb, table.Commit{Schema: newMetaFields, Txns: map[string]int64{"a": 1}})
		if hasAction(t, dir, 1, "protocol") {
			t.Errorf("relaxing the schema wrote a protocol action: %v", readLog(t, dir, 1))
		}
		if c := metaConfig(t, dir, 1); len(c) != 0 {
			t.Errorf("configuration = %v, want it unchanged (empty)", c)
		}
		if got := tb.Snapshot().Schema; !schema.Equal(got, newMetaFields) {
			t.Errorf("schema = %v, want %v", got, newMetaFields)
		}
	})
	t.Run("schema kept", func(t *testing.T) {
		dir := writeOldTable(t, ntzOnly, oldMetaFields, `{}`)
		tb := openTable(t, dir, table.Options{})
		mustCommit(t, tb, table.Commit{Schema: oldMetaFields, Txns: map[string]int64{"a": 1}})
		var got protocol
		if !logAction(t, dir, 1, "protocol", &got) {
			t.Fatalf("log 1 = %v, want a protocol action adding invariants", readLog(t, dir, 1))
		}
		want := protocol{3, 7, []string{"timestampNtz"}, []string{"timestampNtz", "invariants"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("protocol = %+v, want %+v", got, want)
		}
		mustCommit(t, tb, table.Commit{Txns: map[string]int64{"b": 1}})
		if hasAction(t, dir, 2, "protocol") || hasAction(t, dir, 2, "metaData") {
			t.Errorf("log 2 = %v, want no protocol or metaData", readLog(t, dir, 2))
		}
	})
	t.Run("appendOnly set by another engine", func(t *testing.T) {
		dir := writeOldTable(t, ntzOnly, newMetaFields, `{"delta.appendOnly":"true"}`)
		mustCommit(t, openTable(t, dir, table.Options{}), table.Commit{Txns: map[string]int64{"a": 1}})
		var got protocol
		logAction(t, dir, 1, "protocol", &got)
		want := protocol{3, 7, []string{"timestampNtz"}, []string{"timestampNtz", "appendOnly"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("protocol = %+v, want %+v", got, want)
		}
	})
	t.Run("VARIANT column added", func(t *testing.T) {
		dir := writeOldTable(t, ntzOnly, newMetaFields, `{}`)
		tb := openTable(t, dir, table.Options{})
		mustCommit(t, tb, table.Commit{Schema: append(slices.Clone(newMetaFields), field("v", schema.Variant, true))})
		var got protocol
		logAction(t, dir, 1, "protocol", &got)
		want := protocol{3, 7, []string{"timestampNtz", "variantType"}, []string{"timestampNtz", "variantType"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("protocol = %+v, want %+v", got, want)
		}
	})
	t.Run("legacy table gains a VARIANT column", func(t *testing.T) {
		fields := []schema.Field{field("id", schema.Long, true)}
		dir := writeOldTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, fields, `{}`)
		tb := openTable(t, dir, table.Options{})
		mustCommit(t, tb, table.Commit{Schema: append(fields, field("v", schema.Variant, true))})
		var got protocol
		logAction(t, dir, 1, "protocol", &got)
		want := protocol{3, 7, []string{"variantType"}, []string{"appendOnly", "invariants", "variantType"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("protocol = %+v, want %+v", got, want)
		}
	})
	t.Run("writer version 1", func(t *testing.T) {
		dir := writeOldTable(t, `{"minReaderVersion":1,"minWriterVersion":1}`, testFields, `{}`)
		mustCommit(t, openTable(t, dir, table.Options{}), table.Commit{Txns: map[string]int64{"a": 1}})
		var got protocol
		logAction(t, dir, 1, "protocol", &got)
		if want := (protocol{1, 2, nil, nil}); !reflect.DeepEqual(got, want) {
			t.Errorf("protocol = %+v, want %+v (NOT NULL id needs invariants)", got, want)
		}
	})
	t.Run("legacy table", func(t *testing.T) {
		dir := writeOldTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, testFields, `{}`)
		tb := openTable(t, dir, table.Options{})
		mustCommit(t, tb, table.Commit{Txns: map[string]int64{"a": 1}})
		if hasAction(t, dir, 1, "protocol") {
			t.Errorf("log 1 = %v, want no protocol action", readLog(t, dir, 1))
		}
	})
}
