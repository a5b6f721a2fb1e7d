package decode

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf/protobuftest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// protoTable returns a table whose value is plain Protobuf message name of
// protobuf/testdata/events.desc.
func protoTable(t *testing.T, name, mode string) *spec.Table {
	t.Helper()
	desc, err := os.ReadFile("protobuf/testdata/events.desc")
	if err != nil {
		t.Fatal(err)
	}
	return &spec.Table{
		DestinationTable: "t",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"t"},
			ValueTransformer: &spec.Transformer{Format: spec.FormatProtobuf, ProtobufOptions: &spec.ProtobufOptions{
				DescFilePath: "events.desc", DescFileContent: desc, MessageName: name, ParseMode: mode}}}},
	}
}

func TestStaticProtobuf(t *testing.T) {
	l := layoutOf(t, protoTable(t, "tributary.events.Order", ""))
	if got := names(l.Columns()); got != "key,id,customer,amount,quantity,kind,created,tags,paid,note,source,_corrupt_record" {
		t.Fatalf("columns %s, want Order's", got)
	}
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	desc, _ := os.ReadFile("protobuf/testdata/events.desc")
	files, err := protoschema.LoadDescriptorSet(desc)
	if err != nil {
		t.Fatal(err)
	}
	md, err := protoschema.FindMessage(files, "tributary.events.Order")
	if err != nil {
		t.Fatal(err)
	}
	good := protobuftest.Encode(t, md, `{"id":"7","customer":"c","kind":"VIEW","created":"2024-01-02T03:04:05Z"}`)
	bad := []byte{0x0a, 0x05, 'a'} // field 1 length-delimited, truncated
	// An empty value is a message with every field unset: null, as Spark
	// reads it without emit.default.values, and not corrupt.
	rows, st := rendered(t, d, []record.Record{{Value: good}, {Value: nil}, {Value: []byte{}}, {Value: bad}})
	want := []string{`7 "c" "VIEW" 2024-01-02T03:04:05Z`, `null null null null`, `null null null null`, `null null null null`}
	for i, w := range want {
		if got := pick(rows[i], "id", "customer", "kind", "created"); got != w {
			t.Errorf("row %d: %s, want %s", i, got, w)
		}
	}
	if got := rows[3][spec.CorruptRecordColumn]; got != "b"+quoteBytes(bad) || st.Corrupt != 1 {
		t.Errorf("truncated message: _corrupt_record %s, %d corrupt", got, st.Corrupt)
	}

	fd, err := New(layoutOf(t, protoTable(t, "Order", spec.ParseModeFailFast)), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fd.Decode(context.Background(), []record.Record{{Topic: "t", Partition: 3, Offset: 9, Value: bad}})
	var re *RecordError
	if !errors.As(err, &re) || re.Partition != 3 || re.Offset != 9 {
		t.Errorf("FAILFAST: %v, want a RecordError at t[3]@9", err)
	}
}
