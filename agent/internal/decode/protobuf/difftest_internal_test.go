package protobuf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// The differential tests decode random valid messages, built with dynamicpb
// from random field values and then rewritten on the wire (fields
// reordered, repeated fields unpacked, messages split into several
// occurrences, fields dropped, unknown fields and known fields of another
// wire type added, messages concatenated), with the Decoder and with the
// reference decoder (refdecoder_internal_test.go), and compare the rows.

// diffSource is a proto2 message with what Event (proto3) lacks: groups,
// defaults, required fields, closed enums, explicitly packed and unpacked
// lists, maps of messages holding maps.
const diffSource = `syntax = "proto2";
package d2;
message P2 {
  required int32 r = 1;
  optional int32 seven = 2 [default = 7];
  optional string named = 3 [default = "x"];
  optional Color color = 4 [default = GREEN];
  optional group G = 5 { optional int64 g = 6; repeated string gs = 7; }
  repeated group RG = 8 { optional int32 x = 9; }
  oneof pick { string a = 10; Inner b = 11; int64 c = 12; }
  map<int64, Inner> inners = 13;
  repeated sint32 packed_s = 14 [packed = true];
  repeated fixed64 unpacked_f = 15;
  optional bytes by = 16 [default = "\001\002"];
  repeated Color colors = 17;
  map<uint32, string> names = 18;
  optional Inner inner = 19;
  repeated Inner inner_list = 20;
  optional float fl = 21 [default = -1.5];
  map<sfixed32, Color> cmap = 22;
  map<bool, bytes> bmap = 23;
  optional sint64 s64 = 24;
  enum Color { RED = 1; GREEN = 2; BLUE = 3; }
}
message Inner {
  optional string s = 1;
  repeated int32 xs = 2;
  map<string, Inner2> deep = 3;
  optional Inner2 one = 4;
}
message Inner2 { optional double d = 1; repeated bool bs = 2; required uint64 req = 3; }
`

// diffTarget is a message type and the columns both decoders decode it
// into.
type diffTarget struct {
	name   string
	md     protoreflect.MessageDescriptor
	cols   []schema.Field
	d      *Decoder
	ref    *refDecoder
	b, rb  *rows.Builder
	strict bool // every field of every message decoded has a column
}

// diffTargets compiles the targets: Event, Node expanded twice, P2, with
// all their columns, and Event and P2 with some columns only.
func diffTargets(t testing.TB) []*diffTarget {
	t.Helper()
	p2 := compile(t, diffSource, nil).Messages().ByName("P2")
	event, node := message(t, "Event"), message(t, "Node")
	var out []*diffTarget
	add := func(name string, md protoreflect.MessageDescriptor, depth int, keep func(string) bool, strict bool) {
		cols := slices.DeleteFunc(columns(t, md, depth), func(f schema.Field) bool { return !keep(f.Name) })
		d, err := NewDecoder(md, depth, cols)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := newRefDecoder(md, depth, cols)
		if err != nil {
			t.Fatal(err)
		}
		b, err := rows.NewBuilder(cols)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := rows.NewBuilder(cols)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &diffTarget{name, md, cols, d, ref, b, rb, strict})
	}
	all := func(string) bool { return true }
	add("Event", event, -1, all, true)
	add("Node", node, 2, all, false)
	add("P2", p2, -1, all, true)
	add("Event subset", event, -1, func(n string) bool { return strings.ContainsAny(n[:1], "aeiostnp") }, false)
	add("P2 subset", p2, -1, func(n string) bool { return n == "a" || n == "inners" || n == "inner" || n == "r" || n == "rg" }, false)
	return out
}

// check decodes data with both decoders and compares the outcome: the
// Decoder fails only where the reference fails (on a strict target, exactly
// there, but for a protobuf-go panic), and when both succeed the rows are
// the same.
func (tg *diffTarget) check(t testing.TB, data []byte) {
	t.Helper()
	got, err := decodeValues(tg.b, func(b *rows.Builder) error { return tg.d.Decode(b, 0, data) })
	want, rerr := decodeValues(tg.rb, func(b *rows.Builder) error { return tg.ref.Decode(b, 0, data) })
	switch {
	case err != nil && rerr == nil:
		t.Fatalf("%s: %x: Decode fails (%v), the reference decodes %s", tg.name, data, err, want)
	case err == nil && rerr != nil && tg.strict && !strings.Contains(rerr.Error(), "malformed message: "):
		// (protobuf-go panics on a map key followed by a key of another
		// wire type, which the reference reports as malformed; to Decode
		// it is an unknown field.)
		t.Fatalf("%s: %x: the reference fails (%v), Decode decodes %s", tg.name, data, rerr, got)
	case err == nil && rerr == nil && got != want:
		t.Fatalf("%s: %x:\n got %s\nwant %s", tg.name, data, got, want)
	}
}

