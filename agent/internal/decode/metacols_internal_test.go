package decode

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestMetadataColumns checks each metadata column's value, beside the
// source metadata column and before the rescue and _corrupt_record
// columns, whose places they shift.
func TestMetadataColumns(t *testing.T) {
	l := inferredValue(spec.SchemaEvolutionAddNewColumns, null("id", tLong))
	// A name spec does not know (Validate refuses it) is no column.
	l.Meta = append([]string{"nope"}, spec.MetadataColumnNames...)
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC)
	tests := []struct {
		name string
		rec  record.Record
		want map[string]string
	}{
		{"all set", record.Record{Topic: "orders", Partition: 3, Offset: 1 << 40, Timestamp: ts, TimestampType: 1, LeaderEpoch: 7,
			Key: []byte("k"), Value: []byte(`{"id":1}`), Headers: []record.Header{{Key: "h", Value: []byte("1")}, {Key: "h"}}},
			map[string]string{"topic": `"orders"`, "partition": "3", "offset": "1099511627776", "timestamp": "2024-01-02T03:04:05.123456Z",
				"timestamp_type": `"LogAppendTime"`, "headers": `[{key="h" value=b"1"} {key="h" value=null}]`, "leader_epoch": "7",
				"raw_key": `b"k"`, "raw_value": `b"{\"id\":1}"`, "id": "1", spec.RescuedDataColumn: "null", spec.CorruptRecordColumn: "null"}},
		{"none set", record.Record{Topic: "t", LeaderEpoch: -1, Value: []byte(`{"id":"x"}`)},
			map[string]string{"timestamp": "null", "timestamp_type": `"CreateTime"`, "headers": "null", "leader_epoch": "null",
				"raw_key": "null", "id": "null", spec.RescuedDataColumn: `"{\"id\":\"x\"}"`, spec.CorruptRecordColumn: "null"}},
		{"corrupt", record.Record{Topic: "t", TimestampType: 5, Value: []byte(`{`)},
			map[string]string{"timestamp_type": `"NoTimestampType"`, "leader_epoch": "0", "raw_value": `b"{"`,
				spec.RescuedDataColumn: "null", spec.CorruptRecordColumn: `b"{"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, _ := decodeRow(t, l, tc.rec)
			for k, want := range tc.want {
				if cols[k] != want {
					t.Errorf("%s = %s, want %s", k, cols[k], want)
				}
			}
			if cols["_kafka"] == "" || cols["_kafka"] == "null" {
				t.Errorf("source metadata column %q", cols["_kafka"])
			}
		})
	}
}

// TestPrefixedParts checks that key_fields_prefix and value_fields_prefix
// name the parsed columns while decoding matches the fields' own names,
// and that an inferred part's new field clashes with another column only
// under its prefixed name.
func TestPrefixedParts(t *testing.T) {
	tr := &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}}
	l := &spec.Layout{
		Key:           spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{null("id", tLong)}, Column: spec.KeyColumn, Prefix: "k_"},
		Value:         spec.Part{Format: spec.FormatJSON, Transformer: tr, Fields: []schema.Field{null("id", tLong)}, Column: spec.ValueColumn, Prefix: "v_", Rescue: tr.JSONOptions.RescueColumn()},
		CorruptRecord: true,
	}
	cols, _ := decodeRow(t, l, record.Record{Key: []byte(`{"id":1}`), Value: []byte(`{"id":2}`)})
	if cols["k_id"] != "1" || cols["v_id"] != "2" {
		t.Fatalf("columns %v", cols)
	}
	// "k_id" in the value is a new field: its column v_k_id takes no
	// other column's name. A value field "id" named like the key's
	// column without prefixes is not a clash either.
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Decode(context.Background(), []record.Record{{Key: []byte(`{"id":1}`), Value: []byte(`{"id":2,"k_id":3}`)}})
	var nc *NewColumnsError
	if !errors.As(err, &nc) || schema.FormatDDL(nc.Fields) != "id BIGINT, k_id BIGINT" {
		t.Fatalf("Decode: %v, want the new column k_id", err)
	}
	// Without the value's prefix, its field k_id is the key's column:
	// rescued.
	l.Value.Prefix = ""
	cols, _ = decodeRow(t, l, record.Record{Key: []byte(`{"id":1}`), Value: []byte(`{"id":2,"k_id":3}`)})
	if cols["id"] != "2" || cols[spec.RescuedDataColumn] != `"{\"k_id\":3}"` {
		t.Fatalf("columns %v", cols)
	}
}

// TestMetadataColumnKinds: every metadata column spec accepts has a kind
// the writer writes.
func TestMetadataColumnKinds(t *testing.T) {
	for _, name := range spec.MetadataColumnNames {
		if metaKinds[name] == metaNone {
			t.Errorf("metadata column %q has no kind", name)
		}
	}
}
