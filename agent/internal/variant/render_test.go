package variant_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// roundTripTexts returns the texts the round-trip tests start from: the
// fuzz seeds of the Encoder, the Spark corpus and the benchmark objects.
func roundTripTexts(tb testing.TB) [][]byte {
	texts := [][]byte{smallObject, nestedObject, []byte(`{"b":1,"a":[{},[]],"é":"x","n":-0.0,"d":1.50,"e":-0e0}`),
		[]byte(`[1e2,1.5e300,-1e-300,123456789012345678901234567890123456789,0.000000000000000000000000000000000000001]`)}
	for _, c := range readSparkCorpus(tb) {
		texts = append(texts, c.input)
	}
	return texts
}

// checkStable encodes text, renders it with AppendJSON, and checks that the
// rendering is JSON that renders the same after encoding it again (and has
// the same dictionary). It returns the rendering, or nil when Encode
// refuses text.
func checkStable(t testing.TB, enc *variant.Encoder, text []byte) []byte {
	t.Helper()
	meta, value, err := enc.Encode(text)
	if err != nil {
		return nil
	}
	meta = bytes.Clone(meta)
	got, err := variant.AppendJSON(nil, meta, value)
	if err != nil {
		t.Fatalf("AppendJSON of Encode(%q): %v", text, err)
	}
	if !json.Valid(got) {
		t.Fatalf("AppendJSON of Encode(%q) is not JSON: %s", text, got)
	}
	meta2, value2, err := enc.Encode(got)
	if err != nil || !bytes.Equal(meta, meta2) {
		t.Fatalf("Encode(%q) has metadata % x; its rendering %s encodes to % x, %v", text, meta, got, meta2, err)
	}
	if again, err := variant.AppendJSON(nil, meta2, value2); err != nil || !bytes.Equal(again, got) {
		t.Fatalf("Encode(%q) renders as %s, which encodes and renders as %s, %v", text, got, again, err)
	}
	return got
}

