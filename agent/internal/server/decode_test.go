package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A body that is not declared as JSON is refused with a 415, before the
// agent reads it as a spec.
func TestContentType(t *testing.T) {
	a := newAgent(t, "")
	body, err := json.Marshal(connection("c"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		contentType string
		body        string
		want        int
	}{
		{contentType: "application/json", body: string(body), want: http.StatusOK},
		{contentType: "application/json; charset=utf-8", body: string(body), want: http.StatusOK},
		{contentType: "Application/JSON; charset=UTF-8", body: string(body), want: http.StatusOK},
		{contentType: "", body: string(body), want: http.StatusUnsupportedMediaType},
		{contentType: "text/plain", body: string(body), want: http.StatusUnsupportedMediaType},
		{contentType: "application/x-www-form-urlencoded", body: "name=c", want: http.StatusUnsupportedMediaType},
		{contentType: "multipart/form-data; boundary=x", body: string(body), want: http.StatusUnsupportedMediaType},
		{contentType: "application/json; charset=iso-8859-1", body: string(body), want: http.StatusUnsupportedMediaType},
		{contentType: "application/json-seq", body: string(body), want: http.StatusUnsupportedMediaType},
		{contentType: "application/json;;", body: string(body), want: http.StatusUnsupportedMediaType},
		// No body and no Content-Type: the answer says the body is empty.
		{contentType: "", body: "", want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			header := http.Header{}
			if tt.contentType != "" {
				header.Set("Content-Type", tt.contentType)
			}
			for _, path := range []string{"/v1/connections/c", "/v1/pipelines/p/dry-run"} {
				method := http.MethodPut
				if strings.HasSuffix(path, "dry-run") {
					method = http.MethodPost
					if tt.want == http.StatusOK {
						continue // a connection is no pipeline
					}
				}
				status, h, answer := rawWith(t, method, a.url+path, testToken, tt.body, header)
				if status != tt.want {
					t.Fatalf("%s %s with Content-Type %q: %d %s, want %d", method, path, tt.contentType, status, answer, tt.want)
				}
				if status != http.StatusOK {
					if p := problem(t, h, answer); tt.want == http.StatusUnsupportedMediaType && !strings.Contains(p.Detail, "Content-Type: application/json") {
						t.Fatalf("415 detail %q does not say what to send", p.Detail)
					}
				}
			}
		})
	}
}

// Every key of a PUT body must be the exact name of an attribute, once:
// encoding/json alone would take "NAME" for "name" and the last of two
// "name"s. The problem names the JSON path of the key.
func TestStrictKeys(t *testing.T) {
	a := newAgent(t, "")
	for _, kind := range []struct {
		path string
		typ  reflect.Type
	}{
		{"/v1/connections/x", reflect.TypeFor[spec.Connection]()},
		{"/v1/pipelines/x", reflect.TypeFor[spec.Pipeline]()},
		{"/v1/fanout-schemas/x", reflect.TypeFor[spec.FanoutSchema]()},
		{"/v1/pipelines/x/dry-run", reflect.TypeFor[spec.Pipeline]()},
	} {
		method := http.MethodPut
		if strings.HasSuffix(kind.path, "dry-run") {
			method = http.MethodPost
		}
		n := 0
		eachKey(kind.typ, "", func(v string) string { return v }, func(at, key string, doc func(string) string) {
			n++
			wrong := strings.ToUpper(key[:1]) + key[1:]
			if wrong == key {
				wrong = strings.ToLower(key)
			}
			for _, c := range []struct{ body, path string }{
				{doc(`{"` + wrong + `":null}`), join(at, wrong)},
				{doc(`{"` + key + `":null,"` + key + `":null}`), join(at, key)},
			} {
				status, h, answer := raw(t, method, a.url+kind.path, testToken, c.body)
				if status != http.StatusBadRequest {
					t.Fatalf("%s %s %s: %d %s, want 400", method, kind.path, c.body, status, answer)
				}
				p := problem(t, h, answer)
				if len(p.Errors) != 1 || p.Errors[0].Path != c.path {
					t.Fatalf("%s %s %s: problems %v, want one at %s", method, kind.path, c.body, p.Errors, c.path)
				}
			}
		})
		if n < 5 {
			t.Fatalf("%s: only %d keys checked", kind.typ, n)
		}
	}
	// Nothing of it reached the store.
	if _, err := a.client.GetConnection(t.Context(), "x"); err == nil {
		t.Fatal("a refused connection was stored")
	}
}

// eachKey calls fn for every json field name key of struct type t and of
// the structs in its fields, at attribute path at; doc(v) is a JSON
// document that puts the object v where the key's object is.
func eachKey(t reflect.Type, at string, doc func(string) string, fn func(at, key string, doc func(string) string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		eachKey(t.Elem(), at+"[0]", func(v string) string { return doc("[" + v + "]") }, fn)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fn(at, name, doc)
			eachKey(f.Type, join(at, name), func(v string) string { return doc(`{"` + name + `":` + v + `}`) }, fn)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// A body with forty thousand problems (every "x" is unknown, and all but
// the first repeated) gets an answer that lists a hundred.
func TestProblemsCapped(t *testing.T) {
	a := newAgent(t, "")
	body := `{"bootstrap_servers":["a:1"]` + strings.Repeat(`,"x":1`, 20_000) + `}`
	status, h, answer := raw(t, http.MethodPut, a.url+"/v1/connections/c", testToken, body)
	p := problem(t, h, answer)
	if status != http.StatusBadRequest || len(p.Errors) != 101 || p.Errors[100].Detail != "and 39899 more problems" {
		t.Fatalf("%d with %d problems (last %v), want 400 with 100 and a count of the others", status, len(p.Errors), p.Errors[len(p.Errors)-1])
	}
}

// A body nested far deeper than any spec (arrays in arrays, up to the body
// limit) is refused quickly with a 400, without a walk as deep as the body.
func TestDeepNesting(t *testing.T) {
	a := newAgent(t, "")
	const depth = 1_000_000
	body := `{"bootstrap_servers":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	start := time.Now()
	status, h, answer := raw(t, http.MethodPut, a.url+"/v1/connections/c", testToken, body)
	if p := problem(t, h, answer); status != http.StatusBadRequest || !strings.Contains(p.Detail, "nested") {
		t.Fatalf("%d %s, want 400 saying the body is nested too deep", status, p.Detail)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the answer took %v", d)
	}
}
