package protobuf

import (
	"strings"
	"testing"
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
