package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// name, bracketed and index build path steps for the tables.
func name(n string) PathStep      { return PathStep{Name: n} }
func bracketed(n string) PathStep { return PathStep{Name: n, Bracketed: true} }
func index(i int) PathStep        { return PathStep{IsIndex: true, Index: i} }

// storeDoc is the document of Databricks' "Query JSON strings" examples.
const storeDoc = `{
   "store":{
      "fruit": [
        {"weight":8,"type":"apple"},
        {"weight":9,"type":"pear"}
      ],
      "basket":[
        [1,2,{"b":"y","a":"x"}],
        [3,4],
        [5,6]
      ],
      "bicycle":{
        "price":19.95,
        "color":"red"
      }
    },
    "owner":"amy",
    "zip code":"94025",
    "fb:testid":"1234"
 }`

func TestJSONPath(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		path []PathStep
		want string
		null bool
	}{
		// Databricks' examples.
		{"top-level field", storeDoc, []PathStep{name("owner")}, "amy", false},
		{"bare name is case-insensitive", storeDoc, []PathStep{name("OWNER")}, "amy", false},
		{"bracketed name", storeDoc, []PathStep{bracketed("owner")}, "amy", false},
		{"bracketed name is case-sensitive", storeDoc, []PathStep{bracketed("OWNER")}, "", true},
		{"name with a space", storeDoc, []PathStep{name("Zip Code")}, "94025", false},
		{"name with a colon", storeDoc, []PathStep{bracketed("fb:testid")}, "1234", false},
		{"nested object, compacted", storeDoc, []PathStep{name("store"), name("bicycle")}, `{"price":19.95,"color":"red"}`, false},
		{"nested number", storeDoc, []PathStep{name("store"), name("bicycle"), name("price")}, "19.95", false},
		{"array element", storeDoc, []PathStep{name("store"), name("fruit"), index(0)}, `{"weight":8,"type":"apple"}`, false},
		{"array element's field", storeDoc, []PathStep{name("store"), name("fruit"), index(1), name("type")}, "pear", false},
		{"nested arrays", storeDoc, []PathStep{name("store"), name("basket"), index(0), index(2), name("b")}, "y", false},
		{"array as text", storeDoc, []PathStep{name("store"), name("basket"), index(0)}, `[1,2,{"b":"y","a":"x"}]`, false},
		{"index out of range", storeDoc, []PathStep{name("store"), name("basket"), index(3)}, "", true},
		{"negative index", `[1]`, []PathStep{index(-1)}, "", true},
		{"missing field", storeDoc, []PathStep{name("nope")}, "", true},
		{"missing nested field", storeDoc, []PathStep{name("owner"), name("x")}, "", true},
		{"index on an object", storeDoc, []PathStep{index(0)}, "", true},
		{"name on an array", `[{"a":1}]`, []PathStep{name("a")}, "", true},
		{"top-level array", `[10, 20]`, []PathStep{index(1)}, "20", false},

		// Scalars.
		{"string", `{"a":"x"}`, []PathStep{name("a")}, "x", false},
		{"empty string", `{"a":""}`, []PathStep{name("a")}, "", false},
		{"true", `{"a":true}`, []PathStep{name("a")}, "true", false},
		{"false", `{"a":false}`, []PathStep{name("a")}, "false", false},
		{"null is NULL", `{"a":null}`, []PathStep{name("a")}, "", true},
		{"null element is NULL", `{"a":[null]}`, []PathStep{name("a"), index(0)}, "", true},
		{"string null is text", `{"a":"null"}`, []PathStep{name("a")}, "null", false},
		{"integer", `{"a":42}`, []PathStep{name("a")}, "42", false},
		{"negative integer", `{"a":-7}`, []PathStep{name("a")}, "-7", false},
		{"minus zero", `{"a":-0}`, []PathStep{name("a")}, "0", false},
		{"big integer as written", `{"a":123456789012345678901234567890}`, []PathStep{name("a")}, "123456789012345678901234567890", false},
		{"1.0 stays", `{"a":1.0}`, []PathStep{name("a")}, "1.0", false},
		{"trailing zero dropped", `{"a":1.50}`, []PathStep{name("a")}, "1.5", false},
		{"exponent", `{"a":1e2}`, []PathStep{name("a")}, "100.0", false},
		{"small exponent", `{"a":1E-5}`, []PathStep{name("a")}, "1.0E-5", false},
		{"large", `{"a":12345678.9}`, []PathStep{name("a")}, "1.23456789E7", false},
		{"infinite", `{"a":1e400}`, []PathStep{name("a")}, `"Infinity"`, false},
		{"numbers in an object", `{"a":{"x":1.0,"y":2E1,"z":-0}}`, []PathStep{name("a")}, `{"x":1.0,"y":20.0,"z":0}`, false},

		// Strings and names.
		{"escapes resolved", `{"a":"x\"y\\z\/\n\t"}`, []PathStep{name("a")}, "x\"y\\z/\n\t", false},
		{"unicode escape", `{"a":"caf\u00e9"}`, []PathStep{name("a")}, "café", false},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, []PathStep{name("a")}, "😀", false},
		{"lone surrogate", `{"a":"\ud83d"}`, []PathStep{name("a")}, "?", false},
		{"raw UTF-8", `{"a":"日本"}`, []PathStep{name("a")}, "日本", false},
		{"invalid UTF-8 replaced", "{\"a\":\"x\xffy\"}", []PathStep{name("a")}, "x\uFFFDy", false},
		{"escaped name", `{"\u0061b":1}`, []PathStep{name("ab")}, "1", false},
		{"escaped name, bracketed", `{"a\"b":1}`, []PathStep{bracketed(`a"b`)}, "1", false},
		{"unicode name, case-insensitive", `{"ÉTÉ":1}`, []PathStep{name("été")}, "1", false},
		{"unicode name, bracketed", `{"ÉTÉ":1}`, []PathStep{bracketed("été")}, "", true},
		{"strings re-escaped in objects", `{"a":{"k\/":"v\u00e9\u0001"}}`, []PathStep{name("a")}, "{\"k/\":\"vé\\u0001\"}", false},
		{"single quotes", `{'a':'it''s'}`, nil, "", true},
		{"single-quoted string", `{'a':'x"y'}`, []PathStep{name("a")}, `x"y`, false},
		{"single-quoted string in an object", `{'a':{'b':'x"y'}}`, []PathStep{name("a")}, `{"b":"x\"y"}`, false},
		{"escaped single quote", `{"a":"it\'s"}`, []PathStep{name("a")}, "it's", false},
		{"unescaped control character", "{\"a\":\"x\ty\"}", []PathStep{name("a")}, "x\ty", false},

		// Duplicates.
		{"first of duplicates", `{"a":1,"a":2}`, []PathStep{name("a")}, "1", false},
		{"first case-insensitive match", `{"A":1,"a":2}`, []PathStep{name("a")}, "1", false},
		{"bracketed skips other case", `{"A":1,"a":2}`, []PathStep{bracketed("a")}, "2", false},
		{"null duplicate skipped", `{"a":null,"a":2}`, []PathStep{name("a")}, "2", false},
		{"duplicate with the rest of the path", `{"a":{"x":1},"a":{"y":2}}`, []PathStep{name("a"), name("y")}, "2", false},

		// Whitespace.
		{"whitespace everywhere", " \t\r\n{ \"a\" : [ 1 , { \"b\" : \"c\" } ] } ", []PathStep{name("a"), index(1)}, `{"b":"c"}`, false},
		{"empty object", `{}`, []PathStep{name("a")}, "", true},
		{"empty array", `[]`, []PathStep{index(0)}, "", true},
		{"empty object value", `{"a":{ }}`, []PathStep{name("a")}, `{}`, false},
		{"empty array value", `{"a":[ ]}`, []PathStep{name("a")}, `[]`, false},
		{"whole document", `{ "a" : 1 }`, nil, `{"a":1}`, false},

		// Invalid JSON.
		{"empty", ``, []PathStep{name("a")}, "", true},
		{"not JSON", `hello`, []PathStep{name("a")}, "", true},
		{"truncated", `{"a":1`, []PathStep{name("a")}, "", true},
		{"invalid after the match", `{"a":1,"b":}`, []PathStep{name("a")}, "", true},
		{"invalid nested after the match", `{"x":{"a":1,"b":[}}`, []PathStep{name("x"), name("a")}, "", true},
		{"trailing comma", `{"a":1,}`, []PathStep{name("a")}, "", true},
		{"missing colon", `{"a" 1}`, []PathStep{name("a")}, "", true},
		{"unquoted name", `{a:1}`, []PathStep{name("a")}, "", true},
		{"leading zero", `{"a":01}`, []PathStep{name("a")}, "", true},
		{"plus sign", `{"a":+1}`, []PathStep{name("a")}, "", true},
		{"bare dot", `{"a":1.}`, []PathStep{name("a")}, "", true},
		{"NaN", `{"a":NaN}`, []PathStep{name("a")}, "", true},
		{"bad escape", `{"a":"\x"}`, []PathStep{name("a")}, "", true},
		{"bad unicode escape", `{"a":"\u12"}`, []PathStep{name("a")}, "", true},
		{"unterminated string", `{"a":"x}`, []PathStep{name("a")}, "", true},
		{"keyword run on", `{"a":truex}`, []PathStep{name("a")}, "", true},
		{"comment", `{"a":1 /* c */}`, []PathStep{name("a")}, "", true},
		{"too deep", strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1), []PathStep{index(0)}, "", true},
		{"deep enough", `{"a":` + strings.Repeat("[", maxJSONDepth-1) + strings.Repeat("]", maxJSONDepth-1) + `}`, []PathStep{name("a")}, strings.Repeat("[", maxJSONDepth-1) + strings.Repeat("]", maxJSONDepth-1), false},
		{"trailing text ignored", `{"a":1} garbage`, []PathStep{name("a")}, "1", false},
		{"root number then text", `1x`, nil, "", true},
		{"root number then space", `1 x`, nil, "1", false},
		{"root string", `"s"`, nil, "s", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := jsonPath([]byte(tt.doc), tt.path)
			if ok == tt.null || got != tt.want {
				t.Errorf("jsonPath(%q) = %q, %v; want %q, NULL %v", tt.doc, got, ok, tt.want, tt.null)
			}
		})
	}
}