// TestAppendJSONRoundTrip: Encode then AppendJSON gives JSON of the same
// value as the input (numbers compared as numbers), which renders the same
// after encoding it again.
func TestAppendJSONRoundTrip(t *testing.T) {
	t.Parallel()
	var enc variant.Encoder
	n := 0
	for _, text := range roundTripTexts(t) {
		got := checkStable(t, &enc, text)
		want, err := referenceJSON(text)
		if got == nil || err != nil || !utf8.Valid(text) || surrogateEscape.Match(text) {
			continue // refused, or broken text that Encode replaces
		}
		back, err := referenceJSON(got)
		if err != nil {
			t.Fatalf("reading back %s: %v", got, err)
		}
		if err := sameJSON(want, back); err != nil {
			t.Errorf("%s rendered as %s: %v", text, got, err)
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d texts compared", n)
	}
}

// sameJSON reports how got differs from want, both read by referenceJSON,
// comparing numbers by value: exactly, or as the nearest doubles, or an
// out-of-range number with the "Infinity" string a double ±Inf renders as.
func sameJSON(want, got any) error { return sameTree(want, got, sameJSONNumber) }

// sameJSONNumber compares a number of the input with its rendering.
func sameJSONNumber(want json.Number, got any) error {
	wf, _ := strconv.ParseFloat(string(want), 64)
	switch g := got.(type) {
	case json.Number:
		wr, _ := new(big.Rat).SetString(string(want))
		gr, _ := new(big.Rat).SetString(string(g))
		gf, _ := strconv.ParseFloat(string(g), 64)
		if wr.Cmp(gr) == 0 || wf == gf {
			return nil
		}
	case string:
		if math.IsInf(wf, 1) && g == "Infinity" || math.IsInf(wf, -1) && g == "-Infinity" {
			return nil
		}
	}
	return fmt.Errorf("number %s rendered as %#v", want, got)
}

// prim returns a primitive value of type id typ with data d.
func prim(typ byte, d ...byte) []byte { return append([]byte{typ << 2}, d...) }

// le returns v's n low bytes, little-endian.
func le(v uint64, n int) []byte { return binary.LittleEndian.AppendUint64(nil, v)[:n] }

// sized returns d after its 4-byte little-endian length.
func sized(d string) []byte { return append(le(uint64(len(d)), 4), d...) }

// emptyMeta is the metadata of an empty dictionary.
var emptyMeta = []byte{0x11, 0, 0}

// abMeta is a sorted dictionary of the keys "a" and "b".
var abMeta = []byte{0x11, 2, 0, 1, 2, 'a', 'b'}

// TestAppendJSONTypes renders a value of each type, built by hand as the
// specification lays it out.
func TestAppendJSONTypes(t *testing.T) {
	t.Parallel()
	const day = 19723 // 2024-01-01
	micros := uint64(day*86400e6 + 3723_000_456)
	negFive := uint64(math.MaxUint64 - 4)
	negDecimal8 := int64(-123456789012345678)
	for _, c := range []struct {
		name, want  string
		meta, value []byte
	}{
		{"null", `null`, emptyMeta, prim(0)},
		{"true", `true`, emptyMeta, prim(1)},
		{"false", `false`, emptyMeta, prim(2)},
		{"int8", `-1`, emptyMeta, prim(3, 0xff)},
		{"int16", `-32768`, emptyMeta, prim(4, le(0x8000, 2)...)},
		{"int32", `2147483647`, emptyMeta, prim(5, le(math.MaxInt32, 4)...)},
		{"int64", `-9223372036854775808`, emptyMeta, prim(6, le(1<<63, 8)...)},
		{"double", `1.5e+00`, emptyMeta, prim(7, le(math.Float64bits(1.5), 8)...)},
		{"double negative zero", `-0e+00`, emptyMeta, prim(7, le(1<<63, 8)...)},
		{"double infinity", `"-Infinity"`, emptyMeta, prim(7, le(math.Float64bits(math.Inf(-1)), 8)...)},
		{"double NaN", `"NaN"`, emptyMeta, prim(7, le(math.Float64bits(math.NaN()), 8)...)},
		{"decimal4", `1.50`, emptyMeta, prim(8, append([]byte{2}, le(150, 4)...)...)},
		{"decimal4 negative", `-0.005`, emptyMeta, prim(8, append([]byte{3}, le(negFive, 4)...)...)},
		{"decimal4 zero", `0.00`, emptyMeta, prim(8, append([]byte{2}, le(0, 4)...)...)},
		{"decimal8", `-123456789.012345678`, emptyMeta,
			prim(9, append([]byte{9}, le(uint64(negDecimal8), 8)...)...)},
		{"decimal16 38 digits", `-9999999999999999999999999999999999999.9`, emptyMeta,
			prim(10, append(append([]byte{1}, le(0xf675ddc000000001, 8)...), le(0xb4c4b357a5793b85, 8)...)...)},
		{"decimal16 scale 38", `-0.00000000000000000000000000000000000005`, emptyMeta,
			prim(10, append(append([]byte{38}, le(negFive, 8)...), le(math.MaxUint64, 8)...)...)},
		{"date", `"2024-01-01"`, emptyMeta, prim(11, le(day, 4)...)},
		{"date before 1970", `"1969-12-31"`, emptyMeta, prim(11, le(math.MaxUint32, 4)...)},
		{"timestamp", `"2024-01-01T01:02:03.000456Z"`, emptyMeta, prim(12, le(micros, 8)...)},
		{"timestamp ntz", `"2024-01-01T01:02:03.000456"`, emptyMeta, prim(13, le(micros, 8)...)},
		{"float", `1.5e+00`, emptyMeta, prim(14, le(uint64(math.Float32bits(1.5)), 4)...)},
		{"binary", `"AP8="`, emptyMeta, prim(15, sized("\x00\xff")...)},
		{"string", `"say \"hi\"\n"`, emptyMeta, prim(16, sized("say \"hi\"\n")...)},
		{"time", `"01:02:03.000456"`, emptyMeta, prim(17, le(3723_000_456, 8)...)},
		{"timestamp nanos", `"2024-01-01T01:02:03.000456789Z"`, emptyMeta, prim(18, le(micros*1000+789, 8)...)},
		{"timestamp ntz nanos", `"2024-01-01T01:02:03.000456789"`, emptyMeta, prim(19, le(micros*1000+789, 8)...)},
		{"uuid", `"00112233-4455-6677-8899-aabbccddeeff"`, emptyMeta,
			prim(20, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff)},
		{"short string", `"é"`, emptyMeta, []byte{2<<2 | 1, 0xc3, 0xa9}},
		// {"a":1,"b":[true]}: the object's values in reverse order.
		{"object", `{"a":1,"b":[true]}`, abMeta, []byte{2, 2, 0, 1, 5, 0, 7, 3, 1, 0, 1, 1 << 2, 3 << 2, 1}},
		// [[],{}] with 2-byte offsets and a 4-byte element count.
		{"large array", `[[],{}]`, emptyMeta, []byte{1<<4 | 1<<2 | 3, 2, 0, 0, 0, 0, 0, 3, 0, 6, 0, 3, 0, 0, 2, 0, 0}},
	} {
		got, err := variant.AppendJSON([]byte("x"), c.meta, c.value)
		if err != nil || string(got) != "x"+c.want {
			t.Errorf("%s: AppendJSON(% x, % x) = %s, %v; want x%s", c.name, c.meta, c.value, got, err, c.want)
		}
	}
}

// TestAppendJSONMalformed: broken binaries give an error wrapping
// ErrMalformed that names the problem.
func TestAppendJSONMalformed(t *testing.T) {
	t.Parallel()
	deep := prim(0) // in arrays nested too deep, with 4-byte offsets
	for range variant.MaxDepth + 1 {
		deep = append(append(append([]byte{3<<2 | 3, 1}, le(0, 4)...), le(uint64(len(deep)), 4)...), deep...)
	}
	for _, c := range []struct {
		name, want  string
		meta, value []byte
	}{
		{"empty metadata", "metadata: empty", nil, prim(0)},
		{"metadata version", "version 2", []byte{0x12, 0, 0}, prim(0)},
		{"metadata offsets", "2 keys need 3 bytes of offsets", []byte{0x01, 2, 0}, prim(0)},
		{"empty value", "a value of 0 bytes", emptyMeta, nil},
		{"unknown primitive", "unknown primitive type 21", emptyMeta, prim(21)},
		{"short int64", "primitive type 6 needs 8 bytes, 2 left", emptyMeta, prim(6, 1, 2)},
		{"long string", "primitive type 16 of 9 bytes, 1 left", emptyMeta, prim(16, 9, 0, 0, 0, 'x')},
		{"short string", "a short string of 3 bytes, 1 left", emptyMeta, []byte{3<<2 | 1, 'x'}},
		{"decimal scale", "decimal scale 39", emptyMeta, prim(8, 39, 0, 0, 0, 0)},
		{"decimal digits", "a decimal of 39 digits, over 38", emptyMeta,
			prim(10, append(append([]byte{0}, le(0, 8)...), le(1<<63, 8)...)...)},
		{"time", "outside a day", emptyMeta, prim(17, le(86400e6, 8)...)},
		{"trailing bytes", "1 bytes after the top-level value", emptyMeta, prim(0, 0)},
		{"field id", "field id 2, the dictionary has 2 keys", abMeta, []byte{2, 1, 2, 0, 1, 0}},
		{"key offsets", "key 0 spans bytes 3 to 1", []byte{0x01, 1, 3, 1, 'a'}, []byte{2, 1, 0, 0, 1, 0}},
		{"unsorted keys", `key "a" after "b"`, abMeta, []byte{2, 2, 1, 0, 0, 1, 2, 0, 0}},
		{"duplicate keys", `key "a" after "a"`, abMeta, []byte{2, 2, 0, 0, 0, 1, 2, 0, 0}},
		{"array offsets", "its ids and offsets need 5 bytes, 2 left", emptyMeta, []byte{3, 3, 0}},
		{"array values", "its values need 5 bytes, 1 left", emptyMeta, []byte{3, 1, 0, 5, 0}},
		{"element offset", "array element 0: offset 1, the values have 1 bytes", emptyMeta, []byte{3, 1, 1, 1, 0}},
		{"overlapping elements", "the elements overlap", emptyMeta, []byte{3, 2, 0, 0, 1, 0}},
		{"nesting", fmt.Sprintf("nesting deeper than %d", variant.MaxDepth), emptyMeta, deep},
	} {
		_, err := variant.AppendJSON(nil, c.meta, c.value)
		if !errors.Is(err, variant.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: AppendJSON(% x, % x) = %v, want an error with %q", c.name, c.meta, c.value, err, c.want)
		}
	}
}

// TestAppendJSONAllocs: AppendJSON into a buffer with room does not
// allocate.
func TestAppendJSONAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var enc variant.Encoder
	meta, value, err := enc.Encode(nestedObject)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := variant.AppendJSON(buf[:0], meta, value); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations a call", n)
	}
}

