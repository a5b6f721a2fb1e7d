package variant_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	pv "github.com/parquet-go/parquet-go/variant"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// unhex decodes hex written with spaces between bytes.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// emptyMetadata is version 1, sorted, 1-byte offsets, no keys, offset 0.
const emptyMetadata = "11 00 00"

// TestEncodeBytes compares the encoding with layouts worked out by hand from
// the VariantEncoding specification's diagrams and type tables.
func TestEncodeBytes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 64)
	tests := []struct {
		name, json, metadata, value string
	}{
		{"null", `null`, emptyMetadata, "00"},
		{"true", ` true `, emptyMetadata, "04"},
		{"false", "\n\tfalse\r", emptyMetadata, "08"},
		{"int8", `-1`, emptyMetadata, "0c ff"},
		{"int8 max", `127`, emptyMetadata, "0c 7f"},
		{"int16", `-129`, emptyMetadata, "10 7f ff"},
		{"int32", `70000`, emptyMetadata, "14 70 11 01 00"},
		{"int64", `5000000000`, emptyMetadata, "18 00 f2 05 2a 01 00 00 00"},
		{"negative zero int", `-0`, emptyMetadata, "0c 00"},
		{"double", `1e2`, emptyMetadata, "1c 00 00 00 00 00 00 59 40"},
		{"negative zero double", `-0e0`, emptyMetadata, "1c 00 00 00 00 00 00 00 80"},
		{"decimal4", `1.50`, emptyMetadata, "20 02 96 00 00 00"},
		{"decimal4 negative", `-0.5`, emptyMetadata, "20 01 fb ff ff ff"},
		{"negative zero decimal", `-0.0`, emptyMetadata, "20 01 00 00 00 00"},
		{"decimal8 by scale", `0.0000000001`, emptyMetadata, "24 0a 01 00 00 00 00 00 00 00"},
		{"decimal16 past int64", `9223372036854775808`, emptyMetadata,
			"28 00 00 00 00 00 00 00 00 80 00 00 00 00 00 00 00 00"},
		{"decimal16 negative", `-9223372036854775809`, emptyMetadata,
			"28 00 ff ff ff ff ff ff ff 7f ff ff ff ff ff ff ff ff"},
		{"short string", `"hi"`, emptyMetadata, "09 68 69"},
		{"empty string", `""`, emptyMetadata, "01"},
		{"long string", `"` + long + `"`, emptyMetadata, "40 40 00 00 00 " + hex.EncodeToString([]byte(long))},
		{"escapes", `"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"`, emptyMetadata, "39 22 5c 2f 08 0c 0a 0d 09 c3 a9 f0 9f 98 80"},
		{"lone surrogate", `"\ud800x"`, emptyMetadata, "09 3f 78"},
		{"invalid UTF-8", "\"\xff\"", emptyMetadata, "0d ef bf bd"},
		{"truncated UTF-8", "\"a\xe2\x82b\"", emptyMetadata, "15 61 ef bf bd 62"},
		{"encoded surrogate", "\"\xed\xa0\x80\"", emptyMetadata, "0d ef bf bd"},
		{"overlong UTF-8", "\"\xc0\xaf\"", emptyMetadata, "19 ef bf bd ef bf bd"},
		// The specification's example: ids and offsets in key order, the
		// values where they were written.
		{"object", `{"c": 3, "b": 2, "a": 1}`, "11 03 00 01 02 03 61 62 63",
			"02 03 00 01 02 04 02 00 06 0c 03 0c 02 0c 01"},
		{"empty object", `{}`, emptyMetadata, "02 00 00"},
		{"array", `[1, "x"]`, emptyMetadata, "03 02 00 02 04 0c 01 05 78"},
		{"empty array", `[]`, emptyMetadata, "03 00 00"},
		// Keys repeat across objects once in the dictionary, sorted by
		// bytes ("B" < "a" < "é").
		{"dictionary", `[{"é":null,"a":true},{"a":false,"B":null}]`,
			"11 03 00 01 02 04 42 61 c3 a9",
			"03 02 00 09 12 " +
				"02 02 01 02 01 00 02 00 04 " +
				"02 02 00 01 01 00 02 08 00"},
	}
	var enc variant.Encoder
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			meta, value, err := enc.Encode([]byte(test.json))
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, test.metadata); !bytes.Equal(meta, want) {
				t.Errorf("metadata\n got % x\nwant % x", meta, want)
			}
			if want := unhex(t, test.value); !bytes.Equal(value, want) {
				t.Errorf("value\n got % x\nwant % x", value, want)
			}
		})
	}
}

