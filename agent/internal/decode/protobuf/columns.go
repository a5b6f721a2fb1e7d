package protobuf

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// MaxDepth is the largest recursive_fields_max_depth, as in Spark.
const MaxDepth = 10

// Columns maps md's fields to table columns, all nullable, as the package
// documentation describes; maxDepth (-1 to [MaxDepth]) bounds recursive
// messages as Spark's recursive.fields.max.depth does. A recursive message
// with maxDepth -1 or 0 is an error naming the field path and the cycle, as
// is a message that maps to no columns.
func Columns(md protoreflect.MessageDescriptor, maxDepth int) ([]schema.Field, error) {
	if maxDepth < -1 || maxDepth > MaxDepth {
		return nil, fmt.Errorf("recursive_fields_max_depth %d is outside -1..%d", maxDepth, MaxDepth)
	}
	m := mapper{maxDepth: maxDepth, open: map[protoreflect.FullName]int{md.FullName(): 1}, stack: []protoreflect.FullName{md.FullName()}}
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
	// to the message being mapped; stack lists them, the root first.
	open  map[protoreflect.FullName]int
	stack []protoreflect.FullName
}

// fields maps the fields of md, at field path path, leaving out those
// dropped.
func (m *mapper) fields(md protoreflect.MessageDescriptor, path string) ([]schema.Field, error) {
	var out []schema.Field
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		t, err := m.field(fd, join(path, string(fd.Name())))
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
		k, err := m.value(fd.MapKey(), path)
		if err != nil || k == nil {
			return nil, err
		}
		v, err := m.value(fd.MapValue(), path)
		if err != nil || v == nil {
			return nil, err
		}
		return &schema.Type{Kind: schema.Map, Key: k, Value: v}, nil
	}
	t, err := m.value(fd, path)
	if err != nil || t == nil || !fd.IsList() {
		return t, err
	}
	return &schema.Type{Kind: schema.Array, Elem: t}, nil
}

// value returns the column type of one value of fd, nil when it is
// dropped.
func (m *mapper) value(fd protoreflect.FieldDescriptor, path string) (*schema.Type, error) {
	if k, ok := scalarKind(fd.Kind()); ok {
		return &schema.Type{Kind: k}, nil
	}
	md := fd.Message()
	if md == nil {
		return nil, fmt.Errorf("%s: unsupported field kind %s", path, fd.Kind())
	}
	if _, _, ok := timestampFields(md); ok {
		return &schema.Type{Kind: schema.Timestamp}, nil
	}
	if w := wrapped(md); w != nil {
		return m.value(w, path)
	}
	name := md.FullName()
	if n := m.open[name]; n > 0 {
		if m.maxDepth <= 0 {
			return nil, fmt.Errorf("%s: recursive message %s (set recursive_fields_max_depth to 1..%d to map it)", path, m.cycle(name), MaxDepth)
		}
		if n >= m.maxDepth {
			return nil, nil
		}
	}
	m.open[name]++
	m.stack = append(m.stack, name)
	fields, err := m.fields(md, path)
	m.stack = m.stack[:len(m.stack)-1]
	m.open[name]--
	if err != nil || len(fields) == 0 {
		return nil, err
	}
	return &schema.Type{Kind: schema.Struct, Fields: fields}, nil
}

// cycle describes the path of messages from name's outermost occurrence
// back to name: "a.Node -> a.Node".
func (m *mapper) cycle(name protoreflect.FullName) string {
	var b strings.Builder
	open := false
	for _, s := range m.stack {
		open = open || s == name
		if open {
			b.WriteString(string(s))
			b.WriteString(" -> ")
		}
	}
	b.WriteString(string(name))
	return b.String()
}

// join appends a field name to a field path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
