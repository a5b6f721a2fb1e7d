//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/hivemeta"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/icebergrest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestCatalogRegistration runs a pipeline whose destination_catalog names
// a catalog with an Iceberg REST catalog and a Hive Metastore (the servers
// of tools/iceberg.sh and tools/hms.sh, which make test starts): the table
// is registered in the metastore as a Delta table, and its Iceberg mirror
// follows the Delta log. The REST catalog is reached through a proxy the
// test takes down: ingestion goes on, the status and /metrics show the
// mirror's lag and why; the agent is then killed (kill -9) between Delta
// commits and their mirror, and once the catalog is back the restarted
// agent catches up, each record in the Iceberg table once, as pyiceberg
// and DuckDB read it. Deleting the pipeline drops both registrations
// (on_delete = DROP_REGISTRATION), and never the files.
func TestCatalogRegistration(t *testing.T) {
	restURI, hmsURI := os.Getenv("ICEBERG_REST_URI"), os.Getenv("HIVE_METASTORE_URI")
	if restURI == "" || hmsURI == "" {
		t.Skip("set ICEBERG_REST_URI and HIVE_METASTORE_URI (make test starts tools/iceberg.sh and tools/hms.sh and does)")
	}
	t.Parallel()
	target, err := url.Parse(restURI)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(target)
	catalogServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "the catalog is down for the test", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer catalogServer.Close()

	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	c := a.client()
	// The catalogs outlive the test: a schema of its own keeps the names
	// of one run from those of the last.
	name := "cat" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	schema := "e2e_" + name
	if _, err := c.PutCatalog(ctx, &spec.Catalog{Name: name, IcebergREST: &spec.IcebergREST{URI: catalogServer.URL},
		HiveMetastore: &spec.HiveMetastore{URI: hmsURI}, OnDelete: spec.OnDeleteDropRegistration}); err != nil {
		t.Fatal(err)
	}
	topic := uniqueName("e2e-catalog")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "catalog", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "catalog", Connection: "catalog", DestinationCatalog: name, DestinationSchema: schema, FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable:   "events",
			ConnectorOptions:   spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	// A fanout schema's tables are registered too: every record goes to
	// its table "routed".
	fanoutSchema := schema + "_fanout"
	if _, err := c.PutFanoutSchema(ctx, &spec.FanoutSchema{Name: "catalog-fanout", Pipeline: "catalog", DestinationCatalog: name,
		DestinationSchema: fanoutSchema, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest}},
		FanoutOptions: spec.FanoutOptions{FanoutBy: "'routed'"}, TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}}); err != nil {
		t.Fatal(err)
	}
	st := a.waitRows("catalog", 0, 100, time.Minute)
	caughtUp := func(ts spec.TableStatus) bool {
		cat := ts.Catalog
		return cat != nil && cat.Iceberg != nil && cat.HiveMetastore != nil && cat.HiveMetastore.Registered &&
			cat.Iceberg.DeltaVersion == ts.Version && cat.Iceberg.Lag == 0 && cat.Iceberg.LastError == ""
	}
	lagging := func(ts spec.TableStatus) bool {
		cat := ts.Catalog
		return cat != nil && cat.Iceberg != nil && cat.Iceberg.Lag > 0 && strings.Contains(cat.Iceberg.LastError, "503")
	}
	waitMirrors := func(what string, cond func(spec.TableStatus) bool, rows int64) {
		t.Helper()
		a.waitFor("catalog", what, time.Minute, func(p *spec.PipelineResponse) bool { return cond(p.Status.Tables[0]) })
		a.waitFanout("catalog-fanout", what, time.Minute, func(f *spec.FanoutSchemaResponse) bool {
			return len(f.Status.Tables) == 1 && f.Status.Tables[0].Rows == rows && cond(f.Status.Tables[0])
		})
	}
	waitMirrors("registered and mirrored", caughtUp, 100)
	checkIceberg(t, restURI, schema+".events", 100)
	checkIceberg(t, restURI, fanoutSchema+".routed", 100)

	reg, err := hivemeta.New(hmsURI)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	got, err := reg.GetTable(ctx, schema, "events")
	if err != nil || got == nil || got.Provider != "delta" || got.Location != "file:"+st.Location {
		t.Fatalf("the metastore holds %+v (%v), want the Delta table at file:%s", got, err, st.Location)
	}

	// The catalog goes down: ingestion goes on, the mirror lags and says
	// why, in the status and in /metrics.
	down.Store(true)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
	a.waitRows("catalog", 0, 200, time.Minute)
	waitMirrors("lagging behind a catalog that is down", lagging, 200)
	series := fmt.Sprintf(`tributary_table_iceberg_mirror_lag_versions{pipeline="catalog",table="%s.%s.events"} `, name, schema)
	if m := metrics(t, a); !strings.Contains(m, series) || strings.Contains(m, series+"0\n") {
		t.Errorf("/metrics has no mirror lag of the table, or 0:\n%s", m)
	}

	// kill -9 with Delta commits the mirror has not followed; the catalog
	// comes back while the agent is down.
	a.kill()
	down.Store(false)
	a.start()
	waitMirrors("caught up after the restart", caughtUp, 200)
	checkIceberg(t, restURI, schema+".events", 200)
	checkIceberg(t, restURI, fanoutSchema+".routed", 200)
	checkTable(t, st.Location, "--count", "200", "--exactly-once")

	// Deleting the fanout schema and the pipeline drops the
	// registrations, and keeps the files.
	if err := a.client().DeleteFanoutSchema(ctx, "catalog-fanout"); err != nil {
		t.Fatal(err)
	}
	if got, err := reg.GetTable(ctx, fanoutSchema, "routed"); err != nil || got != nil {
		t.Errorf("the metastore still holds %+v (%v) after the fanout schema was deleted", got, err)
	}
	if err := a.client().DeletePipeline(ctx, "catalog"); err != nil {
		t.Fatal(err)
	}
	rest, err := icebergrest.New(ctx, icebergrest.Config{URI: restURI})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rest.LoadTable(ctx, []string{schema}, "events"); !errors.Is(err, icebergrest.ErrNotFound) {
		t.Errorf("the Iceberg table is still in the catalog after the pipeline was deleted: %v", err)
	}
	if got, err := reg.GetTable(ctx, schema, "events"); err != nil || got != nil {
		t.Errorf("the metastore still holds %+v (%v) after the pipeline was deleted", got, err)
	}
	checkTable(t, st.Location, "--count", "200", "--exactly-once")
}