// decodeValues decodes one row with decode into b, reset, and returns its
// column values, levels included, as text.
func decodeValues(b *rows.Builder, decode func(*rows.Builder) error) (string, error) {
	b.Reset()
	b.BeginRow()
	if err := decode(b); err != nil {
		return "", err
	}
	if err := b.EndRow(); err != nil {
		return "", fmt.Errorf("ending the row: %w", err)
	}
	var s strings.Builder
	for i, col := range b.Columns() {
		fmt.Fprintf(&s, "%d:", i)
		for _, v := range col {
			fmt.Fprintf(&s, " %s/%d/%d/%v", v.Kind(), v.RepetitionLevel(), v.DefinitionLevel(), v)
		}
		s.WriteString("; ")
	}
	return s.String(), nil
}

// gen builds random messages and rewrites their encoding.
type gen struct {
	r *rand.Rand
}

// record returns the bytes of a random message of md, rewritten, and
// sometimes followed by those of another one (which merges into it).
func (g *gen) record(md protoreflect.MessageDescriptor) []byte {
	out := g.rewrite(md, g.encode(md), 0)
	if g.r.IntN(3) == 0 {
		out = append(out, g.rewrite(md, g.encode(md), 0)...)
	}
	return out
}

// encode serializes a random message of md.
func (g *gen) encode(md protoreflect.MessageDescriptor) []byte {
	data, err := proto.MarshalOptions{AllowPartial: true}.Marshal(g.message(md, 0))
	if err != nil {
		panic(err)
	}
	return data
}

// maxGenDepth bounds the nesting of random messages.
const maxGenDepth = 4

// message returns a random message of md; fields are set or not at random,
// required ones always.
func (g *gen) message(md protoreflect.MessageDescriptor, depth int) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.Cardinality() != protoreflect.Required && g.r.IntN(3) == 0 {
			continue
		}
		if o := fd.ContainingOneof(); o != nil && m.WhichOneof(o) != nil {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range g.r.IntN(4) {
				mp.Set(g.scalar(fd.MapKey()).MapKey(), g.value(fd.MapValue(), depth))
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range g.r.IntN(4) {
				l.Append(g.value(fd, depth))
			}
		default:
			m.Set(fd, g.value(fd, depth))
		}
	}
	return m
}

// value returns a random value of fd: a message (empty beyond
// maxGenDepth) or a scalar.
func (g *gen) value(fd protoreflect.FieldDescriptor, depth int) protoreflect.Value {
	if md := fd.Message(); md != nil {
		if depth >= maxGenDepth {
			return protoreflect.ValueOfMessage(dynamicpb.NewMessage(md))
		}
		return protoreflect.ValueOfMessage(g.message(md, depth+1))
	}
	return g.scalar(fd)
}

// scalar returns a random scalar value of fd, extremes and zeros often.
func (g *gen) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	r := g.r
	pick := func(vs ...int64) int64 {
		if i := r.IntN(len(vs) + 1); i < len(vs) {
			return vs[i]
		}
		return r.Int64() >> r.IntN(64)
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(pick(0, 1, -1, math.MaxInt32, math.MinInt32)))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(pick(0, 1, math.MaxUint32, 1<<31)))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if fd.ContainingMessage().FullName() == "google.protobuf.Timestamp" {
			if r.IntN(50) == 0 {
				return protoreflect.ValueOfInt64(math.MaxInt64/1_000_000 + 1) // out of range
			}
			return protoreflect.ValueOfInt64(pick(0, 1, -1, 1714566896, -62135596800, 253402300799))
		}
		return protoreflect.ValueOfInt64(pick(0, 1, -1, math.MaxInt64, math.MinInt64))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(pick(0, 1, -1, math.MaxInt64)))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.float()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.float())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString([]string{"", "a", "héllo", "zz", "日本", strings.Repeat("x", 200)}[r.IntN(6)])
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([][]byte{nil, {0}, {0xff, 0xfe}, []byte("bytes")}[r.IntN(4)])
	case protoreflect.EnumKind:
		vs := fd.Enum().Values()
		if r.IntN(4) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(pick(0, 9, -3, math.MaxInt32)))
		}
		return protoreflect.ValueOfEnum(vs.Get(r.IntN(vs.Len())).Number())
	}
	panic(fmt.Sprintf("no random %s", fd.Kind()))
}

// float returns a random float, zeros, infinities and NaN often.
func (g *gen) float() float64 {
	vs := []float64{0, math.Copysign(0, -1), 1.5, -2.25, math.Inf(1), math.NaN(), 1e300}
	if i := g.r.IntN(len(vs) + 1); i < len(vs) {
		return vs[i]
	}
	return g.r.NormFloat64()
}

