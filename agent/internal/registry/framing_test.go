package registry_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
)

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		id      int
		payload []byte
		err     string
	}{
		{name: "id and payload", in: []byte{0, 0, 0, 1, 2, 'x'}, id: 258, payload: []byte("x")},
		{name: "header alone", in: []byte{0, 0, 0, 0, 7}, id: 7, payload: []byte{}},
		{name: "largest id", in: []byte{0, 0xff, 0xff, 0xff, 0xff}, id: 1<<32 - 1, payload: []byte{}},
		{name: "empty", in: nil, err: "empty message"},
		{name: "json, not framed", in: []byte(`{"a":1}`), err: "bad magic byte 0x7b"},
		{name: "magic byte 1", in: []byte{1, 0, 0, 0, 1}, err: "bad magic byte 0x01"},
		{name: "short", in: []byte{0, 0, 1}, err: "short header: 3 bytes, want 5"},
		{name: "magic byte alone", in: []byte{0}, err: "short header: 1 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, payload, err := registry.ParseHeader(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || id != tc.id || !bytes.Equal(payload, tc.payload) {
				t.Fatalf("= %d, %x, %v; want %d, %x", id, payload, err, tc.id, tc.payload)
			}
		})
	}
}

func TestParseMessageIndexes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		indexes []int
		rest    []byte
		err     string
	}{
		{name: "[0] short form", in: []byte{0x00, 'm'}, indexes: []int{0}, rest: []byte("m")},
		{name: "[0] long form", in: []byte{0x02, 0x00, 'm'}, indexes: []int{0}, rest: []byte("m")},
		{name: "[1,0]", in: []byte{0x04, 0x02, 0x00, 'm'}, indexes: []int{1, 0}, rest: []byte("m")},
		{name: "[2] nothing after", in: []byte{0x02, 0x04}, indexes: []int{2}, rest: []byte{}},
		{name: "two-byte index 64", in: []byte{0x02, 0x80, 0x01}, indexes: []int{64}, rest: []byte{}},
		{name: "empty", in: nil, err: "message index count: missing varint"},
		{name: "negative count", in: []byte{0x01, 0x00}, err: "count -1 is negative"},
		{name: "negative index", in: []byte{0x02, 0x01}, err: "message index 0 of 1 is -1, out of range"},
		{name: "index past int32", in: []byte{0x02, 0x80, 0x80, 0x80, 0x80, 0x10}, err: "is 2147483648, out of range"},
		{name: "count overflows", in: bytes.Repeat([]byte{0xff}, 11), err: "count: varint overflows 64 bits"},
		{name: "index overflows", in: append([]byte{0x02}, bytes.Repeat([]byte{0xff}, 11)...), err: "message index 0 of 1: varint overflows"},
		{name: "count truncated", in: []byte{0x80}, err: "count: truncated varint"},
		{name: "index truncated", in: []byte{0x04, 0x02, 0x80}, err: "message index 1 of 2: truncated varint"},
		{name: "count more than the data", in: []byte{0x14, 0x02}, err: "count 10 is more than the 1 bytes left"},
		{name: "count more than 128", in: append([]byte{0x82, 0x02}, make([]byte, 200)...), err: "count 129 is more than 128"},
		{name: "huge count", in: []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}, err: "count 2147483647 is more than 128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			indexes, rest, err := registry.ParseMessageIndexes(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(indexes, tc.indexes) || !bytes.Equal(rest, tc.rest) {
				t.Fatalf("= %v, %x, %v; want %v, %x", indexes, rest, err, tc.indexes, tc.rest)
			}
		})
	}
}

// encodeIndexes returns the canonical encoding of indexes, as franz-go's
// producer side frames them: sr.ConfluentHeader appends them after the
// 5-byte header.
func encodeIndexes(t *testing.T, indexes []int) []byte {
	b, err := new(sr.ConfluentHeader).AppendEncode(nil, 0, indexes)
	if err != nil {
		t.Fatal(err)
	}
	return b[5:]
}

func TestParseMessageIndexesReadsFranzGo(t *testing.T) {
	for _, indexes := range [][]int{{0}, {1}, {1, 0}, {0, 0, 0}, {3, 64, 1 << 20}} {
		b := append(encodeIndexes(t, indexes), "msg"...)
		got, rest, err := registry.ParseMessageIndexes(b)
		if err != nil || !slices.Equal(got, indexes) || string(rest) != "msg" {
			t.Errorf("%x = %v, %q, %v; want %v", b, got, rest, err, indexes)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, seed := range [][]byte{nil, {0}, {0, 0, 0, 0, 1}, {0, 0, 0, 0, 1, 'x'}, []byte(`{"a":1}`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, payload, err := registry.ParseHeader(data)
		if err != nil {
			return
		}
		if len(payload) != len(data)-5 || !bytes.Equal(payload, data[5:]) {
			t.Fatalf("payload %x of %x", payload, data)
		}
		framed, _ := new(sr.ConfluentHeader).AppendEncode(nil, id, nil)
		if !bytes.Equal(framed, data[:5]) {
			t.Fatalf("id %d re-encodes as %x, read from %x", id, framed, data[:5])
		}
	})
}

func FuzzParseMessageIndexes(f *testing.F) {
	for _, seed := range [][]byte{nil, {0}, {2, 0}, {4, 2, 0}, {1}, {0x80}, {0x14, 2}, bytes.Repeat([]byte{0xff}, 11)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		indexes, rest, err := registry.ParseMessageIndexes(data)
		if err != nil {
			return
		}
		if len(rest) > len(data) || !bytes.Equal(rest, data[len(data)-len(rest):]) {
			t.Fatalf("rest %x is not a tail of %x", rest, data)
		}
		consumed := data[:len(data)-len(rest)]
		// The canonical form is the shortest: a long [0], or a varint
		// with needless continuation bytes, reads the same but is longer.
		encoded := encodeIndexes(t, indexes)
		if len(encoded) > len(consumed) || len(encoded) == len(consumed) && !bytes.Equal(encoded, consumed) {
			t.Fatalf("%v read from %x re-encodes as %x", indexes, consumed, encoded)
		}
	})
}
