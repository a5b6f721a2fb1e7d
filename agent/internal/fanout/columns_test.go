package fanout

import (
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A fanout schema's inferred tables start from the initial schema of their
// routed name, carry the value's prefix and the metadata columns.
func TestFanoutInitialSchemasAndPrefix(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 50, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns,
		InitialSchemas: map[string]string{"click": "note STRING, id INT"}}
	cfg.Fanout.ConnectorOptions.KafkaOptions.ValueFieldsPrefix = "v_"
	cfg.Fanout.TableConfiguration.MetadataColumns = []string{spec.MetaPartition, spec.MetaOffset}
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == 50 })
	for _, ts := range r.Status().Tables {
		snap, err := table.ReadSnapshot(ts.Location)
		if err != nil {
			t.Fatal(err)
		}
		want := "key,v_type,v_id,v_pad,_kafka,partition,offset,_rescued_data,_corrupt_record"
		if ts.DestinationTable == "click" {
			want = "key,v_note,v_id,v_type,v_pad,_kafka,partition,offset,_rescued_data,_corrupt_record"
		}
		names := make([]string, len(snap.Schema))
		for i, f := range snap.Schema {
			names[i] = f.Name
		}
		if got := strings.Join(names, ","); got != want {
			t.Errorf("table %s: columns %s, want %s", ts.DestinationTable, got, want)
		}
	}
}
