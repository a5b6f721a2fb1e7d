package variant

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	pv "github.com/parquet-go/parquet-go/variant"
)

// node is a value of TestWriterMatchesBuilder: a scalar kind, or an object
// (keys and children) or an array (children).
type node struct {
	kind     string // "null", "bool", "int8" ... "string", "object", "array"
	i        int64
	f        float64
	s        string
	keys     []string
	children []*node
}

// randomNode returns a random value of at most depth levels, whose object
// keys come from keys; wide makes its containers large enough to need
// wide offsets and counts.
func randomNode(rnd *rand.Rand, depth int, keys []string, wide bool) *node {
	kinds := []string{"null", "bool", "int8", "int16", "int32", "int64", "double", "dec4", "dec8", "dec16", "string"}
	if depth > 0 {
		kinds = append(kinds, "object", "array", "object", "array")
	}
	n := &node{kind: kinds[rnd.IntN(len(kinds))], i: rnd.Int64(), f: rnd.Float64()}
	size := rnd.IntN(6)
	if wide && depth > 0 {
		n.kind = []string{"object", "array"}[rnd.IntN(2)]
		size = 256 + rnd.IntN(40)
	}
	switch n.kind {
	case "string":
		n.s = strings.Repeat("x", rnd.IntN(3)*40+rnd.IntN(30))
		if wide {
			n.s = strings.Repeat("y", 70_000) // past 2-byte offsets
		}
	case "object":
		for j, k := range rnd.Perm(len(keys))[:min(size, len(keys))] {
			n.keys = append(n.keys, keys[k])
			n.children = append(n.children, randomNode(rnd, depth-1, keys, wide && j == 0))
		}
	case "array":
		for j := range size {
			n.children = append(n.children, randomNode(rnd, depth-1, keys, wide && j == 0))
		}
	}
	return n
}

// events writes n to parquet-go's builder b and to w, each object field
// by name to b and by its id in ids to w.
func events(n *node, b *pv.Builder, w *writer, ids map[string]int) error {
	switch n.kind {
	case "null":
		b.Null()
		w.Null()
	case "bool":
		b.Bool(n.i%2 == 0)
		w.Bool(n.i%2 == 0)
	case "int8":
		b.Int8(int8(n.i))
		w.Int8(int8(n.i))
	case "int16":
		b.Int16(int16(n.i))
		w.Int16(int16(n.i))
	case "int32":
		b.Int32(int32(n.i))
		w.Int32(int32(n.i))
	case "int64":
		b.Int64(n.i)
		w.Int64(n.i)
	case "double":
		b.Double(n.f)
		w.Double(n.f)
	case "dec4":
		b.Decimal4(int32(n.i), byte(n.i&7))
		w.Decimal4(int32(n.i), byte(n.i&7))
	case "dec8":
		b.Decimal8(n.i, byte(n.i&15))
		w.Decimal8(n.i, byte(n.i&15))
	case "dec16":
		var u [16]byte
		u[3], u[15] = byte(n.i), byte(n.i>>8)
		b.Decimal16(u, 20)
		w.Decimal16(u, 20)
	case "string":
		b.String(n.s)
		w.String([]byte(n.s))
	case "object":
		b.BeginObject()
		w.beginObject()
		for i, k := range n.keys {
			b.Field(k)
			w.field(ids[k])
			if err := events(n.children[i], b, w, ids); err != nil {
				return err
			}
		}
		b.EndObject()
		if err := w.endObject(); err != nil {
			return err
		}
	case "array":
		b.BeginArray()
		w.beginArray()
		for _, c := range n.children {
			if err := events(c, b, w, ids); err != nil {
				return err
			}
		}
		b.EndArray()
		if err := w.endArray(); err != nil {
			return err
		}
	}
	return nil
}

// The writer writes the bytes parquet-go's variant.Builder writes for the
// same values, with the keys' ids in a sorted dictionary: every scalar type
// the encoder writes, short and long strings, and objects and arrays with
// 1- to 3-byte offsets, more than 255 children and more than 255 keys.
func TestWriterMatchesBuilder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("k%03d", (i*7919)%300))
	}
	sorted := slices.Sorted(slices.Values(keys))
	var meta pv.MetadataBuilder
	ids := map[string]int{}
	for i, k := range sorted {
		if meta.Add(k) != i {
			t.Fatal("the dictionary is not in key order")
		}
		ids[k] = i
	}
	b := pv.NewBuilderWithMetadata(&meta)
	var w writer
	var long, many int // values past 64 KiB, and of a container of over 255 children
	for i := range 400 {
		n := randomNode(rnd, 4, keys[:1+rnd.IntN(len(keys))], i%10 == 0)
		b.Reset()
		w.reset()
		if err := events(n, b, &w, ids); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		want, err := b.Bytes()
		if err != nil {
			t.Fatalf("value %d: parquet-go: %v", i, err)
		}
		if !bytes.Equal(w.buf, want) {
			t.Fatalf("value %d (%s): % x\nwant % x", i, n.kind, head(w.buf), head(want))
		}
		if len(want) > 1<<16 {
			long++
		}
		if len(n.children) > 255 {
			many++
		}
	}
	if long == 0 || many == 0 {
		t.Fatalf("%d values past 64 KiB, %d with over 255 children: the test must have both", long, many)
	}
	// A key twice in one object: of a few fields, of many whose largest id
	// is below four times their count, and of many with sparse ids.
	dense := []int{4}
	for id := range 20 {
		dense = append(dense, 20-id)
	}
	sparse := slices.Clone(dense)
	for i := range sparse {
		sparse[i] *= 100
	}
	for _, ids := range [][]int{{4, 2, 4}, dense, sparse} {
		w.reset()
		w.beginObject()
		for _, id := range ids {
			w.field(id)
			w.Null()
		}
		var dup duplicateKeyError
		if err := w.endObject(); !errors.As(err, &dup) || dup.id != ids[0] {
			t.Fatalf("an object with id %d twice (%v): %v, want the duplicate key", ids[0], ids, err)
		}
	}
}

// head is the first bytes of b, for messages.
func head(b []byte) []byte { return b[:min(len(b), 64)] }

// appendMetadata writes the bytes parquet-go's MetadataBuilder writes for
// the same sorted keys: empty, 1-byte offsets, and 2- and 3-byte offsets
// (more than 255 keys, or keys past 64 KiB).
func TestAppendMetadataMatchesBuilder(t *testing.T) {
	for _, keys := range [][]string{
		nil,
		{"", "a", "b"},
		{"id", "name", "tags", "ts", "é"},
		manyKeys(300, 4),
		manyKeys(3, 30_000),
	} {
		sorted := slices.Sorted(slices.Values(keys))
		var meta pv.MetadataBuilder
		var all []byte
		var spans []keySpan
		for i, k := range sorted {
			meta.Add(k)
			all = append(all, k...)
			spans = append(spans, keySpan{len(all) - len(k), len(all), i})
		}
		if got, want := appendMetadata(nil, all, spans), meta.AppendTo(nil); !bytes.Equal(got, want) {
			t.Errorf("%d keys: % x\nwant % x", len(keys), head(got), head(want))
		}
	}
}

// manyKeys returns n distinct keys of at least size bytes.
func manyKeys(n, size int) []string {
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("%0*d", size, i))
	}
	return keys
}