// TestJSONPathNullText checks get_json_object's text "null" for a null
// reached through an index.
func TestJSONPathNullText(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		path []PathStep
		want string
		ok   bool
	}{
		{`[null]`, []PathStep{index(0)}, "null", true},
		{`null`, nil, "null", true},
		{`{"a":null}`, []PathStep{bracketed("a")}, "", false},
	} {
		got, ok := jsonExtract([]byte(tt.doc), tt.path, true)
		if got != tt.want || ok != tt.ok {
			t.Errorf("jsonExtract(%q) = %q, %v; want %q, %v", tt.doc, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAppendJavaDouble(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {0.5, "0.5"}, {100, "100.0"}, {0.001, "0.001"}, {0.0001, "1.0E-4"},
		{1234567, "1234567.0"}, {1e7, "1.0E7"}, {1.5e10, "1.5E10"}, {-2.25, "-2.25"},
		{0, "0.0"}, {19.95, "19.95"}, {123.456, "123.456"}, {1.7976931348623157e308, "1.7976931348623157E308"},
		{4.9e-324, "4.9E-324"}, {0.012, "0.012"},
	} {
		if got := string(appendJavaDouble(nil, tt.f)); got != tt.want {
			t.Errorf("appendJavaDouble(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseGetJSONPath(t *testing.T) {
	tests := []struct {
		path string
		want []PathStep
		ok   bool
		err  bool
	}{
		{"$", nil, true, false},
		{"$.a", []PathStep{bracketed("a")}, true, false},
		{"$.a.b", []PathStep{bracketed("a"), bracketed("b")}, true, false},
		{"$.a[0]", []PathStep{bracketed("a"), index(0)}, true, false},
		{"$[12].x", []PathStep{index(12), bracketed("x")}, true, false},
		{"$['k k'].b", []PathStep{bracketed("k k"), bracketed("b")}, true, false},
		{"$['a.b']", []PathStep{bracketed("a.b")}, true, false},
		{"$.a b", []PathStep{bracketed("a b")}, true, false},
		{" $ . a [ 1 ] ", []PathStep{bracketed("a "), index(1)}, true, false},
		{"$.A", []PathStep{bracketed("A")}, true, false},
		{"", nil, false, false},
		{"a", nil, false, false},
		{"$.", nil, false, false},
		{"$a", nil, false, false},
		{"$[a]", nil, false, false},
		{"$[-1]", nil, false, false},
		{"$['']", nil, false, false},
		{"$['a?']", nil, false, false},
		{"$['a'", nil, false, false},
		{"$[1", nil, false, false},
		{"$[99999999999999999999999]", nil, false, false},
		{"$.*", nil, false, true},
		{"$.a[*]", nil, false, true},
		{"$['*']", nil, false, true},
	}
	for _, tt := range tests {
		got, ok, err := parseGetJSONPath(tt.path)
		if ok != tt.ok || (err != nil) != tt.err || !equalSteps(got, tt.want) {
			t.Errorf("parseGetJSONPath(%q) = %v, %v, %v; want %v, %v, error %v", tt.path, got, ok, err, tt.want, tt.ok, tt.err)
		}
	}
}

// equalSteps compares paths.
func equalSteps(a, b []PathStep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestJSONPathAllocs checks that a string field without escapes costs
// only its result.
func TestJSONPathAllocs(t *testing.T) {
	doc := []byte(`{"id":12345,"payload":{"x":[1,2,3],"y":"zz"},"event_type":"page_view"}`)
	path := []PathStep{name("EVENT_TYPE")}
	allocs := testing.AllocsPerRun(100, func() {
		if s, ok := jsonPath(doc, path); !ok || s != "page_view" {
			t.Fatal(s, ok)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations, want at most 1", allocs)
	}
}

func BenchmarkJSONPath(b *testing.B) {
	doc := []byte(`{"id":12345,"payload":{"x":[1,2,3],"y":"zz","nested":{"deep":[{"a":1},{"b":2}]}},"user":{"name":"Ann","tags":["a","b"]},"event_type":"page_view"}`)
	path := []PathStep{name("event_type")}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		jsonPath(doc, path)
	}
}

// FuzzJSONPath checks that jsonPath never panics and, on documents
// encoding/json accepts, agrees with a slow reference built on
// encoding/json's tokenizer.
func FuzzJSONPath(f *testing.F) {
	for _, seed := range []struct{ doc, path string }{
		{storeDoc, "store/bicycle"},
		{storeDoc, "STORE/fruit/#1/type"},
		{storeDoc, "!store/!basket/#0/#2"},
		{`{"a":1,"A":2}`, "!A"},
		{`{"a":null,"a":[1.50,-0,1e2]}`, "a"},
		{`{"a":"\u00e9\n"}`, "a"},
		{`[[[]]]`, "#0/#0"},
		{`{'a':'b'}`, "a"},
		{`{"a":tru}`, "a"},
	} {
		f.Add([]byte(seed.doc), seed.path)
	}
	f.Fuzz(func(t *testing.T, doc []byte, spec string) {
		path := fuzzPath(spec)
		got, ok := jsonPath(doc, path)
		if ok && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 result %q", got)
		}
		if !json.Valid(doc) || !utf8.Valid(doc) || bytes.Contains(bytes.ToLower(doc), []byte(`\ud`)) {
			return // semantics differ: lenient syntax, replaced bytes, surrogates
		}
		want, wok, deep := referencePath(doc, path)
		if deep {
			return
		}
		if ok != wok || got != want {
			t.Fatalf("jsonPath(%q, %q) = %q, %v; reference %q, %v", doc, spec, got, ok, want, wok)
		}
	})
}

// fuzzPath turns a fuzzer's string into a path: steps separated by '/', #n
// an index, !name a bracketed name, anything else a bare name.
func fuzzPath(spec string) []PathStep {
	if spec == "" {
		return nil
	}
	var path []PathStep
	for _, s := range strings.Split(spec, "/") {
		switch {
		case strings.HasPrefix(s, "#"):
			n, _ := strconv.Atoi(s[1:])
			path = append(path, index(n))
		case strings.HasPrefix(s, "!"):
			path = append(path, bracketed(s[1:]))
		default:
			path = append(path, name(s))
		}
	}
	return path
}

// refValue is a decoded JSON value of the reference: members keep their
// order and duplicates.
type refValue struct {
	kind    int
	text    string // a string's text, a number's or a keyword's JSON
	members []refMember
	elems   []refValue
}

// refMember is one member of a reference object.
type refMember struct {
	name  string
	value refValue
}

// referencePath evaluates path on doc, valid JSON, with encoding/json;
// deep says the document nests deeper than jsonPath accepts.
func referencePath(doc []byte, path []PathStep) (s string, ok, deep bool) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	v, err := refDecode(d, 0)
	if errors.Is(err, errTooDeep) {
		return "", false, true
	}
	if err != nil {
		panic(err) // doc is valid JSON
	}
	v, found := refFind(v, path)
	switch {
	case !found || v.kind == jsonNull:
		return "", false, false
	case v.kind == jsonString:
		return v.text, true, false
	}
	return string(refAppend(nil, v)), true, false
}

// refFind walks path in v: the first member that matches, is not null and
// has the rest of the path wins.
func refFind(v refValue, path []PathStep) (refValue, bool) {
	if len(path) == 0 {
		return v, true
	}
	step := path[0]
	switch {
	case step.IsIndex && v.kind == jsonArray && step.Index >= 0 && step.Index < len(v.elems):
		return refFind(v.elems[step.Index], path[1:])
	case !step.IsIndex && v.kind == jsonObject:
		for _, m := range v.members {
			match := m.name == step.Name || (!step.Bracketed && strings.EqualFold(m.name, step.Name))
			if match && m.value.kind != jsonNull {
				if r, ok := refFind(m.value, path[1:]); ok {
					return r, true
				}
			}
		}
	}
	return refValue{}, false
}

// errTooDeep is the reference's refusal of documents jsonPath refuses.
var errTooDeep = errors.New("too deep")

// refDecode decodes the next value of d.
func refDecode(d *json.Decoder, depth int) (refValue, error) {
	tok, err := d.Token()
	if err != nil {
		return refValue{}, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if depth+1 > maxJSONDepth {
			return refValue{}, errTooDeep
		}
		if tok == '{' {
			v := refValue{kind: jsonObject}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return v, err
				}
				m, err := refDecode(d, depth+1)
				if err != nil {
					return v, err
				}
				v.members = append(v.members, refMember{name: k.(string), value: m})
			}
			_, err := d.Token()
			return v, err
		}
		v := refValue{kind: jsonArray}
		for d.More() {
			e, err := refDecode(d, depth+1)
			if err != nil {
				return v, err
			}
			v.elems = append(v.elems, e)
		}
		_, err := d.Token()
		return v, err
	case string:
		return refValue{kind: jsonString, text: tok}, nil
	case json.Number:
		return refValue{kind: jsonNumber, text: string(appendJSONNumber(nil, []byte(tok)))}, nil
	case bool:
		return refValue{kind: jsonTrue, text: strconv.FormatBool(tok)}, nil
	case nil:
		return refValue{kind: jsonNull, text: "null"}, nil
	}
	return refValue{}, io.ErrUnexpectedEOF
}

// refAppend writes v as compact JSON with Jackson's escapes.
func refAppend(dst []byte, v refValue) []byte {
	switch v.kind {
	case jsonObject:
		dst = append(dst, '{')
		for i, m := range v.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsontext.AppendQuoted(dst, []byte(m.name))
			dst = append(dst, ':')
			dst = refAppend(dst, m.value)
		}
		return append(dst, '}')
	case jsonArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = refAppend(dst, e)
		}
		return append(dst, ']')
	case jsonString:
		return jsontext.AppendQuoted(dst, []byte(v.text))
	}
	return append(dst, v.text...)
}

func TestEqualFold(t *testing.T) {
	for _, tt := range []struct {
		b, s string
		want bool
	}{
		{"abc", "ABC", true}, {"abc", "abd", false}, {"ab", "abc", false}, {"abc", "ab", false},
		{"s", "ſ", true}, {"ſ", "S", true}, {"k", "\u212a", true}, {"été", "ÉTÉ", true}, {"a", "", false},
		{"", "", true}, {"a[", "A{", false},
	} {
		if got := equalFold([]byte(tt.b), tt.s); got != tt.want {
			t.Errorf("equalFold(%q, %q) = %v", tt.b, tt.s, got)
		}
	}
}

// FuzzGetJSONPath checks that the get_json_object path parser never panics
// and gives only steps jsonPath can follow.
func FuzzGetJSONPath(f *testing.F) {
	for _, s := range []string{"$", "$.a.b[0]", "$['k k'][1]", " $ . a ", "$[*]", "$.*", "$['", "$[9999999999999999999]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		steps, ok, err := parseGetJSONPath(p)
		if (ok || err != nil) && !strings.Contains(strings.TrimLeft(p, " \t\n\r\f\v"), "$") {
			t.Fatalf("parseGetJSONPath(%q) accepted a path without '$'", p)
		}
		for _, s := range steps {
			if !s.IsIndex && (s.Name == "" || !s.Bracketed) || s.IsIndex && s.Index < 0 {
				t.Fatalf("parseGetJSONPath(%q) = bad step %+v", p, s)
			}
		}
	})
}

// FuzzJavaDouble checks that appendJavaDouble writes text that reads back
// as the same double.
func FuzzJavaDouble(f *testing.F) {
	for _, v := range []float64{0, 1, 0.1, 1e7, 1e-3, 9.999999999999999e6, 5e-324, 1.7976931348623157e308} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s := string(appendJavaDouble(nil, v))
		if got, err := strconv.ParseFloat(s, 64); err != nil || got != v {
			t.Fatalf("appendJavaDouble(%v) = %q, which reads as %v, %v", v, s, got, err)
		}
		if !strings.Contains(s, ".") {
			t.Fatalf("appendJavaDouble(%v) = %q has no '.'", v, s)
		}
	})
}
