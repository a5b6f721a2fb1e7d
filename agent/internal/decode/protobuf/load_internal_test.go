package protobuf

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func TestLoadDescriptorSet(t *testing.T) {
	data, err := os.ReadFile("testdata/events.desc")
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range set.File {
		names = append(names, f.GetName())
	}
	if got, want := strings.Join(names, " "), "common.proto google/protobuf/timestamp.proto google/protobuf/wrappers.proto events.proto"; got != want {
		t.Errorf("events.desc holds %s, want %s", got, want)
	}

	// Without the well-known types, and in reverse order: imports resolve.
	without := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{set.File[3], set.File[0]}}
	files, err := protoschema.LoadDescriptorSet(marshal(t, without))
	if err != nil {
		t.Fatalf("without the well-known types: %v", err)
	}
	if _, err := protoschema.FindMessage(files, "google.protobuf.Int32Value"); err != nil {
		t.Errorf("the well-known types imported are not in the registry: %v", err)
	}

	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"garbage":        {[]byte{0xff, 0xff}, "reading the descriptor set: "},
		"empty":          {nil, "it holds no files"},
		"missing import": {marshal(t, &descriptorpb.FileDescriptorSet{File: set.File[3:]}), "import common.proto is neither in the set nor a well-known type"},
		"duplicate":      {marshal(t, &descriptorpb.FileDescriptorSet{File: append(set.File[:1:1], set.File[0])}), "common.proto appears twice"},
		"cycle": {marshal(t, &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
			{Name: proto.String("a.proto"), Dependency: []string{"b.proto"}},
			{Name: proto.String("b.proto"), Dependency: []string{"a.proto"}},
		}}), "import cycle through a.proto"},
	} {
		_, err := protoschema.LoadDescriptorSet(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

// marshal serializes set.
func marshal(t *testing.T, set *descriptorpb.FileDescriptorSet) []byte {
	t.Helper()
	data, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFindMessage(t *testing.T) {
	files := events(t)
	for name, want := range map[string]string{
		"tributary.events.Event":      "tributary.events.Event",
		".tributary.events.Event":     "tributary.events.Event",
		"Event":                       "tributary.events.Event",
		"tributary.events.Event.Item": "tributary.events.Event.Item",
		"Source":                      "tributary.common.Source",
		"Timestamp":                   "google.protobuf.Timestamp",
	} {
		md, err := protoschema.FindMessage(files, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if string(md.FullName()) != want {
			t.Errorf("%s found %s, want %s", name, md.FullName(), want)
		}
	}
	for name, want := range map[string]string{
		"Item": `message name "Item" is ambiguous: it could be tributary.common.Item, tributary.events.Event.Item`,
		"Nope": `message "Nope" not found; there are google.protobuf.BoolValue, google.protobuf.BytesValue, ` +
			`google.protobuf.DoubleValue, google.protobuf.FloatValue, google.protobuf.Int32Value, google.protobuf.Int64Value, ` +
			`google.protobuf.StringValue, google.protobuf.Timestamp, google.protobuf.UInt32Value, google.protobuf.UInt64Value, ` +
			`tributary.common.Item, tributary.common.Source, tributary.events.Event, tributary.events.Event.Item, ` +
			`tributary.events.Node, tributary.events.Order`,
		"tributary.events.Kind": `message "tributary.events.Kind" not found; there are google.protobuf.BoolValue,`,
	} {
		_, err := protoschema.FindMessage(files, name)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %s", name, err, want)
		}
	}
	if _, err := protoschema.FindMessage(new(protoregistry.Files), "Event"); err == nil || err.Error() != `message "Event" not found: the descriptors hold no messages` {
		t.Errorf("empty registry: error %v", err)
	}
}

func TestFindMessageListsAtMost30(t *testing.T) {
	var src strings.Builder
	src.WriteString("syntax = \"proto3\";\npackage many;\n")
	for i := range 35 {
		fmt.Fprintf(&src, "message M%02d { int32 x = 1; }\n", i)
	}
	files := new(protoregistry.Files)
	if err := files.RegisterFile(compile(t, src.String(), nil)); err != nil {
		t.Fatal(err)
	}
	_, err := protoschema.FindMessage(files, "Nope")
	if err == nil || !strings.HasSuffix(err.Error(), "many.M28, many.M29 and 5 more") {
		t.Errorf("error %v, want the first 30 names and 5 more", err)
	}
}
