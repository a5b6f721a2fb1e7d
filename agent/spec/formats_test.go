package spec

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// eventsDesc reads the descriptor set of the protobuf package's tests.
func eventsDesc(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../internal/decode/protobuf/testdata/events.desc")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

const (
	avroOrder = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	avroKey   = `{"type":"record","name":"K","fields":[{"name":"ID","type":"long"}]}`
)

// TestLayoutFormatRules checks the plan-time rules Layout applies to Avro
// and Protobuf schemas.
func TestLayoutFormatRules(t *testing.T) {
	desc := eventsDesc(t)
	ko := func(p *Pipeline) *KafkaOptions { return &p.Tables[0].ConnectorOptions.KafkaOptions }
	avroValue := func(p *Pipeline, ao *AvroOptions) {
		ko(p).ValueTransformer = &Transformer{Format: FormatAvro, AvroOptions: ao}
	}
	protoValue := func(p *Pipeline, po *ProtobufOptions) {
		ko(p).ValueTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: po}
	}
	const vt = "table[0].connector_options.kafka_options.value_transformer."
	tests := []pipelineCase{
		{"inline avro", func(p *Pipeline) { avroValue(p, &AvroOptions{Schema: avroOrder}) }, "", ""},
		{"avro file", func(p *Pipeline) {
			avroValue(p, &AvroOptions{SchemaFilePath: "o.avsc", SchemaFileContent: avroOrder})
		}, "", ""},
		{"inline avro does not parse", func(p *Pipeline) {
			avroValue(p, &AvroOptions{Schema: `{"type":"record","name":"O","fields":[{"name":"id","type":"lung"}]}`})
		}, vt + "avro_options.schema", "lung"},
		{"avro file does not parse", func(p *Pipeline) {
			avroValue(p, &AvroOptions{SchemaFilePath: "o.avsc", SchemaFileContent: `{"type":`})
		}, vt + "avro_options.schema_file_path", "o.avsc is not a valid Avro schema"},
		{"avro field _corrupt_record", func(p *Pipeline) {
			avroValue(p, &AvroOptions{Schema: `{"type":"record","name":"O","fields":[{"name":"_corrupt_record","type":"string"}]}`})
		}, vt + "avro_options.schema", "reserved"},
		{"avro key and value collide", func(p *Pipeline) {
			avroValue(p, &AvroOptions{Schema: avroOrder})
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: avroKey}}
		}, vt + "avro_options.schema", `column "id" from the value schema collides`},
		{"avro non-record key and value", func(p *Pipeline) {
			avroValue(p, &AvroOptions{Schema: `"string"`})
			ko(p).KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: `"long"`}}
		}, "", ""},
		{"protobuf", func(p *Pipeline) {
			protoValue(p, &ProtobufOptions{DescFilePath: "e.desc", DescFileContent: desc, MessageName: "Order"})
		}, "", ""},
		{"not a descriptor set", func(p *Pipeline) {
			protoValue(p, &ProtobufOptions{DescFilePath: "e.desc", DescFileContent: []byte("syntax = \"proto3\";"), MessageName: "Order"})
		}, vt + "protobuf_options.desc_file_path", "e.desc is not a usable descriptor set"},
		{"message not in the set", func(p *Pipeline) {
			protoValue(p, &ProtobufOptions{DescFilePath: "e.desc", DescFileContent: desc, MessageName: "Nope"})
		}, vt + "protobuf_options.message_name", "tributary.events.Order"},
		{"recursive message refused", func(p *Pipeline) {
			d := int64(-1)
			protoValue(p, &ProtobufOptions{DescFilePath: "e.desc", DescFileContent: desc, MessageName: "Node", RecursiveFieldsMaxDepth: &d})
		}, vt + "protobuf_options.recursive_fields_max_depth", "set recursive_fields_max_depth to 0 to drop recursive fields"},
		{"recursive message expanded", func(p *Pipeline) {
			d := int64(2)
			protoValue(p, &ProtobufOptions{DescFilePath: "e.desc", DescFileContent: desc, MessageName: "Node", RecursiveFieldsMaxDepth: &d})
		}, "", ""},
	}
	runPipelineCases(t, tests, func(t *testing.T, tt pipelineCase, e FieldError) {
		if tt.name == "message not in the set" && !strings.Contains(e.Detail, "tributary.events.Event") {
			t.Errorf("the error lists the available messages: %v", e)
		}
	})
}

