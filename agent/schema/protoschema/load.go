package protoschema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// LoadDescriptorSet reads a serialized FileDescriptorSet (the output of
// protoc --descriptor_set_out, a .desc file). Imports resolve inside the set
// or, for google/protobuf/*.proto files the set lacks, to the well-known
// types built into protobuf-go, which join the returned registry. A set
// that holds no file (an empty file, say) is an error.
func LoadDescriptorSet(data []byte) (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("reading the descriptor set: %w", err)
	}
	if len(set.GetFile()) == 0 {
		return nil, errors.New("reading the descriptor set: it holds no files (an empty file or not a descriptor set)")
	}
	l := loader{protos: make(map[string]*descriptorpb.FileDescriptorProto), state: make(map[string]loadState), files: new(protoregistry.Files)}
	for _, f := range set.GetFile() {
		if _, dup := l.protos[f.GetName()]; dup {
			return nil, fmt.Errorf("reading the descriptor set: %s appears twice", f.GetName())
		}
		l.protos[f.GetName()] = f
	}
	for _, f := range set.GetFile() {
		if err := l.load(f.GetName()); err != nil {
			return nil, fmt.Errorf("reading the descriptor set: %w", err)
		}
	}
	return l.files, nil
}

// loader builds the files of a descriptor set, each after its imports.
type loader struct {
	protos map[string]*descriptorpb.FileDescriptorProto
	state  map[string]loadState
	files  *protoregistry.Files
}

// loadState is how far a file of the set has been built.
type loadState uint8

const (
	unloaded loadState = iota
	loading            // its imports are being built
	loaded
)

// load builds and registers the file at path after its imports.
func (l *loader) load(path string) error {
	switch l.state[path] {
	case loaded:
		return nil
	case loading:
		return fmt.Errorf("import cycle through %s", path)
	}
	fdp, ok := l.protos[path]
	if !ok {
		return l.loadWellKnown(path)
	}
	l.state[path] = loading
	for _, dep := range fdp.GetDependency() {
		if err := l.load(dep); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	fd, err := protodesc.NewFile(fdp, l.files)
	if err != nil {
		return fmt.Errorf("building %s: %w", path, err)
	}
	l.state[path] = loaded
	if err := l.files.RegisterFile(fd); err != nil {
		return fmt.Errorf("registering %s: %w", path, err)
	}
	return nil
}

// loadWellKnown registers protobuf-go's copy of the well-known types file at
// path, which the set imports without holding it.
func (l *loader) loadWellKnown(path string) error {
	fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
	if err != nil || !strings.HasPrefix(path, "google/protobuf/") {
		return fmt.Errorf("import %s is neither in the set nor a well-known type", path)
	}
	l.state[path] = loaded
	if err := l.files.RegisterFile(fd); err != nil {
		return fmt.Errorf("registering %s: %w", path, err)
	}
	return nil
}

// maxListed bounds the message names a not-found error lists.
const maxListed = 30

// FindMessage finds a message of files by its fully qualified name
// ("com.example.Event", a leading dot allowed) or by its simple name
// ("Event"), which must then be unique. The errors name the candidates of an
// ambiguous name, or the messages there are (sorted, at most 30).
func FindMessage(files *protoregistry.Files, name string) (protoreflect.MessageDescriptor, error) {
	name = strings.TrimPrefix(name, ".")
	if d, err := files.FindDescriptorByName(protoreflect.FullName(name)); err == nil {
		if md, ok := d.(protoreflect.MessageDescriptor); ok {
			return md, nil
		}
	}
	var all, found []string
	byName := make(map[string]protoreflect.MessageDescriptor)
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		walkMessages(fd.Messages(), func(md protoreflect.MessageDescriptor) {
			if md.IsMapEntry() {
				return
			}
			full := string(md.FullName())
			all = append(all, full)
			if string(md.Name()) == name {
				found = append(found, full)
				byName[full] = md
			}
		})
		return true
	})
	slices.Sort(all)
	slices.Sort(found)
	switch {
	case len(found) == 1:
		return byName[found[0]], nil
	case len(found) > 1:
		return nil, fmt.Errorf("message name %q is ambiguous: it could be %s", name, strings.Join(found, ", "))
	case len(all) == 0:
		return nil, fmt.Errorf("message %q not found: the descriptors hold no messages", name)
	case len(all) > maxListed:
		return nil, fmt.Errorf("message %q not found; there are %s and %d more", name, strings.Join(all[:maxListed], ", "), len(all)-maxListed)
	}
	return nil, fmt.Errorf("message %q not found; there are %s", name, strings.Join(all, ", "))
}

// walkMessages calls f for each message of ms and, after it, its nested
// messages.
func walkMessages(ms protoreflect.MessageDescriptors, f func(protoreflect.MessageDescriptor)) {
	for i := range ms.Len() {
		md := ms.Get(i)
		f(md)
		walkMessages(md.Messages(), f)
	}
}
