package decode

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestDuplicateFieldsAvro checks duplicate_field_strategy with an Avro
// value: the losing side's field is no column and is not decoded, Avro
// skipping its field rather than failing for want of a column.
func TestDuplicateFieldsAvro(t *testing.T) {
	tests := []struct {
		strategy, keyPrefix, want string // columns; id name qty
	}{
		{spec.DuplicateFieldPreferKey, "", "id,name,qty,note,_corrupt_record 1 \"a\" 2"},
		{spec.DuplicateFieldPreferValue, "", "id,name,qty,note,_corrupt_record 5 \"a\" 2"},
		{spec.DuplicateFieldPreferKey, "k_", "k_id,id,name,qty,note,_corrupt_record 5 \"a\" 2"},
	}
	for _, tc := range tests {
		t.Run(tc.strategy+tc.keyPrefix, func(t *testing.T) {
			tbl := avroTable(ordersV3, "")
			ko := &tbl.ConnectorOptions.KafkaOptions
			ko.KeyTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT"}}
			ko.DuplicateFieldStrategy, ko.KeyFieldsPrefix = tc.strategy, tc.keyPrefix
			l := layoutOf(t, tbl)
			d, err := New(l, nil)
			if err != nil {
				t.Fatal(err)
			}
			rows, st := rendered(t, d, []record.Record{{Key: []byte(`{"id":1}`), Value: avroBytes(t, ordersV3, order{ID: 5, Name: "a", Qty: 2})}})
			if got := names(l.Columns()) + " " + pick(rows[0], "id", "name", "qty"); got != tc.want || st.Corrupt != 0 {
				t.Errorf("columns and row %s (%d corrupt), want %s", got, st.Corrupt, tc.want)
			}
		})
	}
}
