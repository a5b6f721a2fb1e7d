package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout/fanouttest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fanoutRows sums the rows of the tables of m's fanout schema name.
func fanoutRows(m *Manager, name string) int64 {
	st, _ := m.FanoutStatus(name)
	var n int64
	for _, ts := range st.Tables {
		n += ts.Rows
	}
	return n
}

func TestFanoutManagerRefusesMissingPipeline(t *testing.T) {
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	f := fanouttest.Schema("events")
	err := m.ApplyFanout(context.Background(), &f)
	var errs spec.Errors
	if !errors.As(err, &errs) || errs[0].Path != "pipeline_name" {
		t.Fatalf("ApplyFanout: %v, want an error on pipeline_name", err)
	}
	if _, ok := m.FanoutStatus("f"); ok {
		t.Fatal("a refused fanout schema has a status")
	}
}

// Through the Manager, with the expression compiled: routes, stops with a
// final flush, resumes, and stops when its pipeline is removed.
func TestFanoutManagerRoutesByExpression(t *testing.T) {
	if _, err := expr.Compile("topic"); err != nil {
		t.Skipf("expr.Compile does not work yet: %v", err)
	}
	addr, producer := newCluster(t, 4, "events")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	warehouse := t.TempDir()
	produce(t, producer, 0, 500, fanouttest.Event)
	p := &spec.Pipeline{Name: "p", Connection: "c", DestinationCatalog: "main", DestinationSchema: "raw", FlushInterval: "200ms"}
	p.Normalize()
	f := fanouttest.Schema("events")
	f.FanoutOptions.FanoutBy = "cast(value AS STRING):type::string"
	for _, n := range []int{500, 1000} {
		m := NewManager(Config{Warehouse: warehouse})
		if err := m.Apply(context.Background(), p, conn, nil); err != nil {
			t.Fatal(err)
		}
		if err := m.CheckFanout(&f); err != nil {
			t.Fatal(err)
		}
		if err := m.ApplyFanout(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(m, "f") == int64(n) })
		if n == 500 {
			if err := m.RemoveFanout(context.Background(), "f"); err != nil {
				t.Fatal(err)
			}
			produce(t, producer, 500, 1000, fanouttest.Event)
		}
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	fanouttest.CheckRouted(t, filepath.Join(warehouse, "main", "events"), 1000, nil)
}

// A fanout schema whose new options the tables it created cannot take is
// refused on the attribute of the transform.
func TestFanoutCheckRefusesIncompatibleTables(t *testing.T) {
	addr, producer := newCluster(t, 4, "events")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	produce(t, producer, 0, 20, fanouttest.Event)
	warehouse := t.TempDir()
	p := &spec.Pipeline{Name: "p", Connection: "c", DestinationCatalog: "main", DestinationSchema: "raw", FlushInterval: "200ms"}
	p.Normalize()
	f := fanouttest.Schema("events")
	m := NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.ApplyFanout(context.Background(), &f); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(m, "f") == 20 })
	if err := m.RemoveFanout(context.Background(), "f"); err != nil {
		t.Fatal(err)
	}
	cfg := m.fanoutConfig(warehouse, p, &f, conn)
	if err := checkFanout(&cfg); err != nil {
		t.Fatalf("the same options: %v", err)
	}
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions.Schema = "type STRING, id BIGINT, more STRING"
	if err := checkFanout(&cfg); err != nil {
		t.Fatalf("a new nullable column: %v", err)
	}
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions.Schema = "type INT, id BIGINT"
	err := checkFanout(&cfg)
	var errs spec.Errors
	if !errors.As(err, &errs) || len(errs) != len(fanouttest.Types) || errs[0].Path != "fanout_options.transforms" {
		t.Fatalf("checkFanout: %v, want one error per table on fanout_options.transforms", err)
	}
	t.Logf("%s", errs[0].Detail)
}