// checkRoundTrip encodes text and checks that both the test's own decoder and
// parquet-go's decoder read back what encoding/json reads.
func checkRoundTrip(t testing.TB, enc *variant.Encoder, text []byte) {
	t.Helper()
	want, err := referenceJSON(text)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	meta, value, err := enc.Encode(text)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	got, err := decodeVariant(meta, value)
	if err != nil {
		t.Fatalf("decode: %v\nmetadata % x\nvalue % x", err, meta, value)
	}
	if err := sameValue(want, got); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	m, err := pv.DecodeMetadata(meta)
	if err != nil {
		t.Fatalf("parquet-go metadata: %v", err)
	}
	if !m.Sorted {
		t.Fatalf("parquet-go reads the dictionary as unsorted")
	}
	if _, err := pv.Decode(m, value); err != nil {
		t.Fatalf("parquet-go value: %v", err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	manyKeys := func(n int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%04d":%d`, n-i, i*1000)
		}
		b.WriteByte('}')
		return b.String()
	}
	tests := map[string]string{
		"nested":  `{"user":{"name":"Ada","tags":["x",{"deep":[1,2,[3]]}],"age":36},"ok":true,"n":null}`,
		"unicode": `{"ключ":"значение","emoji":"😀\u00e9","中文":["汉字","\u4e2d"],"a.b c":"(cost)"}`,
		"large ints": `[9223372036854775807,-9223372036854775808,9223372036854775808,` +
			`99999999999999999999999999999999999999,-12345678901234567890123456789012345678,` +
			`123456789012345678901234567890123456789]`,
		"decimals": `[0.1,-2.50,3.141592653,1234567890.12345678,0.12345678901234567890123456789012345678,` +
			`1.000000000000000000000000000000000000001,1e-7,6.02E23,1e400,-1e400]`,
		"nulls":         `[null,{"a":null},[null,null]]`,
		"negative zero": `[-0,-0.0,-0e0,-0.0E+1]`,
		"300 keys":      manyKeys(300),
		"70000 keys":    manyKeys(70000),
		"long values":   `{"s":"` + strings.Repeat("é", 200) + `","t":"` + strings.Repeat("x", 70000) + `"}`,
		"300 items":     "[" + strings.Repeat(`"v",`, 299) + `"v"]`,
		"depth 999":     strings.Repeat(`[`, 998) + `{"a":1}` + strings.Repeat(`]`, 998),
		"depth 1000":    strings.Repeat(`{"a":`, 999) + `[]` + strings.Repeat(`}`, 999),
		"empty key":     `{"":1,"a":{"":2}}`,
		"escaped key":   `{"\u0062":1,"a\n":2,"a":3}`,
	}
	var enc variant.Encoder
	for name, text := range tests {
		t.Run(name, func(t *testing.T) { checkRoundTrip(t, &enc, []byte(text)) })
	}
}

// TestEncodeLargeObject checks the header of an object over 255 keys: the
// 4-byte count, 2-byte field ids, and ids listed in key order.
func TestEncodeLargeObject(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := 299; i >= 0; i-- {
		fmt.Fprintf(&b, `"%03d":0,`, i)
	}
	b.WriteString(`"end":0}`)
	var enc variant.Encoder
	meta, value, err := enc.Encode([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	// 301 keys of 3 bytes: 903 bytes of strings, so 2-byte offsets.
	if meta[0] != 0x51 || meta[1] != 0x2d || meta[2] != 0x01 {
		t.Errorf("metadata header % x, want 51 2d 01", meta[:3])
	}
	// Object, is_large, 2-byte ids, 2-byte offsets (602 bytes of values).
	if want := []byte{0x02 | (0x10|0x04|0x01)<<2, 0x2d, 0x01, 0, 0, 0x00, 0x00, 0x01, 0x00}; !bytes.Equal(value[:len(want)], want) {
		t.Errorf("value header % x, want % x", value[:len(want)], want)
	}
}

func TestEncodeErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"empty":            ``,
		"space":            "  \n",
		"trailing value":   `{"id":1}{"id":2}`,
		"trailing text":    `{"id":1} xyz`,
		"duplicate key":    `{"a":1,"b":2,"a":3}`,
		"duplicate nested": `[{"x":{"a":1,"a":1}}]`,
		"duplicate escape": `{"a":1,"\u0061":2}`,
		"depth 1001":       strings.Repeat(`[`, 1001) + strings.Repeat(`]`, 1001),
		"depth 1001 obj":   strings.Repeat(`{"a":`, 1001) + `1` + strings.Repeat(`}`, 1001),
		"single quotes":    `{'a':1}`,
		"unquoted key":     `{a:1}`,
		"trailing comma":   `[1,]`,
		"missing colon":    `{"a" 1}`,
		"missing value":    `{"a":}`,
		"unclosed object":  `{"a":1`,
		"unclosed array":   `[1`,
		"unclosed string":  `"abc`,
		"leading zero":     `01`,
		"plus":             `+1`,
		"bare point":       `1.`,
		"point first":      `.5`,
		"bare exponent":    `1e`,
		"NaN":              `NaN`,
		"Infinity":         `-Infinity`,
		"control char":     "\"a\x01b\"",
		"bad escape":       `"\x41"`,
		"short unicode":    `"\u12"`,
		"bad literal":      `nul`,
		"comment":          `1 // one`,
	}
	var enc variant.Encoder
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			if _, _, err := enc.Encode([]byte(text)); !errors.Is(err, variant.ErrSyntax) {
				t.Fatalf("Encode(%.40q) = %v, want ErrSyntax", text, err)
			}
			// The encoder stays usable after an error.
			checkRoundTrip(t, &enc, []byte(`{"b":[1,"x"],"a":2}`))
		})
	}
}

