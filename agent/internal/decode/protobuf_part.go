package decode

import (
	"context"
	"errors"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// newProtobufPart returns the part of a Protobuf transformer: plain messages
// of the descriptor set's message, or registry-framed messages, each
// decoded with the writer's own message into the table's columns by field
// name.
func newProtobufPart(b *rows.Builder, first int, sp *spec.Part, src *Source) (Part, error) {
	po := sp.Transformer.ProtobufOptions
	depth := po.RecursiveDepth()
	if po.SchemaRegistry == nil {
		files, err := protoschema.LoadDescriptorSet(po.DescFileContent)
		if err != nil {
			return nil, fmt.Errorf("the descriptor set %s: %w", po.DescFilePath, err)
		}
		md, err := protoschema.FindMessage(files, po.MessageName)
		if err != nil {
			return nil, err
		}
		dec, err := protobuf.NewDecoder(md, depth, sp.Fields)
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", md.FullName(), err)
		}
		return &staticPart{b: b, first: first, width: len(sp.Fields), dec: dec}, nil
	}
	if src == nil || src.message == nil {
		return nil, fmt.Errorf("subject %q is not resolved", po.SchemaRegistry.ConfluentOptions.Subject)
	}
	cols := sp.Fields
	// The schema of each id is compiled once, whatever the message
	// indexes of its records.
	files := map[int]protoreflect.FileDescriptor{}
	compile := func(ctx context.Context, id int, indexes []int) (*writer, error) {
		fd := files[id]
		if fd == nil {
			var w *writer
			var err error
			if fd, w, err = compileWriterFile(ctx, src, id); w != nil || err != nil {
				return w, err
			}
			files[id] = fd
		}
		md, err := protobuf.MessageByIndexes(fd, indexes)
		if err != nil {
			return &writer{err: fmt.Errorf("schema id %d: %w", id, err)}, nil
		}
		if wcols, err := protoschema.Columns(md, depth); err == nil {
			if err := checkEvolution(ctx, src, id, cols, wcols); err != nil {
				return nil, err
			}
		}
		dec, err := protobuf.NewDecoder(md, depth, cols)
		if err != nil {
			return &writer{err: fmt.Errorf("schema id %d, message %s cannot be read into the table's columns: %w", id, md.FullName(), err)}, nil
		}
		return &writer{dec: dec}, nil
	}
	return &registryPart{b: b, first: first, width: len(cols), indexes: true, compile: compile, writers: map[int]map[string]*writer{}}, nil
}

// compileWriterFile fetches and compiles the Protobuf schema id of src's
// registry with its references. As for [fetchWriter], a writer with err set
// means records written with id cannot be decoded, and an error is the
// registry's.
func compileWriterFile(ctx context.Context, src *Source, id int) (protoreflect.FileDescriptor, *writer, error) {
	s, w, err := fetchWriter(ctx, src, id, registry.TypeProtobuf)
	if w != nil || err != nil {
		return nil, w, err
	}
	refs, err := src.Client.References(ctx, s)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return nil, &writer{err: fmt.Errorf("schema id %d: %w", id, err)}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("fetching the references of schema id %d: %w", id, err)
	}
	fd, err := protobuf.Compile(ctx, s.Text, refs)
	if err != nil {
		return nil, &writer{err: fmt.Errorf("schema id %d: %w", id, err)}, nil
	}
	return fd, nil, nil
}