// checkIceberg reads the Iceberg table name through the REST catalog at
// uri with pyiceberg and DuckDB, and fails the test unless each reads
// want rows, each (partition, offset) once.
func checkIceberg(t *testing.T, uri, name string, want int) {
	t.Helper()
	script := filepath.Join("..", "internal", "mirror", "testdata", "read_iceberg.py")
	cmd := exec.Command(env.python, script, uri, name, "_kafka")
	helpers, err := filepath.Abs("testdata") // duckext.py
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PYTHONPATH="+helpers)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("read_iceberg.py: %v\n%s%s", err, out, stderr.String())
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("read_iceberg.py printed %s: %v", out, err)
	}
	for _, reader := range []string{"pyiceberg", "duckdb"} {
		var rows [][]struct {
			Partition int   `json:"partition"`
			Offset    int64 `json:"offset"`
		}
		if err := json.Unmarshal(got[reader], &rows); err != nil {
			t.Errorf("%s: %s", reader, got[reader])
			continue
		}
		seen := map[string]bool{}
		for _, r := range rows {
			seen[fmt.Sprint(r[0].Partition, "/", r[0].Offset)] = true
		}
		if len(rows) != want || len(seen) != want {
			t.Errorf("%s read %d rows (%d distinct offsets) of %s, want %d", reader, len(rows), len(seen), name, want)
		}
	}
}

// metrics returns the agent's /metrics.
func metrics(t *testing.T, a *agent) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.endpoint+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
