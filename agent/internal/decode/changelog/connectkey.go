package changelog

import (
	"context"
	"errors"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Kafka Connect's JsonConverter with schemas.enable=true wraps every key
// and value it writes as {"schema": <Connect schema>, "payload": <data>}.
// A DEBEZIUM_JSON value with debezium_options.schema_include reads the
// event from the wrapper (changelog.go); its key, when parsed into columns
// (JSON with a json_options schema, declared or inferred), is wrapped the
// same way, and its columns are those of the payload. The key's Connect
// schema is not read: the key's columns are those json_options gives.

// keyWrapped reports whether the key of layout is read from the payload
// of Connect's wrapper: its value is DEBEZIUM_JSON with
// debezium_options.schema_include, and it is JSON parsed into columns
// (not a VARIANT, STRING or BINARY column, which keep the whole key).
func keyWrapped(layout *spec.Layout) bool {
	v := layout.Value.Transformer
	return v != nil && v.Format == spec.FormatDebeziumJSON && v.DebeziumOptions.SchemaIncluded() &&
		layout.Key.Format == spec.FormatJSON && !layout.Key.Variant()
}

// payloadPart decodes, with its part, the payload of JSON wrapped as
// Connect's JsonConverter writes it with schemas.enable; JSON that is not
// wrapped as it is.
type payloadPart struct {
	decode.Part
	sc decode.Scanner
}

// Decode decodes the payload of data, or data when it is not wrapped.
func (p *payloadPart) Decode(ctx context.Context, data []byte) error {
	return p.Part.Decode(ctx, connectPayload(&p.sc, data))
}

// connectPayload returns the raw text of the payload of data when data is
// a JSON object whose members are exactly "schema" and "payload" (in
// either order), nil when that payload is null; data itself otherwise,
// malformed JSON included (the part that decodes it says what is wrong).
// sc is the scanner it uses.
func connectPayload(sc *decode.Scanner, data []byte) []byte {
	obj := trimSpace(data)
	if len(obj) == 0 || obj[0] != '{' {
		return data
	}
	var payload []byte
	schema := false
	end, err := sc.Members(obj, func(key, val []byte) error {
		switch string(key) {
		case "schema":
			schema = true
		case "payload":
			payload = val
		default:
			return errNotWrapped
		}
		return nil
	})
	switch {
	case err != nil || end < 0 || !schema || payload == nil || len(trimSpace(obj[end:])) != 0:
		return data
	case isNull(payload):
		return nil
	}
	return payload
}

// errNotWrapped stops the scan of a key that has other members than
// Connect's wrapper.
var errNotWrapped = errors.New("not a Connect wrapper")
