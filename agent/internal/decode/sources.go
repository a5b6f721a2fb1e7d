package decode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Sources holds the registry sources of a table's key and value, nil for a
// side whose schema does not come from a registry.
type Sources struct {
	Key, Value *Source
}

// of returns the source of side "key" or "value"; s may be nil.
func (s *Sources) of(side string) *Source {
	switch {
	case s == nil:
		return nil
	case side == "key":
		return s.Key
	}
	return s.Value
}

// Source is where a part whose schema comes from a schema registry gets
// its schemas. It is shared by the table's decoders and immutable.
type Source struct {
	Client  *registry.Client
	Subject string
	// Latest is the subject's latest version when the table started, the
	// reader schema: it set the table's columns, and Avro records written
	// with other versions are resolved to it.
	Latest registry.Schema
	// avroReader is Latest parsed, for Avro parts; message is the reader
	// message of a Protobuf part, depth its recursive_fields_max_depth.
	avroReader avroschema.Schema
	message    protoreflect.MessageDescriptor
	depth      int
}

// changed returns a [*SchemaChangedError] when the subject's latest version
// is no longer the one the table started with, nil when it still is.
func (s *Source) changed(ctx context.Context) error {
	latest, err := s.Client.Latest(ctx, s.Subject)
	if err != nil {
		return fmt.Errorf("looking up the latest version of subject %q: %w", s.Subject, err)
	}
	if latest.ID != s.Latest.ID {
		return &SchemaChangedError{Subject: s.Subject, From: s.Latest.ID, To: latest.ID}
	}
	return nil
}

// Resolve gives the parts of layout whose schema comes from a registry
// their columns: those of the subject's latest version, merged into the
// columns prev (the table's current schema, nil for a new table) gave the
// part, so that no column is ever dropped (see [schema.Merge]). It returns
// the sources [New] needs for those parts. clients returns the registry
// client of a connection name, "" meaning the pipeline's connection.
//
// An error wrapping [registry.ErrNotFound] means the subject is not
// registered (yet); other registry errors are the registry's; [spec.Errors]
// means the subjects' fields collide with the table's other columns or
// take a reserved name.
func Resolve(ctx context.Context, layout *spec.Layout, prev []schema.Field,
	clients func(connection string) (*registry.Client, error)) (*Sources, error) {
	parts := [2]*spec.Part{&layout.Key, &layout.Value}
	if !parts[0].Pending() && !parts[1].Pending() {
		return nil, nil
	}
	// The columns of prev that belong to no other part are the pending
	// part's (the value's when both are pending, after the key took
	// those its schema still has).
	taken := map[string]bool{strings.ToLower(layout.MetadataColumn): true, strings.ToLower(spec.CorruptRecordColumn): true}
	for _, p := range parts {
		if !p.Pending() {
			for _, f := range (&spec.Layout{Key: *p}).Columns() {
				taken[strings.ToLower(f.Name)] = true
			}
		}
	}
	var srcs [2]*Source
	for i, p := range parts {
		if !p.Pending() {
			continue
		}
		src, cols, err := resolvePart(ctx, p, clients)
		if err != nil {
			return nil, err
		}
		bothPending := i == 0 && parts[1].Pending()
		var mine []schema.Field
		for _, f := range prev {
			if !taken[strings.ToLower(f.Name)] && (!bothPending || hasField(cols, f.Name)) {
				mine = append(mine, f)
			}
		}
		p.Fields = schema.Merge(mine, cols)
		for _, f := range p.Fields {
			taken[strings.ToLower(f.Name)] = true
		}
		srcs[i] = src
	}
	// Plan time could not check the registry's columns against the
	// table's others: a field named like another part's column, the
	// metadata column or _corrupt_record would make the table's schema
	// hold the name twice.
	if errs := layout.CheckColumns(); len(errs) > 0 {
		return nil, fmt.Errorf("the registry schemas cannot become the table's columns: %w", errs)
	}
	return &Sources{Key: srcs[0], Value: srcs[1]}, nil
}

// resolvePart looks up the latest version of the subject of pending part p
// and returns its source and its columns.
func resolvePart(ctx context.Context, p *spec.Part, clients func(string) (*registry.Client, error)) (*Source, []schema.Field, error) {
	reg := p.Transformer.Registry()
	client, err := clients(reg.ConnectionName)
	if err != nil {
		return nil, nil, err
	}
	src := &Source{Client: client, Subject: reg.ConfluentOptions.Subject}
	if src.Latest, err = client.Latest(ctx, src.Subject); err != nil {
		return nil, nil, fmt.Errorf("looking up the latest version of subject %q: %w", src.Subject, err)
	}
	cols, err := src.reader(ctx, p)
	if err != nil {
		return nil, nil, fmt.Errorf("subject %q version %d (schema id %d): %w", src.Subject, src.Latest.Version, src.Latest.ID, err)
	}
	return src, cols, nil
}

// reader parses the source's Latest as the reader schema of part p and
// returns its columns.
func (s *Source) reader(ctx context.Context, p *spec.Part) ([]schema.Field, error) {
	switch p.Format {
	case spec.FormatAvro:
		if t := s.Latest.Type; t != registry.TypeAvro {
			return nil, fmt.Errorf("the subject holds a %s schema, not an Avro one", t)
		}
		r, err := parseAvro(s.Latest)
		if err != nil {
			return nil, err
		}
		s.avroReader = r
		return avroschema.Columns(r, p.Column)
	case spec.FormatProtobuf:
		if s.Latest.Type != registry.TypeProtobuf {
			return nil, fmt.Errorf("the subject holds a %s schema, not a Protobuf one", s.Latest.Type)
		}
		refs, err := s.Client.References(ctx, s.Latest)
		if err != nil {
			return nil, err
		}
		fd, err := protobuf.Compile(ctx, s.Latest.Text, refs)
		if err != nil {
			return nil, err
		}
		po := p.Transformer.ProtobufOptions
		if s.message, err = messageOf(fd, po.SchemaRegistry.ProtobufMessageName); err != nil {
			return nil, err
		}
		s.depth = po.RecursiveDepth()
		return protoschema.Columns(s.message, s.depth)
	}
	return nil, fmt.Errorf("format %s has no registry schemas", p.Format)
}

// parseAvro parses an Avro schema of the registry.
func parseAvro(rs registry.Schema) (avroschema.Schema, error) {
	if len(rs.References) > 0 {
		return nil, errors.New("the schema has references to other subjects, which Avro tables do not support yet")
	}
	return avroschema.Parse(rs.Text)
}

// messageOf returns the message of fd named name (simple or fully
// qualified), or its first message when name is empty.
func messageOf(fd protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	if name == "" {
		if fd.Messages().Len() == 0 {
			return nil, errors.New("the schema defines no message")
		}
		return fd.Messages().Get(0), nil
	}
	files := new(protoregistry.Files)
	if err := files.RegisterFile(fd); err != nil {
		return nil, err
	}
	return protoschema.FindMessage(files, name)
}

// hasField reports whether fields has one named name, ignoring case.
func hasField(fields []schema.Field, name string) bool {
	for _, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}
