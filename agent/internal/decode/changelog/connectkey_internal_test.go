package changelog

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestConnectPayload checks which keys are taken as wrapped by Connect's
// JsonConverter, and what of them is decoded.
func TestConnectPayload(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"schema":{"type":"struct"},"payload":{"id":1}}`, `{"id":1}`},
		{` { "payload" : {"id":"x,}"} , "schema" : null } `, `{"id":"x,}"}`},
		{`{"schema":{"type":"int32"},"payload":7}`, `7`},
		{`{"sch\u0065ma":{},"payload":{"id":1}}`, `{"id":1}`},
		{`{"schema":{},"payload":null}`, `<nil>`},
		// Not wrapped: decoded as it is.
		{`{"id":1}`, `{"id":1}`},
		{`{"payload":{"id":1}}`, `{"payload":{"id":1}}`},
		{`{"schema":{}}`, `{"schema":{}}`},
		{`{"schema":{},"payload":{"id":1},"id":2}`, `{"schema":{},"payload":{"id":1},"id":2}`},
		{`{}`, `{}`},
		{`[1]`, `[1]`},
		{``, ``},
		{`{"schema":{},"payload":{"id":1}`, `{"schema":{},"payload":{"id":1}`},
		{`{"schema":{},"payload":{"id":1}} x`, `{"schema":{},"payload":{"id":1}} x`},
	} {
		var sc decode.Scanner
		got := connectPayload(&sc, []byte(tc.data))
		s := string(got)
		if got == nil {
			s = "<nil>"
		}
		if s != tc.want {
			t.Errorf("connectPayload(%s) = %s, want %s", tc.data, s, tc.want)
		}
	}
}

// wrappedKeyLayout is the layout of a table whose value is Debezium JSON
// (schema_include as given) with json_options.empty_value_as_delete and a
// declared schema, and whose key is JSON whose columns, prefixed k_, are
// keyFields (declared, or inferred in ADD_NEW_COLUMNS).
func wrappedKeyLayout(schemaInclude, inferred bool, keyFields ...schema.Field) *spec.Layout {
	on := true
	tr := debezium(schemaInclude)
	tr.JSONOptions = &spec.JSONOptions{Schema: "email STRING", EmptyValueAsDelete: &on}
	l := changelogLayout(tr)
	l.Value.Fields = []schema.Field{null("email", tString)}
	jo := &spec.JSONOptions{Schema: "id INT"}
	if inferred {
		jo = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}
	}
	l.Key = spec.Part{Format: spec.FormatJSON, Fields: keyFields, Column: spec.KeyColumn, Prefix: "k_",
		Transformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: jo}}
	return l
}

// decodeSettled decodes recs with l, adding the columns a side asks for
// until none is new, and returns the rows rendered.
func decodeSettled(t *testing.T, l *spec.Layout, recs []record.Record) []map[string]string {
	t.Helper()
	for range 5 {
		d, err := New(l, nil)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		b, err := d.Decode(context.Background(), recs)
		if nc := (*decode.NewColumnsError)(nil); errors.As(err, &nc) {
			p := map[string]*spec.Part{"key": &l.Key, "value": &l.Value}[nc.Side]
			p.Fields, _ = nc.Apply(p.Fields)
			continue
		}
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		var out []map[string]string
		for _, row := range rowstest.Rows(b.Columns) {
			m, err := rowstest.Render(d.Schema(), row)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	t.Fatal("the columns never settled")
	return nil
}

// TestWrappedKey decodes the keys of Debezium events written by Connect's
// JsonConverter with schemas.enable ({"schema", "payload"}), the
// tombstone's too: with schema_include the key's columns are those of the
// payload, declared or inferred; a key that is not wrapped decodes as it
// is; without schema_include a wrapped key is not unwrapped.
func TestWrappedKey(t *testing.T) {
	recs := fixture(t, "debezium-mysql-customers-schema.jsonl")[4:]
	recs = append(recs, record.Record{Key: []byte(`{"id":7}`), Value: recs[0].Value})
	want := []string{
		`1005 "c" "kitt@acme.com" null`,
		`1004 "u" "anne.marie@noanswer.org" null`,
		`1004 "d" "anne.marie@noanswer.org" null`,
		`1004 "d" null null`, // the tombstone
		`7 "c" "kitt@acme.com" null`,
	}
	for _, tc := range []struct {
		name     string
		l        *spec.Layout
		want     []string
		keyTypes string
	}{
		{"declared", wrappedKeyLayout(true, false, null("id", tInt)), want, "id INT"},
		{"inferred", wrappedKeyLayout(true, true), want, "id BIGINT"},
		{"inferred with its column", wrappedKeyLayout(true, true, null("id", tLong)), want, "id BIGINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := decodeSettled(t, tc.l, recs)
			if got := picks(rows, "k_id", "_op", "email", spec.CorruptRecordColumn); !slices.Equal(got, tc.want) {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if got := ddl(tc.l.Key.Fields); got != tc.keyTypes {
				t.Errorf("key columns %s, want %s", got, tc.keyTypes)
			}
		})
	}

	// Without schema_include the key is read as it is: the wrapper has
	// no id.
	rows := decodeSettled(t, wrappedKeyLayout(false, false, null("id", tInt)), recs[:1])
	if got := pick(rows[0], "k_id", "_op", "email"); got != `null "c" "kitt@acme.com"` {
		t.Errorf("without schema_include: %s, want the key's id null", got)
	}
}

// TestWrappedKeyOnlyParsed checks that a key kept whole (a VARIANT,
// STRING or BINARY column) keeps the wrapper.
func TestWrappedKeyOnlyParsed(t *testing.T) {
	for _, key := range []spec.Part{
		{Column: spec.KeyColumn},
		{Format: spec.FormatString, Column: spec.KeyColumn},
		{Format: spec.FormatJSON, Column: spec.KeyColumn, Transformer: &spec.Transformer{Format: spec.FormatJSON}},
	} {
		l := wrappedKeyLayout(true, false)
		l.Key = key
		if keyWrapped(l) {
			t.Errorf("key of format %q is unwrapped, want it whole", key.Format)
		}
	}
	if !keyWrapped(wrappedKeyLayout(true, false, null("id", tInt))) {
		t.Error("a JSON key with a schema beside schema_include is not unwrapped")
	}
}

// FuzzConnectPayload checks that connectPayload never panics and returns
// nil, the data itself, or a JSON value inside it.
func FuzzConnectPayload(f *testing.F) {
	for _, s := range []string{`{"schema":{},"payload":{"id":1}}`, `{"payload":null,"schema":1}`, `{"id":1}`, `{"schema":`, `[`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var sc decode.Scanner
		got := connectPayload(&sc, data)
		if got == nil || len(got) == len(data) && (len(got) == 0 || &got[0] == &data[0]) {
			return
		}
		if !bytes.Contains(data, got) {
			t.Fatalf("connectPayload(%q) = %q, not inside the data", data, got)
		}
		n := 0
		arr := append(append([]byte{'['}, got...), ']')
		if ok, _ := sc.Elements(arr, func([]byte) error { n++; return nil }); !ok || n != 1 {
			t.Fatalf("connectPayload(%q) = %q, not one JSON value", data, got)
		}
	})
}
