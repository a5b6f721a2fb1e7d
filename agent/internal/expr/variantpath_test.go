package expr

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// variantPathCases are documents and paths on which VariantPath must
// agree with jsonPath: case folding, the first of several matches, a null
// match passed over, paths into arrays, values of every kind.
var variantPathCases = []struct{ doc, path string }{
	{storeDoc, "store/bicycle"},
	{storeDoc, "STORE/fruit/#1/type"},
	{storeDoc, "!store/!basket/#0/#2"},
	{storeDoc, "store/basket/#1"},
	{storeDoc, "owner"},
	{`{"a":1,"A":2}`, "A"},
	{`{"a":1,"A":2}`, "!A"},
	{`{"Type":"x","type":"y"}`, "type"},
	{`{"a":null,"A":[1.50,-0,1e2]}`, "a"},
	{`{"a":null}`, "a"},
	{`{"a":{"b":1},"A":{"c":2}}`, "a/c"},
	{`{"a":"\u00e9\n","b":"plain","c":"\ud83d\ude00"}`, "a"},
	{`{"a":"\u00e9\n","b":"plain"}`, "b"},
	{`{"k\"y":"v"}`, `k"y`},
	{`{"a":[null,true,false,{"x":[]},-12.5e-3]}`, "a/#0"},
	{`{"a":[null,true,false,{"x":[]},-12.5e-3]}`, "a/#1"},
	{`{"a":[null,true,false,{"x":[]},-12.5e-3]}`, "a/#3"},
	{`{"a":[null,true,false,{"x":[]},-12.5e-3]}`, "a/#4"},
	{`{"a":[null,true,false,{"x":[]},-12.5e-3]}`, "a/#5"},
	{`{"a":[1,2]}`, "a/b"},
	{`[[[]]]`, "#0/#0"},
	{`["x"]`, "a"},
	{`"text"`, "a"},
	{`{"ſ":1,"s":2}`, "S"},
	{`{"event_type":"click","id":7}`, "event_type"},
}

// TestVariantPath checks that VariantPath on the VARIANT encoder's view of
// a document returns what jsonPath returns on its text.
func TestVariantPath(t *testing.T) {
	var e variant.Encoder
	for _, c := range variantPathCases {
		path := fuzzPath(c.path)
		if _, _, err := e.Encode([]byte(c.doc)); err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		root, ok := e.Root([]byte(c.doc))
		if !ok {
			t.Fatalf("%s: no root", c.doc)
		}
		got, null := VariantPath(root, path)
		want, wok := jsonPath([]byte(c.doc), path)
		if null == wok || got != want {
			t.Errorf("%s, %s: VariantPath %q, NULL %v; jsonPath %q, NULL %v", c.doc, c.path, got, null, want, !wok)
		}
	}
}

// TestValuePath checks which programs are a JSON path on the value's text.
func TestValuePath(t *testing.T) {
	for src, want := range map[string]string{
		`cast(value as string):event_type::string`:           "event_type",
		"cast(`VALUE` AS STRING):a.b[0]":                     "a",
		`cast(cast(value as string):a as string)`:            "a",
		`cast(value as string):['T']`:                        "T",
		`try_cast(value as string):a`:                        "",
		`cast(key as string):a`:                              "",
		`lower(cast(value as string):a)`:                     "",
		`cast(value as string):a::int`:                       "",
		`concat(cast(value as string):a, '')`:                "",
		`cast(try_cast(value as string):a as string)`:        "",
		`try_cast(cast(value as string):a as string)`:        "",
		`cast(value as string):a || cast(value as string):b`: "",
	} {
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		steps, ok := p.ValuePath()
		got := ""
		if ok {
			got = steps[0].Name
		}
		if got != want {
			t.Errorf("%s: ValuePath's first step %q, want %q", src, got, want)
		}
	}
}

// FuzzVariantPath checks VariantPath against jsonPath on every document
// the VARIANT encoder accepts.
func FuzzVariantPath(f *testing.F) {
	for _, c := range variantPathCases {
		f.Add([]byte(c.doc), c.path)
	}
	f.Fuzz(func(t *testing.T, doc []byte, spec string) {
		var e variant.Encoder
		if _, _, err := e.Encode(doc); err != nil {
			return
		}
		root, ok := e.Root(doc)
		if !ok {
			return
		}
		path := fuzzPath(spec)
		if len(path) == 0 {
			return
		}
		got, null := VariantPath(root, path)
		want, wok := jsonPath(doc, path)
		if null == wok || got != want {
			t.Fatalf("%q, %q: VariantPath %q, NULL %v; jsonPath %q, NULL %v", doc, spec, got, null, want, !wok)
		}
	})
}

// BenchmarkVariantPath reads the route of BenchmarkRoute's value from the
// VARIANT encoder's view of it, which a fanout's router parsed already.
func BenchmarkVariantPath(b *testing.B) {
	p, err := Compile(`cast(value as string):event_type::string`)
	if err != nil {
		b.Fatal(err)
	}
	steps, _ := p.ValuePath()
	doc := []byte(`{"id":123456,"user":{"name":"ada","tags":["a","b"]},"event_type":"page_view","ts":"2024-01-02T03:04:05Z"}`)
	var e variant.Encoder
	if _, _, err := e.Encode(doc); err != nil {
		b.Fatal(err)
	}
	root, _ := e.Root(doc)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if s, null := VariantPath(root, steps); null || s != "page_view" {
			b.Fatal(s, null)
		}
	}
}
