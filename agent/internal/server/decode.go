package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// maxBodyBytes is the largest request body accepted; a pipeline spec with
// inline schemas stays far below it.
const maxBodyBytes = 4 << 20

// decodeBody reads the request body into v strictly: a Content-Type of
// application/json (415 otherwise), one JSON object of at most maxBodyBytes
// (413), whose keys are exactly the json names of v's fields, none of them
// twice, at every depth (400 naming the JSON path). what names the object
// in messages ("pipeline").
//
// encoding/json alone matches names case-insensitively and keeps the last
// of duplicate keys, so {"Name":"a","name":"b"} would pass a check of one
// spelling and act on the other; checkKeys refuses both before Unmarshal.
//
// A request without a Content-Type is refused too unless its body is
// empty (then the answer says the body is empty): the agent's client always
// sends one, and a form post or a text/plain body is not a spec sent by
// mistake that the agent should guess at.
func decodeBody(w http.ResponseWriter, r *http.Request, what string, v any) error {
	if err := checkContentType(r); err != nil {
		return err
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return problemf(http.StatusRequestEntityTooLarge, "the request body is larger than %d MiB", maxBodyBytes>>20)
	case err != nil:
		return problemf(http.StatusBadRequest, "reading the request body: %v", err)
	case len(bytes.TrimSpace(data)) == 0:
		return problemf(http.StatusBadRequest, "the request body is empty; send the %s as a JSON object", what)
	}
	if errs, err := checkKeys(data, reflect.TypeOf(v)); err != nil {
		return problemf(http.StatusBadRequest, "the request body is not a valid %s: %v", what, err)
	} else if len(errs) > 0 {
		p := problemf(http.StatusBadRequest, "the request body is not a valid %s: every key must be one of its attribute names, spelt exactly, and appear once", what)
		p.Errors = capProblems(errs)
		return p
	}
	return unmarshalStrict(data, what, v)
}

// checkContentType refuses (415) a request whose body is not declared as
// application/json; parameters (charset=utf-8) are accepted, a charset
// other than UTF-8 is not. A request without a Content-Type passes only
// when it says it has no body.
func checkContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		if r.ContentLength == 0 {
			return nil
		}
		return problemf(http.StatusUnsupportedMediaType, "the request has a body but no Content-Type; send it as JSON with \"Content-Type: application/json\"")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return problemf(http.StatusUnsupportedMediaType, "the request body is %q; send it as JSON with \"Content-Type: application/json\"", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return problemf(http.StatusUnsupportedMediaType, "the request body's charset is %q; JSON is UTF-8, send \"Content-Type: application/json\" or charset=utf-8", cs)
	}
	return nil
}

// unmarshalStrict decodes data into v, refusing fields v does not have and
// anything after the JSON value.
func unmarshalStrict(data []byte, what string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errTrailingData
			if tokErr != nil {
				err = tokErr
			}
		}
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		p := problemf(http.StatusBadRequest, "the request body is not a valid %s", what)
		p.Errors = spec.Errors{{Path: typeErr.Field, Detail: fmt.Sprintf("a JSON %s cannot be a %s", typeErr.Value, typeErr.Type)}}
		return p
	default:
		return problemf(http.StatusBadRequest, "the request body is not a valid %s: %v", what, err)
	}
}

var errTrailingData = errors.New("data after the JSON object")

// checkKeys walks the JSON value in data as the Go type t reads it and
// returns a problem, at its path (table[0].connector_options), for every
// object key that is not exactly the json name of a field of the struct at
// that place, and for every key an object repeats. Values of other types
// (strings, numbers, maps' and interfaces' contents) are only skipped, with
// their keys checked for duplicates; Unmarshal reports wrong types. The
// error is a JSON syntax error, or errTooDeep.
func checkKeys(data []byte, t reflect.Type) (spec.Errors, error) {
	k := keyChecker{dec: json.NewDecoder(bytes.NewReader(data))}
	k.dec.UseNumber()
	if err := k.value(t, ""); err != nil {
		return nil, err
	}
	return k.errs, nil
}

// maxDepth is how deeply the objects and arrays of a body may nest: a spec
// nests a few levels, and the walk's cost (its paths) grows with the square
// of the depth, so a body of nothing but '[' must not set it.
const maxDepth = 32

var errTooDeep = fmt.Errorf("objects and arrays are nested deeper than %d levels", maxDepth)

// keyChecker is the state of one checkKeys walk.
type keyChecker struct {
	dec   *json.Decoder
	errs  spec.Errors
	depth int
}

// value reads one JSON value that Go type t (nil: unknown) receives at
// path.
func (k *keyChecker) value(t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := k.dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	if k.depth++; k.depth > maxDepth {
		return errTooDeep
	}
	defer func() { k.depth-- }()
	if tok == json.Delim('{') {
		return k.object(t, path)
	}
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	for i := 0; k.dec.More(); i++ {
		if err := k.value(elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	_, err = k.dec.Token() // ']'
	return err
}

// object reads the members of a JSON object, after its '{', that Go type t
// receives at path.
func (k *keyChecker) object(t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	for k.dec.More() {
		tok, err := k.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // object keys are strings
		at := joinPath(path, key)
		if seen[key] {
			k.errs = append(k.errs, spec.FieldError{Path: at, Detail: fmt.Sprintf("key %q appears more than once in the same object; give it once", key)})
		}
		seen[key] = true
		ft := elem
		if fields != nil {
			var ok bool
			if ft, ok = fields[key]; !ok {
				k.errs = append(k.errs, spec.FieldError{Path: at, Detail: unknownKey(key, fields)})
			}
		}
		if err := k.value(ft, at); err != nil {
			return err
		}
	}
	_, err := k.dec.Token() // '}'
	return err
}

// unknownKey says that key is not a field name, and which one it was
// probably meant to be when it differs only in case.
func unknownKey(key string, fields map[string]reflect.Type) string {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf("unknown key %q; names are case-sensitive: write %q", key, name)
		}
	}
	return fmt.Sprintf("unknown key %q", key)
}

// joinPath appends key to the attribute path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldCache holds jsonFields' answer per struct type.
var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the JSON names of struct type t's fields, as
// encoding/json names them, with their types; fields of embedded structs
// without a name of their own count as t's.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range jsonFields(ft) {
					if _, own := m[n]; !own {
						m[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = ft
	}
	fieldCache.Store(t, m)
	return m
}
