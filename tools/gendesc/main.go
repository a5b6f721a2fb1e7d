// Command gendesc compiles .proto files with protocompile into a
// FileDescriptorSet holding them and every file they import, dependencies
// first, as protoc --include_imports --descriptor_set_out writes it. The
// well-known google/protobuf/*.proto imports are built in. It stands in for
// protoc, which this project does not install:
//
//	go run ./tools/gendesc -I agent/e2e/testdata -o agent/e2e/testdata/orders.desc orders.proto
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	include := flag.String("I", ".", "the folder imports and the files are resolved in")
	out := flag.String("o", "", "the descriptor set to write")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gendesc [-I dir] -o out.desc file.proto...")
		os.Exit(2)
	}
	if err := run(*include, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "gendesc:", err)
		os.Exit(1)
	}
}

// run compiles files, found in include, and writes their set to out.
func run(include, out string, files []string) error {
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{include}}),
	}
	compiled, err := c.Compile(context.Background(), files...)
	if err != nil {
		return err
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
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
	for _, fd := range compiled {
		add(fd)
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}
