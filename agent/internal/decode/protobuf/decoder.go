package protobuf

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// Decoder decodes Protobuf messages of one type into columns of a row,
// reading the wire format itself: see scan.go and write.go. Its scratch
// buffers are reused from record to record, so that it allocates nothing
// once they have grown; it is not safe for concurrent use: use one per
// goroutine.
type Decoder struct {
	root *msgPlan
	// data is the record being decoded.
	data []byte
	// occs holds the occurrences found by the scans in progress, slots the
	// per-field lists of occurrences of the messages being decoded, and
	// entries the entries of the maps being written: stacks, innermost
	// message last. occs[0] is unused, so that index 0 means none.
	occs    []occ
	slots   []slot
	entries []entry
	// num holds the decimal digits of an unknown enum number.
	num [20]byte
}

// NewDecoder compiles the decoding of md messages into cols, the columns of
// a part of a table, which [protoschema.Columns] maps md to or which a table has kept
// from an earlier version of md: columns match md's fields by name, at
// every level, and must have the type Columns gives the field. Columns md
// lacks stay null; md fields without a column are skipped. maxDepth is
// checked as Columns checks it.
func NewDecoder(md protoreflect.MessageDescriptor, maxDepth int, cols []schema.Field) (*Decoder, error) {
	if _, err := protoschema.Columns(md, maxDepth); err != nil {
		return nil, err
	}
	root, err := compileMessage(md, cols, "")
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", md.FullName(), err)
	}
	return &Decoder{root: root, occs: make([]occ, 1, 64)}, nil
}

// Decode decodes the message in data into the open row of b, into its
// top-level fields first to first+len(cols)-1. Strings and bytes alias
// data, which must stay unchanged until the batch is written. Bytes that
// are not a valid message, a missing required field or a timestamp out of
// range return an error; the fields may then hold part of the message, for
// the caller to discard ([rows.Builder.DiscardFields]).
func (d *Decoder) Decode(b *rows.Builder, first int, data []byte) error {
	if len(data) > math.MaxInt32 {
		return fmt.Errorf("decoding %s: the record's %d bytes exceed 2 GiB", d.root.name, len(data))
	}
	d.data = data
	d.occs = append(d.occs[:1], occ{end: int32(len(data))})
	d.slots, d.entries = d.slots[:0], d.entries[:0]
	err := d.message(b, d.root, first, 1, true)
	d.data = nil
	if err != nil {
		return fmt.Errorf("decoding %s: %w", d.root.name, err)
	}
	return nil
}
