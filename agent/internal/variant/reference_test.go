package variant_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
)

// This file reads JSON with encoding/json, independently of the encoder, to
// say what a VARIANT should hold and whether the encoder must refuse a text.

// errRefuse marks a text that is valid JSON but that the encoder must refuse.
var errRefuse = errors.New("must be refused")

// referenceJSON parses text with encoding/json into nil, bool, json.Number,
// string, []any and map[string]any. It returns an error for invalid JSON and
// one wrapping errRefuse for duplicate keys or nesting past MaxDepth, which
// encoding/json itself accepts.
func referenceJSON(text []byte) (any, error) {
	if !json.Valid(text) {
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	v, err := referenceValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data: %w", err)
	}
	return v, nil
}

func referenceValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth+1 > variant.MaxDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", errRefuse, variant.MaxDepth)
	}
	if d == '[' {
		arr := []any{}
		for dec.More() {
			v, err := referenceValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	obj := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		if _, dup := obj[key]; dup {
			return nil, fmt.Errorf("%w: duplicate key %q", errRefuse, key)
		}
		if obj[key], err = referenceValue(dec, depth+1); err != nil {
			return nil, err
		}
	}
	_, err = dec.Token()
	return obj, err
}

// numberKind says how the encoder must write a JSON number: "int" (fits
// int64), "decimal" (no exponent, at most 38 significant digits and 38
// digits after the point) or "double".
func numberKind(n json.Number) string {
	s := string(n)
	if strings.ContainsAny(s, "eE") {
		return "double"
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return "int"
	}
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
	_, frac, _ := strings.Cut(s, ".")
	if len(digits) <= 38 && len(frac) <= 38 {
		return "decimal"
	}
	return "double"
}

// sameValue reports how got, decoded from a VARIANT, differs from want, read
// by referenceJSON, or nil if it holds the same value with the expected types.
func sameValue(want, got any) error { return sameTree(want, got, sameNumber) }

// sameTree reports how got differs from want, read by referenceJSON,
// comparing their arrays and objects element by element, their numbers
// with sameNum, and other values with ==.
func sameTree(want, got any, sameNum func(want json.Number, got any) error) error {
	switch w := want.(type) {
	case nil, bool, string:
		if want != got {
			return fmt.Errorf("got %#v, want %#v", got, want)
		}
	case json.Number:
		return sameNum(w, got)
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %#v, want an array of %d", got, len(w))
		}
		for i := range w {
			if err := sameTree(w[i], g[i], sameNum); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %#v, want an object of %d", got, len(w))
		}
		for k := range w {
			if err := sameTree(w[k], g[k], sameNum); err != nil {
				return fmt.Errorf(".%q: %w", k, err)
			}
		}
	default:
		return fmt.Errorf("unexpected reference %T", want)
	}
	return nil
}

func sameNumber(want json.Number, got any) error {
	kind := numberKind(want)
	switch g := got.(type) {
	case int64:
		if v, err := strconv.ParseInt(string(want), 10, 64); kind == "int" && err == nil && v == g {
			return nil
		}
	case decimal:
		r, ok := new(big.Rat).SetString(string(want))
		_, frac, _ := strings.Cut(string(want), ".")
		if kind == "decimal" && ok && r.Cmp(g.rat()) == 0 && g.scale == len(frac) {
			return nil
		}
	case float64:
		f, err := strconv.ParseFloat(string(want), 64)
		if err != nil && !math.IsInf(f, 0) && f != 0 {
			return fmt.Errorf("reference cannot read %s: %w", want, err)
		}
		if kind == "double" && math.Float64bits(f) == math.Float64bits(g) {
			return nil
		}
	}
	return fmt.Errorf("number %s (%s): got %#v", want, kind, got)
}