// FuzzAppendJSON checks that AppendJSON never panics on arbitrary binaries
// and writes valid JSON whenever it succeeds, which renders the same again
// after Encode; and, taking value as a JSON text, that Encode, AppendJSON,
// Encode, AppendJSON gives the same text twice.
func FuzzAppendJSON(f *testing.F) {
	var enc variant.Encoder
	for _, text := range roundTripTexts(f) {
		meta, value, err := enc.Encode(text)
		if err == nil {
			f.Add(bytes.Clone(meta), bytes.Clone(value))
		}
	}
	f.Add(abMeta, []byte{2, 2, 0, 1, 5, 0, 7, 3, 1, 0, 1, 1 << 2, 3 << 2, 1})
	f.Fuzz(func(t *testing.T, meta, value []byte) {
		checkStable(t, &enc, value)
		got, err := variant.AppendJSON(nil, meta, value)
		if err != nil {
			if !errors.Is(err, variant.ErrMalformed) {
				t.Fatalf("AppendJSON(% x, % x) = %v, not ErrMalformed", meta, value, err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("AppendJSON(% x, % x) = %s, not JSON", meta, value, got)
		}
		// Keys that are not valid UTF-8 may become equal once replaced,
		// which Encode refuses: such a rendering is not checked further.
		meta2, value2, err := enc.Encode(got)
		if err != nil {
			return
		}
		again, err := variant.AppendJSON(nil, meta2, value2)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("AppendJSON(% x, % x) = %s; encoded and rendered again: %s, %v", meta, value, got, again, err)
		}
	})
}

// BenchmarkAppendJSON measures AppendJSON on the VARIANTs of a small and a
// nested object.
func BenchmarkAppendJSON(b *testing.B) {
	benchTexts(b, func(b *testing.B, text []byte) {
		var enc variant.Encoder
		meta, value, err := enc.Encode(text)
		if err != nil {
			b.Fatal(err)
		}
		var buf []byte
		for b.Loop() {
			if buf, err = variant.AppendJSON(buf[:0], meta, value); err != nil {
				b.Fatal(err)
			}
		}
	})
}