// TestLayoutCorruptRecord checks which layouts have _corrupt_record.
func TestLayoutCorruptRecord(t *testing.T) {
	desc := eventsDesc(t)
	tests := []struct {
		name     string
		key, val *Transformer
		want     bool
	}{
		{"binary", nil, nil, false},
		{"string", &Transformer{Format: FormatString}, nil, false},
		{"json", nil, &Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{Schema: "a INT"}}, true},
		{"json as variant", nil, &Transformer{Format: FormatJSON}, true},
		{"permissive avro", nil, &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: avroOrder}}, true},
		{"default avro registry", nil, &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: registry("v")}}, true},
		{"failfast avro", nil, &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: avroOrder, ParseMode: ParseModeFailFast}}, false},
		{"failfast avro and protobuf", &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: registry("k"), ParseMode: ParseModeFailFast}},
			&Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{DescFilePath: "e.desc", DescFileContent: desc, MessageName: "Order",
				ParseMode: ParseModeFailFast}}, false},
		{"failfast key, permissive protobuf value", &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: `"long"`, ParseMode: ParseModeFailFast}},
			&Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{SchemaRegistry: registry("v")}}, true},
	}
	for _, tt := range tests {
		tbl := Table{DestinationTable: "t", ConnectorOptions: ConnectorOptions{KafkaOptions: KafkaOptions{
			Topics: []string{"t"}, KeyTransformer: tt.key, ValueTransformer: tt.val}}}
		l, errs := tbl.Layout()
		if len(errs) > 0 {
			t.Fatalf("%s: %v", tt.name, errs)
		}
		if l.CorruptRecord != tt.want {
			t.Errorf("%s: CorruptRecord %v, want %v", tt.name, l.CorruptRecord, tt.want)
		}
		has := false
		for _, c := range l.Columns() {
			has = has || c.Name == CorruptRecordColumn
		}
		if has != tt.want {
			t.Errorf("%s: _corrupt_record column %v, want %v", tt.name, has, tt.want)
		}
	}
}

func TestRegistryRefs(t *testing.T) {
	p := validPipeline()
	p.Tables = append(p.Tables, p.Tables[0], p.Tables[0])
	p.Tables[1].DestinationTable, p.Tables[2].DestinationTable = "b", "c"
	other := registry("k")
	other.ConnectionName = "regs"
	p.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: other}}
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{SchemaRegistry: registry("v")}}
	// Table 1 keeps its JSON value; table 2 has an inline Avro value and
	// an explicit connection_name equal to the pipeline's.
	own := registry("v2")
	own.ConnectionName = p.Connection
	p.Tables[2].ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{Schema: `"long"`}}
	p.Tables[2].ConnectorOptions.KafkaOptions.ValueTransformer = &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: own}}
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, r := range p.RegistryRefs() {
		got = append(got, r.Path+" -> "+r.Connection)
	}
	want := []string{
		"table[0].connector_options.kafka_options.key_transformer.avro_options.schema_registry -> regs",
		"table[0].connector_options.kafka_options.value_transformer.protobuf_options.schema_registry -> c1",
		"table[2].connector_options.kafka_options.value_transformer.avro_options.schema_registry -> c1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("RegistryRefs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProtobufProblemsIndependent checks that each independent problem of
// protobuf_options is reported once, on its own attribute: an unusable
// descriptor set does not hide an out-of-range recursive_fields_max_depth,
// and that depth is not reported again on desc_file_path.
func TestProtobufProblemsIndependent(t *testing.T) {
	const po = "table[0].connector_options.kafka_options.value_transformer.protobuf_options."
	depth := int64(11)
	for _, tt := range []struct {
		name    string
		content []byte
		want    []string
	}{
		{"unusable descriptor set", []byte("junk"), []string{po + "recursive_fields_max_depth", po + "desc_file_path"}},
		{"usable descriptor set", eventsDesc(t), []string{po + "recursive_fields_max_depth"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := validPipeline()
			p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &Transformer{Format: FormatProtobuf, ProtobufOptions: &ProtobufOptions{
				DescFilePath: "e.desc", DescFileContent: tt.content, MessageName: "Order", RecursiveFieldsMaxDepth: &depth,
			}}
			var got []string
			for _, e := range p.Validate() {
				got = append(got, e.Path)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems on %q, want %q", got, tt.want)
			}
		})
	}
}
