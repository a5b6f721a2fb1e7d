package protobuf

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// MainFile is the file name Compile gives the subject's schema; its errors
// refer to it.
const MainFile = "main.proto"

// Compile compiles the Protobuf schema of a registry subject: main is the
// subject's schema, compiled as [MainFile]; refs maps import names to the
// schemas of the registry's references, already fetched. Each of them is
// either .proto source text or, as Confluent-compatible registries return
// a schema registered that way (by Confluent's Python serializer, say),
// the base64 of a serialized google.protobuf.FileDescriptorProto, which
// takes the name of the subject or of the reference; the two forms mix
// freely. Imports of google/protobuf/*.proto that refs lacks are the
// well-known types built in. Errors carry protocompile's file:line:col
// message.
func Compile(ctx context.Context, main string, refs map[string]string) (protoreflect.FileDescriptor, error) {
	if _, ok := refs[MainFile]; ok {
		return nil, fmt.Errorf("compiling the schema: a reference is named %s, the name of the subject's own file", MainFile)
	}
	files := make(map[string]schemaFile, len(refs)+1)
	for name, text := range refs {
		files[name] = newSchemaFile(name, text)
	}
	files[MainFile] = newSchemaFile(MainFile, main)
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
			f, ok := files[path]
			if !ok {
				return protocompile.SearchResult{}, os.ErrNotExist
			}
			return f.result(), nil
		})),
	}
	compiled, err := c.Compile(ctx, MainFile)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	if err := checkDescriptors(compiled[0], files, new(protoregistry.Files)); err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	return compiled[0], nil
}

// checkDescriptors has protodesc build the files given as descriptors
// among fd and its imports, which protocompile links without checking them
// all (a required field in proto3, say), registering fd and its imports in
// reg, imports first.
func checkDescriptors(fd protoreflect.FileDescriptor, files map[string]schemaFile, reg *protoregistry.Files) error {
	if _, err := reg.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		if err := checkDescriptors(imports.Get(i).FileDescriptor, files, reg); err != nil {
			return err
		}
	}
	if f, ok := files[fd.Path()]; ok && f.desc != nil {
		if _, err := protodesc.NewFile(f.desc, reg); err != nil {
			return fmt.Errorf("%s: %w", fd.Path(), err)
		}
	}
	return reg.RegisterFile(fd)
}

// schemaFile is one file of a registry schema: its source text, or the
// descriptor it holds serialized.
type schemaFile struct {
	source string
	desc   *descriptorpb.FileDescriptorProto
}

// newSchemaFile reads text, a file of a registry schema named name.
func newSchemaFile(name, text string) schemaFile {
	desc := serializedDescriptor(text)
	if desc == nil {
		return schemaFile{source: text}
	}
	desc.Name = proto.String(name)
	return schemaFile{desc: desc}
}

// result returns f for protocompile: a descriptor to link, or source text
// to compile (a new reader each time).
func (f schemaFile) result() protocompile.SearchResult {
	if f.desc != nil {
		return protocompile.SearchResult{Proto: f.desc}
	}
	return protocompile.SearchResult{Source: strings.NewReader(f.source)}
}

// serializedDescriptor returns the FileDescriptorProto that text holds in
// base64 (standard encoding, line breaks and surrounding space ignored),
// nil when text is not such base64, as .proto source text, with its spaces
// and semicolons, never is. A descriptor that protocompile or protodesc
// then refuses is an error, not source text.
func serializedDescriptor(text string) *descriptorpb.FileDescriptorProto {
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(data) == 0 {
		return nil
	}
	var desc descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(data, &desc); err != nil || len(desc.ProtoReflect().GetUnknown()) > 0 {
		return nil
	}
	return &desc
}

// MessageByIndexes resolves the message indexes of Confluent's wire format
// in fd: [i] is fd's i-th top-level message, [i, j] the j-th message nested
// in it, and so on; no index at all means [0], the first message, as in
// Confluent's encoding. An index out of range is an error.
func MessageByIndexes(fd protoreflect.FileDescriptor, indexes []int) (protoreflect.MessageDescriptor, error) {
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	ms := fd.Messages()
	var md protoreflect.MessageDescriptor
	for n, i := range indexes {
		if i < 0 || i >= ms.Len() {
			in := "file " + fd.Path()
			if md != nil {
				in = "message " + string(md.FullName())
			}
			return nil, fmt.Errorf("message index %d (position %d of %v) is out of range: %s has %d messages", i, n, indexes, in, ms.Len())
		}
		md = ms.Get(i)
		ms = md.Messages()
	}
	return md, nil
}
