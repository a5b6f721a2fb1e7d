// Package fanouttest holds what the tests of fanout schemas share, those
// of the runner (package fanout) and those through the manager (package
// pipeline): the events they route by type, the fanout schema routing
// them, and the check of what the routed tables hold. No other code uses
// it.
package fanouttest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Types are the event types the tests route by.
var Types = []string{"click", "view", "buy", "Login", "logout"}

// Event is record i of the tests: an event whose type is Types[i%5].
func Event(i int) string {
	return fmt.Sprintf(`{"type":%q,"id":%d,"pad":"%s"}`, Types[i%len(Types)], i, strings.Repeat("x", i%7))
}

// Schema returns fanout schema "f" of pipeline "p", routing topic's records
// by their type into main.events, parsing the value with the JSON schema
// "type STRING, id BIGINT".
func Schema(topic string) spec.FanoutSchema {
	return spec.FanoutSchema{
		Name: "f", Pipeline: "p", DestinationCatalog: "main", DestinationSchema: "events",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, PartitionDiscoveryInterval: "1s"}},
		FanoutOptions: spec.FanoutOptions{FanoutBy: "cast(value AS STRING):type", Transforms: []spec.FanoutTransform{{
			Format: spec.FormatJSON, InputColumn: spec.ValueColumn,
			JSONOptions: &spec.JSONOptions{Schema: "type STRING, id BIGINT"}}}},
		TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
	}
}

// EventRow is a routed table's row.
type EventRow struct {
	Type *string `parquet:"type,optional"`
	ID   *int64  `parquet:"id,optional"`
}

// CheckRouted checks that each of the five tables of dir holds, exactly
// once, the events 0..n-1 of its type (by Event), but those skip says are
// not routed.
func CheckRouted(t *testing.T, dir string, n int, skip func(int) bool) {
	t.Helper()
	for k, typ := range Types {
		rows, _ := tabletest.ReadTable[EventRow](t, filepath.Join(dir, strings.ToLower(typ)))
		var ids []int
		for _, r := range rows {
			if r.Type == nil || *r.Type != typ || r.ID == nil {
				t.Fatalf("table %s: row %+v", typ, r)
			}
			ids = append(ids, int(*r.ID))
		}
		slices.Sort(ids)
		var want []int
		for i := k; i < n; i += len(Types) {
			if skip == nil || !skip(i) {
				want = append(want, i)
			}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("table %s: %d rows %v..., want %d", typ, len(ids), ids[:min(len(ids), 10)], len(want))
		}
	}
}
