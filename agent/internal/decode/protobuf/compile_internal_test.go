package protobuf

import (
	"encoding/base64"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// refSource is a registry reference that main sources import.
const refSource = `syntax = "proto3";
package shared;
import "google/protobuf/timestamp.proto";
message Audit { string by = 1; google.protobuf.Timestamp at = 2; }
`

const mainSource = `syntax = "proto3";
package app;
import "shared/audit.proto";
import "google/protobuf/timestamp.proto";
message Outer {
  message Inner { int32 a = 1; message Deepest { string z = 1; } }
  message Second { bool b = 1; }
  shared.Audit audit = 1;
  google.protobuf.Timestamp ts = 2;
}
message Other { string o = 1; }
`

func TestCompile(t *testing.T) {
	fd := compile(t, mainSource, map[string]string{"shared/audit.proto": refSource})
	if fd.Path() != MainFile || fd.Package() != "app" {
		t.Errorf("compiled %s of package %s", fd.Path(), fd.Package())
	}
	md, err := MessageByIndexes(fd, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	cols := columns(t, md, -1)
	if got, want := ddl(cols), "audit STRUCT<by: STRING, at: TIMESTAMP>, ts TIMESTAMP"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}

	for name, tc := range map[string]struct {
		main string
		refs map[string]string
		want string
	}{
		"syntax error":   {"syntax = \"proto3\";\nmessage M {\n  int32 x = ;\n}\n", nil, "compiling the schema: main.proto:3:13: syntax error"},
		"missing import": {mainSource, nil, `shared/audit.proto`},
		"unknown type":   {"syntax = \"proto3\";\nmessage M { Missing x = 1; }\n", nil, `main.proto:2:13: field M.x: unknown type Missing`},
		"error in a ref": {mainSource, map[string]string{"shared/audit.proto": "syntax = \"proto3\";\nmessage {"}, "shared/audit.proto:2:9: syntax error"},
		"ref named main": {mainSource, map[string]string{MainFile: refSource}, "a reference is named main.proto"},
	} {
		_, err := Compile(t.Context(), tc.main, tc.refs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

// serialized returns the schema registry's other form of the .proto source
// src (compiled with refs): the base64 of its serialized
// FileDescriptorProto, in lines of 76 characters when wrap is set.
func serialized(t *testing.T, src string, refs map[string]string, wrap bool) string {
	t.Helper()
	data, err := proto.Marshal(protodesc.ToFileDescriptorProto(compile(t, src, refs)))
	if err != nil {
		t.Fatal(err)
	}
	text := base64.StdEncoding.EncodeToString(data)
	if !wrap {
		return text
	}
	var b strings.Builder
	for len(text) > 76 {
		b.WriteString(text[:76] + "\n")
		text = text[76:]
	}
	b.WriteString(text + "\n")
	return b.String()
}

func TestCompileSerialized(t *testing.T) {
	refs := map[string]string{"shared/audit.proto": refSource}
	mainB64, refB64 := serialized(t, mainSource, refs, false), serialized(t, refSource, nil, true)
	for name, tc := range map[string]struct {
		main, ref string
	}{
		"text":                          {mainSource, refSource},
		"base64":                        {mainB64, refB64},
		"base64 importing text":         {mainB64, refSource},
		"text importing base64":         {mainSource, refB64},
		"base64 with surrounding space": {"\n " + mainB64 + " \n", refB64},
	} {
		fd, err := Compile(t.Context(), tc.main, map[string]string{"shared/audit.proto": tc.ref})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if fd.Path() != MainFile {
			t.Errorf("%s: compiled as %s, want %s", name, fd.Path(), MainFile)
		}
		if got, want := ddl(columns(t, fd.Messages().Get(0), -1)), "audit STRUCT<by: STRING, at: TIMESTAMP>, ts TIMESTAMP"; got != want {
			t.Errorf("%s: columns %s, want %s", name, got, want)
		}
		if md, err := MessageByIndexes(fd, []int{0, 0, 0}); err != nil || md.FullName() != "app.Outer.Inner.Deepest" {
			t.Errorf("%s: message [0 0 0]: %v, %v", name, md, err)
		}
	}

	// A descriptor that does not link is an error, not source text.
	bad := serialized(t, "syntax = \"proto3\";\npackage b;\nmessage M { int32 x = 1; }\n", nil, false)
	data, _ := base64.StdEncoding.DecodeString(bad)
	var fdp descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(data, &fdp); err != nil {
		t.Fatal(err)
	}
	fdp.MessageType[0].Field[0].Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	fdp.MessageType[0].Field[0].TypeName = proto.String(".b.Missing")
	data, err := proto.Marshal(&fdp)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compile(t.Context(), base64.StdEncoding.EncodeToString(data), nil)
	if err == nil || !strings.Contains(err.Error(), "b.Missing") || strings.Contains(err.Error(), "syntax error") {
		t.Errorf("descriptor with an unknown type: error %v", err)
	}
	// protodesc checks what protocompile does not.
	fdp.MessageType[0].Field[0].Type = descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum()
	fdp.MessageType[0].Field[0].TypeName = nil
	fdp.MessageType[0].Field[0].Label = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED.Enum()
	if data, err = proto.Marshal(&fdp); err != nil {
		t.Fatal(err)
	}
	_, err = Compile(t.Context(), base64.StdEncoding.EncodeToString(data), nil)
	if err == nil || !strings.Contains(err.Error(), "main.proto: ") || !strings.Contains(err.Error(), "required") {
		t.Errorf("proto3 descriptor with a required field: error %v", err)
	}
	// Nor is a missing import.
	if _, err := Compile(t.Context(), mainB64, nil); err == nil || !strings.Contains(err.Error(), "shared/audit.proto") {
		t.Errorf("base64 without its reference: error %v", err)
	}
}

func TestMessageByIndexes(t *testing.T) {
	fd := compile(t, mainSource, map[string]string{"shared/audit.proto": refSource})
	for _, tc := range []struct {
		indexes []int
		want    string
	}{
		{nil, "app.Outer"},
		{[]int{0}, "app.Outer"},
		{[]int{1}, "app.Other"},
		{[]int{0, 0}, "app.Outer.Inner"},
		{[]int{0, 1}, "app.Outer.Second"},
		{[]int{0, 0, 0}, "app.Outer.Inner.Deepest"},
		{[]int{2}, "message index 2 (position 0 of [2]) is out of range: file main.proto has 2 messages"},
		{[]int{0, 2}, "message index 2 (position 1 of [0 2]) is out of range: message app.Outer has 2 messages"},
		{[]int{0, 0, 0, 0}, "message index 0 (position 3 of [0 0 0 0]) is out of range: message app.Outer.Inner.Deepest has 0 messages"},
		{[]int{-1}, "message index -1 (position 0 of [-1]) is out of range"},
	} {
		md, err := MessageByIndexes(fd, tc.indexes)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = string(md.FullName())
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: %s, want %s", tc.indexes, got, tc.want)
		}
	}
}
