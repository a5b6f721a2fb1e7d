// Command gendesc compiles testdata/events.proto with protocompile into
// testdata/events.desc, a FileDescriptorSet holding it and every file it
// imports, dependencies first, as protoc --include_imports
// --descriptor_set_out writes it. Run it from the protobuf package's folder:
// go generate, or go run ./testdata/gendesc.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gendesc:", err)
		os.Exit(1)
	}
}

// run writes testdata/events.desc.
func run() error {
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"testdata"}}),
	}
	files, err := c.Compile(context.Background(), "events.proto")
	if err != nil {
		return err
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := make(map[string]bool)
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := range fd.Imports().Len() {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(files[0])
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		return err
	}
	return os.WriteFile("testdata/events.desc", data, 0o644)
}
