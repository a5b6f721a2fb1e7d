package protoschema

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// MaxDepth is the largest recursive_fields_max_depth, as in Spark.
const MaxDepth = 10

// ErrRecursive is the error (to match with [errors.Is]) of [Columns] and
// of the Protobuf decoder (decode/protobuf) for a recursive message when recursive_fields_max_depth is
// -1, which refuses recursive messages.
var ErrRecursive = errors.New("recursive message")

// Columns maps md's fields to table columns, all nullable, as decode/protobuf's
// package documentation describes; maxDepth (-1 to [MaxDepth]) is the table's
// recursive_fields_max_depth: -1 refuses a recursive message with an
// [ErrRecursive] error naming the field path and the cycle, 0 drops
// recursive fields, 1 to 10 expand them that many times. A message that
// maps to no columns is an error too.
func Columns(md protoreflect.MessageDescriptor, maxDepth int) ([]schema.Field, error) {
	if maxDepth < -1 || maxDepth > MaxDepth {
		return nil, fmt.Errorf("recursive_fields_max_depth %d is outside -1..%d", maxDepth, MaxDepth)
	}
	m := mapper{maxDepth: maxDepth, open: map[protoreflect.FullName]int{md.FullName(): 1}, stack: []protoreflect.MessageDescriptor{md}}
	fields, err := m.fields(md, "")
	if err != nil {
		return nil, fmt.Errorf("mapping %s to columns: %w", md.FullName(), err)
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("mapping %s to columns: it has no fields to map", md.FullName())
	}
	return fields, nil
}

// mapper maps the fields of one root message.
type mapper struct {
	maxDepth int
	// open counts, per message, its occurrences on the path from the root
	// to the message being mapped; stack lists them, the root first, and
	// via the fields that lead from each to the next.
	open  map[protoreflect.FullName]int
	stack []protoreflect.MessageDescriptor
	via   []protoreflect.FieldDescriptor
}

// fields maps the fields of md, at field path path, leaving out those
// dropped.
func (m *mapper) fields(md protoreflect.MessageDescriptor, path string) ([]schema.Field, error) {
	var out []schema.Field
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		t, err := m.field(fd, FieldPath(path, string(fd.Name())))
		if err != nil {
			return nil, err
		}
		if t != nil {
			out = append(out, schema.Field{Name: string(fd.Name()), Type: t, Nullable: true})
		}
	}
	return out, nil
}

// field returns the column type of fd, nil when it is dropped.
func (m *mapper) field(fd protoreflect.FieldDescriptor, path string) (*schema.Type, error) {
	if fd.IsMap() {
		k, err := m.value(fd.MapKey(), fd, path)
		if err != nil || k == nil {
			return nil, err
		}
		v, err := m.value(fd.MapValue(), fd, path)
		if err != nil || v == nil {
			return nil, err
		}
		return &schema.Type{Kind: schema.Map, Key: k, Value: v}, nil
	}
	t, err := m.value(fd, fd, path)
	if err != nil || t == nil || !fd.IsList() {
		return t, err
	}
	return &schema.Type{Kind: schema.Array, Elem: t}, nil
}

// value returns the column type of one value of fd, a value of field via
// (fd itself, or for a map its key or value), nil when it is dropped.
func (m *mapper) value(fd, via protoreflect.FieldDescriptor, path string) (*schema.Type, error) {
	if k, ok := ScalarKind(fd.Kind()); ok {
		return &schema.Type{Kind: k}, nil
	}
	md := fd.Message()
	if md == nil {
		return nil, fmt.Errorf("%s: unsupported field kind %s", path, fd.Kind())
	}
	if _, _, ok := TimestampFields(md); ok {
		return &schema.Type{Kind: schema.Timestamp}, nil
	}
	if w := Wrapped(md); w != nil {
		return m.value(w, w, path)
	}
	name := md.FullName()
	if n := m.open[name]; n > 0 {
		if m.maxDepth < 0 {
			return nil, fmt.Errorf("%s: %w %s: %s; set recursive_fields_max_depth to 0 to drop recursive fields or 1..%d to expand them",
				path, ErrRecursive, name, m.cycle(name, via), MaxDepth)
		}
		if n > m.maxDepth {
			return nil, nil
		}
	}
	m.open[name]++
	m.stack, m.via = append(m.stack, md), append(m.via, via)
	fields, err := m.fields(md, path)
	m.stack, m.via = m.stack[:len(m.stack)-1], m.via[:len(m.via)-1]
	m.open[name]--
	if err != nil || len(fields) == 0 {
		return nil, err
	}
	return &schema.Type{Kind: schema.Struct, Fields: fields}, nil
}

// cycle describes the fields that lead from message name's outermost
// occurrence on the path back to name, the last of them last:
// "a.Node.children → a.Node".
func (m *mapper) cycle(name protoreflect.FullName, last protoreflect.FieldDescriptor) string {
	var b strings.Builder
	open := false
	for i, md := range m.stack {
		open = open || md.FullName() == name
		if open && i+1 < len(m.stack) {
			b.WriteString(string(m.via[i].FullName()))
			b.WriteString(" → ")
		}
	}
	b.WriteString(string(last.FullName()))
	b.WriteString(" → ")
	b.WriteString(string(name))
	return b.String()
}

// FieldPath appends a field name to a field path.
func FieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
