package protobuf

import (
	"context"
	"fmt"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MainFile is the file name Compile gives the subject's schema text; its
// errors refer to it.
const MainFile = "main.proto"

// Compile compiles schema registry text: main is the .proto source of the
// subject, compiled as [MainFile]; refs maps import names to the source text
// of the registry's references, already fetched. Imports of
// google/protobuf/*.proto that refs lacks are protocompile's standard
// imports. Errors carry protocompile's file:line:col message.
func Compile(ctx context.Context, main string, refs map[string]string) (protoreflect.FileDescriptor, error) {
	if _, ok := refs[MainFile]; ok {
		return nil, fmt.Errorf("compiling the schema: a reference is named %s, the name of the subject's own file", MainFile)
	}
	srcs := make(map[string]string, len(refs)+1)
	for name, src := range refs {
		srcs[name] = src
	}
	srcs[MainFile] = main
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(srcs)}),
	}
	files, err := c.Compile(ctx, MainFile)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	return files[0], nil
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
