package protobuf

import (
	"encoding/json"
	"os"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// events loads testdata/events.desc.
func events(t testing.TB) *protoregistry.Files {
	t.Helper()
	data, err := os.ReadFile("testdata/events.desc")
	if err != nil {
		t.Fatal(err)
	}
	files, err := protoschema.LoadDescriptorSet(data)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// message finds the message name of testdata/events.desc.
func message(t testing.TB, name string) protoreflect.MessageDescriptor {
	t.Helper()
	md, err := protoschema.FindMessage(events(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// columns returns protoschema.Columns(md, maxDepth), failing the test on error.
func columns(t testing.TB, md protoreflect.MessageDescriptor, maxDepth int) []schema.Field {
	t.Helper()
	cols, err := protoschema.Columns(md, maxDepth)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// decoder returns the Decoder of md into all its columns, with
// recursive_fields_max_depth -1, and the columns.
func decoder(t testing.TB, md protoreflect.MessageDescriptor) (*Decoder, []schema.Field) {
	t.Helper()
	cols := columns(t, md, -1)
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		t.Fatal(err)
	}
	return d, cols
}

// decodeRow decodes data with d into a row of cols and returns the row as
// JSON, assembled back by parquet-go from the batch's columns (rowstest):
// TIMESTAMP is microseconds, BINARY base64.
func decodeRow(t testing.TB, d *Decoder, cols []schema.Field, data []byte) (string, error) {
	t.Helper()
	b, err := rows.NewBuilder(cols)
	if err != nil {
		t.Fatal(err)
	}
	b.BeginRow()
	if err := d.Decode(b, 0, data); err != nil {
		return "", err
	}
	if err := b.EndRow(); err != nil {
		t.Fatal(err)
	}
	rs := rowstest.Rows(b.Columns())
	if len(rs) != 1 {
		t.Fatalf("%d rows, want 1", len(rs))
	}
	out := map[string]any{}
	if err := b.Schema().Reconstruct(&out, rs[0]); err != nil {
		t.Fatal(err)
	}
	text, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(text), nil
}

// compile compiles the .proto source main with refs, failing the test on
// error.
func compile(t testing.TB, main string, refs map[string]string) protoreflect.FileDescriptor {
	t.Helper()
	fd, err := Compile(t.Context(), main, refs)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}
