package spec

import "fmt"

// Parse modes of the Avro and Protobuf transformers: what a
// record that fails to decode does.
const (
	// ParseModePermissive writes the raw bytes of a record that fails to
	// decode to _corrupt_record, leaves its decoded columns null and goes
	// on.
	ParseModePermissive = "PERMISSIVE"
	// ParseModeFailFast stops the table in FAILED at the first record that
	// fails to decode, without committing it, so that a restart reads it
	// again.
	ParseModeFailFast = "FAILFAST"
)

// ParseModes lists the accepted parse_mode values.
var ParseModes = []string{ParseModePermissive, ParseModeFailFast}

// DefaultParseMode is the parse mode of an Avro or Protobuf transformer
// without one.
const DefaultParseMode = ParseModePermissive

// Bounds of protobuf_options.recursive_fields_max_depth: -1 refuses
// recursive messages, 0 drops recursive fields, 1..10 expand them.
const (
	MinRecursiveDepth     = -1
	MaxRecursiveDepth     = 10
	DefaultRecursiveDepth = -1
)

// AvroOptions configures the Avro transformer. Exactly one of
// Schema, SchemaFilePath and SchemaRegistry says where the schema comes
// from.
type AvroOptions struct {
	// Schema is an inline Avro schema in its JSON form. Records are plain
	// binary Avro written with it, without any framing.
	Schema string `json:"schema,omitempty"`
	// SchemaFilePath names an .avsc file. The provider reads it, relative
	// to the Terraform module, and sends its text as SchemaFileContent; the
	// agent never reads the path itself.
	SchemaFilePath    string `json:"schema_file_path,omitempty"`
	SchemaFileContent string `json:"schema_file_content,omitempty"`
	// SchemaRegistry resolves the schema from a Confluent-compatible
	// registry at run time; records carry Confluent's framing (a zero
	// byte and the 4-byte schema id).
	SchemaRegistry *SchemaRegistryOptions `json:"schema_registry,omitempty"`
	// ParseMode is one of [ParseModes]; empty means [DefaultParseMode].
	ParseMode string `json:"parse_mode,omitempty"`
}

// ProtobufOptions configures the Protobuf transformer. Exactly
// one of DescFilePath and SchemaRegistry says where the schema comes from.
type ProtobufOptions struct {
	// DescFilePath names a compiled descriptor set (protoc
	// --descriptor_set_out, a serialized FileDescriptorSet). The provider
	// reads it, relative to the Terraform module, and sends its bytes as
	// DescFileContent (base64 in JSON). Records are plain Protobuf
	// messages of MessageName, without framing.
	DescFilePath    string `json:"desc_file_path,omitempty"`
	DescFileContent []byte `json:"desc_file_content,omitempty"`
	// MessageName is the message type of DescFilePath, fully qualified
	// ("com.example.Event") or, when unique, simple ("Event").
	MessageName string `json:"message_name,omitempty"`
	// SchemaRegistry resolves the schema from a Confluent-compatible
	// registry at run time; records carry Confluent's framing (a zero
	// byte, the 4-byte schema id and the message indexes).
	SchemaRegistry *SchemaRegistryOptions `json:"schema_registry,omitempty"`
	// RecursiveFieldsMaxDepth is how deep recursive message fields are
	// expanded: -1 refuses a recursive message, 0 drops recursive fields,
	// 1..10 expand them that many levels, as the product's option defines
	// it; Spark's recursive.fields.max.depth counts one more (its n+1 is
	// our n). Nil means [DefaultRecursiveDepth].
	RecursiveFieldsMaxDepth *int64 `json:"recursive_fields_max_depth,omitempty"`
	// ParseMode is one of [ParseModes]; empty means [DefaultParseMode].
	ParseMode string `json:"parse_mode,omitempty"`
}

// SchemaRegistryOptions says which registry subject an Avro or Protobuf
// transformer resolves.
type SchemaRegistryOptions struct {
	ConfluentOptions ConfluentOptions `json:"confluent_options"`
	// ConnectionName names the connection whose schema registry (URL and
	// credentials) is used; empty means the pipeline's connection.
	ConnectionName string `json:"connection_name,omitempty"`
	// ProtobufMessageName selects the message of a Protobuf subject that
	// defines several, by simple or fully qualified name; empty means the
	// first message. Records name their message with Confluent's message
	// indexes; this one sets the table's columns.
	ProtobufMessageName string `json:"protobuf_message_name,omitempty"`
}

// ConfluentOptions are the options of a Confluent-compatible registry.
type ConfluentOptions struct {
	// Subject is the registry subject whose latest version, when a table
	// starts, sets the table's columns, e.g. "orders-value".
	Subject string `json:"subject"`
}

// Mode returns the parse mode of the transformer: its Avro or Protobuf
// parse_mode, or [DefaultParseMode]. JSON transformers are always
// permissive.
func (tr *Transformer) Mode() string {
	m := ""
	switch {
	case tr == nil:
	case tr.AvroOptions != nil:
		m = tr.AvroOptions.ParseMode
	case tr.ProtobufOptions != nil:
		m = tr.ProtobufOptions.ParseMode
	}
	if m == "" {
		return DefaultParseMode
	}
	return m
}

// Registry returns the transformer's schema registry options, or nil when
// its schema does not come from a registry.
func (tr *Transformer) Registry() *SchemaRegistryOptions {
	switch {
	case tr == nil:
		return nil
	case tr.Format == FormatAvro && tr.AvroOptions != nil:
		return tr.AvroOptions.SchemaRegistry
	case tr.Format == FormatProtobuf && tr.ProtobufOptions != nil:
		return tr.ProtobufOptions.SchemaRegistry
	}
	return nil
}

// RecursiveDepth returns RecursiveFieldsMaxDepth, or its default.
func (po *ProtobufOptions) RecursiveDepth() int {
	if po.RecursiveFieldsMaxDepth == nil {
		return DefaultRecursiveDepth
	}
	return int(*po.RecursiveFieldsMaxDepth)
}

// RegistryRef is one use of a schema registry by a pipeline: a transformer
// whose schema comes from the registry of connection Connection.
type RegistryRef struct {
	// Path is the transformer's schema_registry attribute, e.g.
	// "table[0].connector_options.kafka_options.value_transformer.avro_options.schema_registry".
	Path string
	// Connection names the connection whose registry is used: the
	// registry block's connection_name, or the pipeline's connection.
	Connection string
}

// RegistryRefs lists every transformer of p whose schema comes from a
// registry, in table order, key before value.
func (p *Pipeline) RegistryRefs() []RegistryRef {
	var refs []RegistryRef
	for i := range p.Tables {
		ko := &p.Tables[i].ConnectorOptions.KafkaOptions
		for _, side := range []struct {
			name string
			tr   *Transformer
		}{{"key_transformer", ko.KeyTransformer}, {"value_transformer", ko.ValueTransformer}} {
			reg := side.tr.Registry()
			if reg == nil {
				continue
			}
			opts := "avro_options"
			if side.tr.Format == FormatProtobuf {
				opts = "protobuf_options"
			}
			conn := reg.ConnectionName
			if conn == "" {
				conn = p.Connection
			}
			refs = append(refs, RegistryRef{
				Path:       fmt.Sprintf("table[%d].connector_options.kafka_options.%s.%s.schema_registry", i, side.name, opts),
				Connection: conn,
			})
		}
	}
	return refs
}
