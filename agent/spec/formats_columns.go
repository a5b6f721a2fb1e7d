package spec

import (
	"errors"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// avroFields parses the inline or file schema of ao into the part's columns;
// attr is the attribute it came from.
func avroFields(ac collector, ao *AvroOptions, column string) (fields []schema.Field, attr string, ok bool) {
	text, attr, where := ao.Schema, "schema", "the schema"
	if ao.SchemaFilePath != "" {
		text, attr, where = ao.SchemaFileContent, "schema_file_path", "the schema in "+ao.SchemaFilePath
	}
	if text == "" {
		return nil, attr, false // Validate reports the missing schema
	}
	s, err := avroschema.Parse(text)
	if err != nil {
		ac.add(attr, "%s is not a valid Avro schema: %v", where, err)
		return nil, attr, false
	}
	if fields, err = avroschema.Columns(s, column); err != nil {
		ac.add(attr, "%s cannot become table columns: %v", where, err)
		return nil, attr, false
	}
	return fields, attr, true
}

// protobufFields loads the descriptor set of po and maps its message to the
// part's columns.
func protobufFields(pc collector, po *ProtobufOptions) ([]schema.Field, bool) {
	if po.DescFilePath == "" || po.MessageName == "" {
		return nil, false // Validate reports what is missing
	}
	files, err := protoschema.LoadDescriptorSet(po.DescFileContent)
	if err != nil {
		pc.add("desc_file_path", "%s is not a usable descriptor set (make one with protoc --include_imports --descriptor_set_out): %v",
			po.DescFilePath, err)
		return nil, false
	}
	md, err := protoschema.FindMessage(files, po.MessageName)
	if err != nil {
		pc.addInvolving("message_name", []string{pc.path("desc_file_path")}, "%v", err)
		return nil, false
	}
	if d := po.RecursiveDepth(); d < MinRecursiveDepth || d > MaxRecursiveDepth {
		// Validate reports the depth on its own attribute; mapping the
		// message would report it again, on desc_file_path.
		return nil, false
	}
	fields, err := protoschema.Columns(md, po.RecursiveDepth())
	if err != nil {
		attr := "desc_file_path"
		if errors.Is(err, protoschema.ErrRecursive) {
			attr = "recursive_fields_max_depth"
		}
		pc.add(attr, "message %s cannot become table columns: %v", md.FullName(), err)
		return nil, false
	}
	return fields, true
}
