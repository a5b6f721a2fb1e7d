// Package protobuftest builds Protobuf messages for tests of the protobuf
// decoder and of the decoders that use it.
package protobuftest

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Encode builds a message of md from its protojson text with dynamicpb and
// serializes it, failing the test on error.
func Encode(t testing.TB, md protoreflect.MessageDescriptor, text string) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(text), m); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
