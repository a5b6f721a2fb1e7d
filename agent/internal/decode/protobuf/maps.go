package protobuf

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
)

// entry is one map entry read from the wire.
type entry struct {
	// order sorts the keys of numbers: bool and unsigned keys are their
	// bits, signed keys their bits with the sign bit flipped.
	order uint64
	key   raw
	// val is a scalar value; head and tail index in Decoder.occs the
	// first and last occurrences of a message value (which merge), 0 for
	// none.
	val        raw
	head, tail int32
}

// writeMap writes the entries of map field f, whose occurrences (one per
// entry) start at d.occs[head], in key order, so that a message always
// gives the same row; of entries with the same key the last wins, as in
// protobuf. A key or a value missing from its entry reads as its default
// (for a message, an empty one).
func (d *Decoder) writeMap(b *rows.Builder, f *field, head int32) error {
	mark := len(d.entries)
	for h := head; h != 0; h = d.occs[h].next {
		e, err := d.entry(f, int(d.occs[h].start), int(d.occs[h].end))
		if err != nil {
			return fmt.Errorf("%s: %w", f.fd.FullName(), err)
		}
		d.entries = append(d.entries, e)
	}
	// Writing message values can append entries of inner maps, after
	// these ones: es stays valid.
	es := d.entries[mark:]
	slices.SortStableFunc(es, compareKeys)
	b.BeginMap()
	for i := range es {
		if i+1 < len(es) && compareKeys(es[i], es[i+1]) == 0 {
			continue
		}
		d.put(b, f.key, es[i].key)
		if f.val.conv < convTimestamp {
			d.put(b, f.val, es[i].val)
		} else if err := d.compound(b, f.val, es[i].head, false); err != nil {
			return err
		}
	}
	b.EndMap()
	d.entries = d.entries[:mark]
	return nil
}

// compareKeys orders map entries by key.
func compareKeys(a, b entry) int {
	if c := cmp.Compare(a.order, b.order); c != 0 {
		return c
	}
	return bytes.Compare(a.key.bytes, b.key.bytes)
}

// entry reads the map entry of f in d.data[off:end]: a message with the
// key as field 1 and the value as field 2.
func (d *Decoder) entry(f *field, off, end int) (entry, error) {
	e := entry{key: f.key.def, val: f.val.def}
	for off < end {
		num, typ, n := consumeTag(d.data[off:end])
		if n < 0 || num > protowire.MaxValidNumber {
			return e, fmt.Errorf("the tag at byte %d: %w", off, tagError(n))
		}
		off += n
		var err error
		switch {
		case num == 1 && typ == f.key.wire:
			e.key, off, err = d.read(f.key, typ, off, end)
		case num == 2 && typ == f.val.wire && f.val.conv < convTimestamp:
			var r raw
			if r, off, err = d.read(f.val, typ, off, end); !f.val.closed || f.val.enum.has(r.bits) {
				// (A number a closed enum lacks is an unknown field of
				// the entry, whose value stays as it was.)
				e.val = r
			}
		case num == 2 && typ == f.val.wire:
			k := int32(len(d.occs))
			d.occs = append(d.occs, occ{})
			if off, err = d.consumeInto(&d.occs[k], num, typ, off, end); err == nil {
				if e.head == 0 {
					e.head = k
				} else {
					d.occs[e.tail].next = k
				}
				e.tail = k
			}
		default:
			m := protowire.ConsumeFieldValue(num, typ, d.data[off:end])
			if m < 0 {
				return e, fmt.Errorf("field %d at byte %d: %w", num, off, protowire.ParseError(m))
			}
			off += m
		}
		if err != nil {
			return e, err
		}
	}
	e.order = keyOrder(f.key.kind, e.key.bits)
	return e, nil
}

// keyOrder returns the sort order of a map key of kind k with bits bits.
func keyOrder(k protoreflect.Kind, bits uint64) uint64 {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return uint64(int64(int32(uint32(bits)))) ^ 1<<63
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return bits ^ 1<<63
	}
	return bits
}