// TestEncodeAllocs checks that a warmed-up Encoder does not allocate.
func TestEncodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	var enc variant.Encoder
	for _, text := range [][]byte{smallObject, nestedObject} {
		if _, _, err := enc.Encode(text); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _, _ = enc.Encode(text) }); n != 0 {
			t.Errorf("Encode allocates %v times per call for %d bytes", n, len(text))
		}
	}
}

// An Encoder that keeps the dictionaries of recent shapes writes each text
// as a new Encoder does, whatever came before it: texts with the same keys
// in the same order, in another order, split differently ("ab","c" and
// "a","bc"), nested, in arrays of other lengths, a subset of them, more
// keys than it keeps from one text to the next, after texts it refused,
// and more shapes than it keeps.
func TestEncodeSequence(t *testing.T) {
	t.Parallel()
	texts := []string{
		`{"id":1,"user":"ada","tags":["a"]}`,
		`{"id":2,"user":"bob","tags":[]}`,
		`{"user":"cy","id":3,"tags":["b","c"]}`,
		`{"ab":1,"c":2}`,
		`{"a":1,"bc":2}`,
		`{"a":1,"bc":2}`,
		`{"a":1,"bc":{"a":[{"a":null}]}}`,
		`{"a":1,"bc":{"a":[{"a":null}]}}`,
		`{"a":1,"bc":2`,
		`{"a":1,"bc":2}`,
		`{"a":1,"a":2}`,
		`{"a":1,"a":2}`,
		`{"a":1,"bc":2}`,
		`[1,2,3]`,
		`{}`,
		`{"\u0061":1,"bc":2}`,
		`{"zz":1,"zz":2,"bc":3}`,
		`{"zz":7,"bc":1}`,
		`{"items":[{"k":1}],"n":0}`,
		`{"items":[{"k":1},{"k":2}],"n":1}`,
		`{"items":[],"n":2}`,
		`{"items":[` + strings.Repeat(`{"k":1},`, 5000) + `{"k":2}],"n":3}`,
		`{"items":[` + strings.Repeat(`{"k":1},`, 5000) + `{"k":2}],"n":3}`,
		`{"items":[],"n":2}`,
		`{"id":1,"user":"ada","tags":["a"]}`,
	}
	// More shapes than the Encoder keeps, twice over, in order and in
	// reverse: kept ones, replaced ones, and two of one set in turn.
	var shapes []string
	for i := range 150 {
		shapes = append(shapes, fmt.Sprintf(`{"k%d":%d,"common":[{"k%d":1}],"b":"x"}`, i, i, i%7))
	}
	texts = append(texts, shapes...)
	texts = append(texts, shapes...)
	slices.Reverse(shapes)
	texts = append(texts, shapes...)
	var enc variant.Encoder
	for i, text := range texts {
		meta, value, err := enc.Encode([]byte(text))
		var fresh variant.Encoder
		wantMeta, wantValue, wantErr := fresh.Encode([]byte(text))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(meta, wantMeta) || !bytes.Equal(value, wantValue) {
			t.Fatalf("text %d %s: got % x, % x, %v; a new Encoder writes % x, % x, %v", i, text, meta, value, err, wantMeta, wantValue, wantErr)
		}
	}
}
