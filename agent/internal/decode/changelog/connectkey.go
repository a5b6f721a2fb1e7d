package decode

import (
	"context"

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
	part
	sc jsonDecoder
}

func (p *payloadPart) decode(ctx context.Context, data []byte) error {
	return p.part.decode(ctx, connectPayload(&p.sc, data))
}

// connectPayload returns the raw text of the payload of data when data is
// a JSON object whose members are exactly "schema" and "payload" (in
// either order), nil when that payload is null; data itself otherwise,
// malformed JSON included (the part that decodes it says what is wrong).
// sc is the scanner it uses.
func connectPayload(sc *jsonDecoder, data []byte) []byte {
	sc.data, sc.pos = data, 0
	defer func() { sc.data = nil }() // do not keep the record's bytes
	sc.ws()
	if sc.pos >= len(data) || data[sc.pos] != '{' {
		return data
	}
	sc.pos++
	var payload []byte
	schema := false
	for {
		key, ok := sc.key()
		if !ok {
			return data
		}
		start := sc.pos
		if !sc.skip(1) {
			return data
		}
		switch string(key) {
		case "schema":
			schema = true
		case "payload":
			payload = data[start:sc.pos]
		default:
			return data
		}
		if !sc.next('}') {
			return data
		}
		if data[sc.pos-1] == '}' {
			break
		}
	}
	sc.ws()
	switch {
	case !schema || payload == nil || sc.pos != len(data):
		return data
	case isNull(payload):
		return nil
	}
	return payload
}
