package spec

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// TestChangelogRouteNames evaluates the default route of Debezium events
// on the shapes of the connectors' sources: MySQL's (db, table), and
// PostgreSQL's and SQL Server's (db, schema, table), wrapped with the
// Connect schema or not. An event without db or table has no route.
func TestChangelogRouteNames(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        string // "<null>" for no route
	}{
		{"mysql", `{"op":"c","source":{"db":"inventory","table":"customers"}}`, "inventory_customers"},
		{"postgres", `{"op":"c","source":{"db":"postgres","schema":"inventory","table":"customers"}}`, "postgres_inventory_customers"},
		{"postgres, another schema", `{"op":"c","source":{"db":"postgres","schema":"audit","table":"customers"}}`, "postgres_audit_customers"},
		{"sql server", `{"op":"c","source":{"db":"TestDB","schema":"dbo","table":"Customers"}}`, "testdb_dbo_customers"},
		{"postgres wrapped", `{"schema":{},"payload":{"op":"c","source":{"db":"postgres","schema":"inventory","table":"customers"}}}`,
			"postgres_inventory_customers"},
		{"null schema", `{"op":"c","source":{"db":"inventory","schema":null,"table":"customers"}}`, "inventory_customers"},
		{"no db", `{"op":"c","source":{"schema":"inventory","table":"customers"}}`, "<null>"},
		{"no table", `{"op":"c","source":{"db":"postgres","schema":"inventory"}}`, "<null>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := expr.Compile(changelogRoute(&Transformer{Format: FormatDebeziumJSON}))
			if err != nil {
				t.Fatal(err)
			}
			got, null, err := prog.EvalString(&record.Record{Value: []byte(tt.value)})
			if err != nil {
				t.Fatal(err)
			}
			if null {
				got = "<null>"
			}
			if got != tt.want {
				t.Errorf("route %s, want %s", got, tt.want)
			}
		})
	}
}
