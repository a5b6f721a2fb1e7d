package fanout

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink/deltasinktest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestFanoutErrorBudget checks ignore_errors on a fanout schema: a record
// that routes but does not decode gets no row in its routed table, is
// counted there and kept in the schema's _dirty_records with the routed
// table's name; past error_tolerance_max_count the fanout schema fails,
// naming the dirty records table.
func TestFanoutErrorBudget(t *testing.T) {
	bad := map[int]bool{10: true, 20: true, 35: true}
	value := func(i int) string {
		if bad[i] {
			return fmt.Sprintf(`{"type":%q,"id":"not a number"}`, fanoutTypes[i%len(fanoutTypes)])
		}
		return fanoutEvent(i)
	}
	for _, tt := range []struct {
		name  string
		limit int64
	}{{"unlimited", -1}, {"two at most", 2}} {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFanoutFixture(t)
			produce(t, fx.producer, 0, 100, value)
			cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
			on := true
			ko := &cfg.Fanout.ConnectorOptions.KafkaOptions
			ko.IgnoreErrors, ko.ErrorToleranceMaxCount = &on, &tt.limit
			r := fx.run(t, cfg, routeByType, nil, nil)
			dirtyDir := filepath.Join(cfg.Dir, spec.DirtyRecordsTable)
			if tt.limit >= 0 {
				waitFor(t, 20*time.Second, "the fanout schema to fail", func() bool { return r.Status().State == spec.StateFailed })
				if st := r.Status(); !strings.Contains(st.LastError, "main.events._dirty_records") ||
					!strings.Contains(st.LastError, "3 records of table") {
					t.Fatalf("last error %q, want the count and main.events._dirty_records", st.LastError)
				}
				return
			}
			waitFor(t, 20*time.Second, "97 rows", func() bool { return fanoutRows(r) == 97 })
			errs := map[string]int64{}
			for _, ts := range r.Status().Tables {
				errs[ts.DestinationTable] = ts.ErrorRecords
			}
			// 10, 20 and 35 are clicks: fanoutTypes[i%5].
			if errs["click"] != 3 || errs["view"] != 0 {
				t.Fatalf("error records per table %v, want 3 for click", errs)
			}
			r.Stop()
			rows, _ := tabletest.ReadTable[deltasinktest.DirtyRow](t, dirtyDir)
			if got := len(rows); got != 3 {
				t.Fatalf("%d dirty records, want 3", got)
			}
			for _, d := range rows {
				if d.Table != "click" || !strings.Contains(string(d.Value), "not a number") {
					t.Errorf("dirty record %+v", d)
				}
			}
		})
	}
}
