// Package changelog reads the change events of Debezium and Canal JSON
// values (DEBEZIUM_JSON, CANAL_JSON) into the rows of a destination table.
//
// It sits in the decode step of the agent's data flow (Kafka -> ingest ->
// decode -> table writers or the Kafka sink): where package decode turns
// each record into one row, a change event gives zero or more rows, its
// row images, each with its operation in _op and its source table and time
// in _source. The envelope is read here (changelog.go); the row images are
// decoded by package decode's JSON decoder against the table's columns.
// The package also holds what only change events need: the column types
// their schemas give (types.go), a reader of the MySQL DDL in Canal's DDL
// events (ddl.go), and the unwrapping of keys written by Kafka Connect's
// JsonConverter with schemas.enable (connectkey.go).
//
// Package decode does not import this one: the caller that builds a
// table's decoder calls [New], which builds decode's Decoder with this
// package's change-event reader plugged in ([decode.NewChangelog]) when the
// layout's value is a changelog format, and is [decode.New] otherwise.
package changelog

import (
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// New returns the decoder of layout, whose registry parts sources
// resolved (nil when none has a registry): for a value of a changelog
// format, one that reads its change events (and, for DEBEZIUM_JSON with
// debezium_options.schema_include, the payload of keys wrapped by Kafka
// Connect); for other layouts, [decode.New]'s.
func New(layout *spec.Layout, sources *decode.Sources) (*decode.Decoder, error) {
	if !layout.Value.Transformer.Changelog() {
		return decode.New(layout, sources)
	}
	ev := decode.Events{Value: func(img *decode.Image) (decode.ChangeEvents, error) { return newChangePart(img) }}
	if keyWrapped(layout) {
		ev.Key = func(key decode.Part) decode.Part { return &payloadPart{Part: key} }
	}
	return decode.NewChangelog(layout, sources, ev)
}