// rewrite rewrites the encoding of a message of md at random, keeping it
// valid: it unpacks packed lists, rewrites nested messages and splits them
// into several occurrences, drops fields, adds unknown fields and known
// fields of another wire type, and reorders the fields.
func (g *gen) rewrite(md protoreflect.MessageDescriptor, b []byte, depth int) []byte {
	var fields [][]byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if n < 0 || m < 0 {
			panic("rewriting a malformed message")
		}
		field := b[:n+m]
		b = b[n+m:]
		fd := md.Fields().ByNumber(num)
		switch {
		case g.r.IntN(12) == 0 && (fd == nil || fd.Cardinality() != protoreflect.Required || g.r.IntN(10) == 0):
			continue // dropped (a required field seldom)
		case fd == nil || typ != protowire.BytesType:
		case fd.IsList() && wireType(fd.Kind()) != protowire.BytesType && g.r.IntN(2) == 0:
			fields = append(fields, unpack(fd, field)...)
			continue
		case fd.Message() != nil && depth < 8:
			content, _ := protowire.ConsumeBytes(field[n:])
			content = g.rewrite(fd.Message(), content, depth+1)
			parts := [][]byte{content}
			if !fd.IsMap() || g.r.IntN(10) == 0 { // a part of a map entry is an entry
				parts = g.split(content)
			}
			for _, part := range parts {
				fields = append(fields, protowire.AppendBytes(protowire.AppendTag(nil, num, typ), part))
			}
			continue
		}
		fields = append(fields, field)
	}
	for range g.r.IntN(3) {
		fields = append(fields, g.unknown(md))
	}
	if g.r.IntN(2) == 0 {
		g.r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	}
	return slices.Concat(fields...)
}

// unpack returns the elements of the packed list field fd in field, a tag
// and its length-delimited value, as one field each.
func unpack(fd protoreflect.FieldDescriptor, field []byte) [][]byte {
	_, _, n := protowire.ConsumeTag(field)
	content, _ := protowire.ConsumeBytes(field[n:])
	typ := wireType(fd.Kind())
	var out [][]byte
	for len(content) > 0 {
		m := protowire.ConsumeFieldValue(fd.Number(), typ, content)
		if m < 0 {
			panic("unpacking a malformed list")
		}
		out = append(out, append(protowire.AppendTag(nil, fd.Number(), typ), content[:m]...))
		content = content[m:]
	}
	return out
}

// split cuts the encoding of a message at random field boundaries: as
// several occurrences of a message field, the parts merge into it.
func (g *gen) split(b []byte) [][]byte {
	if g.r.IntN(3) != 0 {
		return [][]byte{b}
	}
	var parts [][]byte
	start := 0
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		off += n + protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if g.r.IntN(2) == 0 {
			parts = append(parts, b[start:off])
			start = off
		}
	}
	return append(parts, b[start:])
}

// unknown returns a field md does not have, or a field it has with another
// wire type (an unknown field too), of any wire type, groups included.
func (g *gen) unknown(md protoreflect.MessageDescriptor) []byte {
	num := protowire.Number(1000 + g.r.IntN(5))
	if fds := md.Fields(); fds.Len() > 0 && g.r.IntN(2) == 0 {
		num = fds.Get(g.r.IntN(fds.Len())).Number()
	}
	if md.IsMapEntry() && num == 1 && g.r.IntN(10) != 0 {
		num = 2 // a key of another wire type makes protobuf-go panic: seldom
	}
	for {
		typ := []protowire.Type{protowire.VarintType, protowire.Fixed32Type, protowire.Fixed64Type, protowire.BytesType, protowire.StartGroupType}[g.r.IntN(5)]
		if fd := md.Fields().ByNumber(num); fd != nil && (typ == wireType(fd.Kind()) || fd.IsList() || fd.IsMap()) {
			num = 1000 // a list takes packed and unpacked values: keep it out
			continue
		}
		b := protowire.AppendTag(nil, num, typ)
		switch typ {
		case protowire.VarintType:
			return protowire.AppendVarint(b, g.r.Uint64())
		case protowire.Fixed32Type:
			return protowire.AppendFixed32(b, g.r.Uint32())
		case protowire.Fixed64Type:
			return protowire.AppendFixed64(b, g.r.Uint64())
		case protowire.BytesType:
			return protowire.AppendBytes(b, []byte{0x08, 0x96, 0x01})
		default:
			b = protowire.AppendTag(b, 7, protowire.StartGroupType)
			b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), 5)
			b = protowire.AppendTag(b, 7, protowire.EndGroupType)
			return protowire.AppendTag(b, num, protowire.EndGroupType)
		}
	}
}

func TestDecodeDifferential(t *testing.T) {
	targets := diffTargets(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := range n {
		g := &gen{r: rand.New(rand.NewPCG(uint64(seed), 0))}
		for _, tg := range targets {
			tg.check(t, g.record(tg.md))
		}
	}
}

// FuzzDecodeDifferential is TestDecodeDifferential with the fuzzer's
// seeds.
func FuzzDecodeDifferential(f *testing.F) {
	targets := diffTargets(f)
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		g := &gen{r: rand.New(rand.NewPCG(s1, s2))}
		for _, tg := range targets {
			tg.check(t, g.record(tg.md))
		}
	})
}
