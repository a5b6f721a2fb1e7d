package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/hamba/avro/v2"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
)

// encodeDefault returns the Avro binary encoding of reader field f's
// default and the schema it is encoded with: the field's, or for a union
// its first branch, as the specification has it. The decoder reads it as it
// reads data, so a default takes the same conversions (promotions, logical
// types, decimals) as a written value.
func encodeDefault(f *avro.Field) (avro.Schema, []byte, error) {
	s := avroschema.Deref(f.Type())
	if u, ok := s.(*avro.UnionSchema); ok {
		s = avroschema.Deref(u.Types()[0])
	}
	buf, err := appendDefault(nil, s, f.Default())
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the default: %w", err)
	}
	return s, buf, nil
}

// errDefault says a default value does not match its schema.
var errDefault = errors.New("the default does not match the schema")

// appendDefault appends the encoding of v, a default as hamba/avro parsed
// and normalised it, as schema s.
func appendDefault(buf []byte, s avro.Schema, v any) ([]byte, error) {
	s = avroschema.Deref(s)
	switch t := s.(type) {
	case *avro.UnionSchema:
		buf = binary.AppendVarint(buf, 0)
		return appendDefault(buf, t.Types()[0], v)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %s: %w", t.FullName(), errDefault)
		}
		for _, f := range t.Fields() {
			fv, ok := m[f.Name()]
			if !ok && !f.HasDefault() {
				return nil, fmt.Errorf("record %s: field %s has no default", t.FullName(), f.Name())
			}
			if !ok {
				fv = f.Default()
			}
			var err error
			if buf, err = appendDefault(buf, f.Type(), fv); err != nil {
				return nil, err
			}
		}
		return buf, nil
	case *avro.ArraySchema:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("array: %w", errDefault)
		}
		if len(items) > 0 {
			buf = binary.AppendVarint(buf, int64(len(items)))
		}
		for _, item := range items {
			var err error
			if buf, err = appendDefault(buf, t.Items(), item); err != nil {
				return nil, err
			}
		}
		return binary.AppendVarint(buf, 0), nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("map: %w", errDefault)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) > 0 {
			buf = binary.AppendVarint(buf, int64(len(keys)))
		}
		for _, k := range keys {
			buf = appendBytes(buf, []byte(k))
			var err error
			if buf, err = appendDefault(buf, t.Values(), m[k]); err != nil {
				return nil, err
			}
		}
		return binary.AppendVarint(buf, 0), nil
	case *avro.EnumSchema:
		i := slices.Index(t.Symbols(), fmt.Sprint(v))
		if i < 0 {
			return nil, fmt.Errorf("enum %s: %w", t.FullName(), errDefault)
		}
		return binary.AppendVarint(buf, int64(i)), nil
	case *avro.FixedSchema:
		b, ok := defaultBytes(v)
		if !ok || len(b) != t.Size() {
			return nil, fmt.Errorf("fixed %s: %w", t.FullName(), errDefault)
		}
		return append(buf, b...), nil
	}
	return appendPrimitive(buf, s.Type(), v)
}

// appendPrimitive appends the encoding of default v as primitive type t.
func appendPrimitive(buf []byte, t avro.Type, v any) ([]byte, error) {
	switch t {
	case avro.Null:
		if v == nil {
			return buf, nil
		}
	case avro.Boolean:
		if b, ok := v.(bool); ok {
			if b {
				return append(buf, 1), nil
			}
			return append(buf, 0), nil
		}
	case avro.Int, avro.Long:
		if n, ok := defaultInt(v); ok && (t == avro.Long || n == int64(int32(n))) {
			return binary.AppendVarint(buf, n), nil
		}
	case avro.Float:
		if f, ok := defaultFloat(v); ok {
			return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(f))), nil
		}
	case avro.Double:
		if f, ok := defaultFloat(v); ok {
			return binary.LittleEndian.AppendUint64(buf, math.Float64bits(f)), nil
		}
	case avro.String, avro.Bytes:
		if s, ok := v.(string); ok && t == avro.String {
			return appendBytes(buf, []byte(s)), nil
		}
		if b, ok := defaultBytes(v); ok {
			return appendBytes(buf, b), nil
		}
	}
	return nil, fmt.Errorf("%s: %w", t, errDefault)
}

// appendBytes appends a length-prefixed string or bytes.
func appendBytes(buf, b []byte) []byte {
	return append(binary.AppendVarint(buf, int64(len(b))), b...)
}

// defaultInt returns an int or long default.
func defaultInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), n == math.Trunc(n) && math.Abs(n) < 1<<63
	}
	return 0, false
}

// defaultFloat returns a float or double default.
func defaultFloat(v any) (float64, bool) {
	switch f := v.(type) {
	case float32:
		return float64(f), true
	case float64:
		return f, true
	case int:
		return float64(f), true
	case int64:
		return float64(f), true
	}
	return 0, false
}

// defaultBytes returns a bytes or fixed default: a byte slice or array as
// hamba/avro normalises them, or the JSON string whose code points 0-255
// are the bytes.
func defaultBytes(v any) ([]byte, bool) {
	switch b := v.(type) {
	case []byte:
		return b, true
	case string:
		out := make([]byte, 0, len(b))
		for _, r := range b {
			if r > 255 {
				return nil, false
			}
			out = append(out, byte(r))
		}
		return out, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Array || rv.Type().Elem().Kind() != reflect.Uint8 {
		return nil, false
	}
	out := make([]byte, rv.Len())
	reflect.Copy(reflect.ValueOf(out), rv)
	return out, true
}
