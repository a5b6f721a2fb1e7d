package mirror_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/iceberg"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/icebergrest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/mirror"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// catalog returns a client of the Iceberg REST catalog of ICEBERG_REST_URI
// (tools/iceberg.sh up prints it), and skips the test without one.
func catalog(t *testing.T) (*icebergrest.Client, string) {
	t.Helper()
	uri := os.Getenv("ICEBERG_REST_URI")
	if uri == "" {
		t.Skip("ICEBERG_REST_URI is not set: start a catalog with tools/iceberg.sh up (make test does)")
	}
	c, err := icebergrest.New(t.Context(), icebergrest.Config{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	return c, uri
}

// ingester commits files of records to a table partitioned by region.
type ingester struct {
	t      *testing.T
	dir    string
	tb     *table.Table
	fields []schema.Field
	next   int64
	// conf is the table configuration of the first commit.
	conf map[string]string
}

// newIngester opens a new table (region STRING, offset BIGINT, value
// STRING) to commit to; the test's end closes it.
func newIngester(t *testing.T) *ingester {
	t.Helper()
	dir := t.TempDir()
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Close() })
	return &ingester{t: t, dir: dir, tb: tb, fields: tabletest.Fields(t, "region STRING, offset BIGINT, value STRING")}
}

var layout = table.Partitioning{Columns: []string{"region"}}

// region is the partition value of a file of region r.
func region(r string) []table.PartitionValue {
	return []table.PartitionValue{{Column: "region", Value: r}}
}

func (in *ingester) commit(regions ...string) {
	in.t.Helper()
	c := table.Commit{}
	for _, r := range regions {
		off := in.next
		in.next++
		c.Files = append(c.Files, tabletest.WritePartitionFile(in.t, in.tb, in.fields, region(r), func(b *rows.Builder) {
			cells := []func(){func() { b.Bytes([]byte(r)) }, func() { b.Int64(off) }, func() { b.Bytes(fmt.Appendf(nil, "record %d", off)) }}
			if len(in.fields) > 3 {
				cells = append(cells, func() { b.Int64(off * 10) })
			}
			tabletest.Row(in.t, b, cells...)
		}))
	}
	if in.tb.Snapshot().Version < 0 {
		c.Schema, c.Partitioning, c.Configuration = in.fields, &layout, in.conf
	}
	if _, err := in.tb.Commit(c); err != nil {
		in.t.Fatal(err)
	}
}

// TestMirror mirrors a partitioned Delta table into the catalog while it
// is written: appends, a new column, and a compaction; each sync commits
// one snapshot recording the Delta version it mirrors, a sync with
// nothing new commits none, a second mirror (an agent restarted) resumes
// where the first left, and pyiceberg reads through the catalog the rows
// the Delta table holds.
func TestMirror(t *testing.T) {
	cat, uri := catalog(t)
	in := newIngester(t)
	dir, tb := in.dir, in.tb
	in.commit("eu", "us")
	in.commit("eu")

	ns, name := []string{"mirror_test"}, fmt.Sprintf("t%d", os.Getpid())
	target := mirror.Target{Catalog: cat, Namespace: ns, Name: name, Location: dir}
	t.Cleanup(func() { _ = cat.DropTable(context.Background(), ns, name) })
	m, err := mirror.New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sync := func(m *mirror.Mirror, want mirror.Result) {
		t.Helper()
		res, err := m.Sync(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res != want {
			t.Fatalf("Sync = %+v, want %+v", res, want)
		}
	}
	sync(m, mirror.Result{Version: 1, Latest: 1, Commits: 1, Added: 3})
	sync(m, mirror.Result{Version: 1, Latest: 1})

	// A new column, more files, then a compaction of the eu files.
	in.fields = append(in.fields, schema.Field{Name: "n", Type: &schema.Type{Kind: schema.Long}, Nullable: true})
	if _, err := tb.Commit(table.Commit{Schema: in.fields}); err != nil {
		t.Fatal(err)
	}
	in.commit("eu", "us")
	sync(m, mirror.Result{Version: 3, Latest: 3, Commits: 1, Added: 2})
	compactRegion(t, tb, "eu")
	in.commit("us")

	// A new mirror, as after a restart, resumes after version 3.
	m2, err := mirror.New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	sync(m2, mirror.Result{Version: 5, Latest: 5, Commits: 1, Added: 2, Removed: 3})

	meta, err := cat.LoadTable(t.Context(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := meta.MirroredVersion(); !ok || v != 5 || len(meta.Snapshots) != 3 || len(meta.Schemas) != 2 {
		t.Errorf("catalog's table: mirrors %d (%v), %d snapshots, %d schemas; want 5, 3 and 2", v, ok, len(meta.Snapshots), len(meta.Schemas))
	}
	if op := meta.CurrentSnapshot().Summary["operation"]; op != "overwrite" {
		t.Errorf("operation of the last snapshot = %q, want overwrite (a compaction and an append)", op)
	}

	py := os.Getenv("TRIBUTARY_PY")
	if py == "" {
		t.Skip("TRIBUTARY_PY is not set: pyiceberg's read skipped")
	}
	helpers, err := filepath.Abs("../../e2e/testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/read_iceberg.py", uri, strings.Join(ns, ".")+"."+name, "offset,region,n")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+helpers)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("read_iceberg.py: %v\n%s%s", err, out, stderr.String())
	}
	var read struct {
		PyIceberg json.RawMessage   `json:"pyiceberg"`
		DuckDB    json.RawMessage   `json:"duckdb"`
		Summary   map[string]string `json:"summary"`
		Files     int               `json:"files"`
		Pruned    int               `json:"files_offset_ge_5"`
	}
	if err := json.Unmarshal(out, &read); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := `[[0,"eu",null],[1,"us",null],[2,"eu",null],[3,"eu",30],[4,"us",40],[5,"us",50]]`
	for reader, got := range map[string]json.RawMessage{"pyiceberg": read.PyIceberg, "duckdb": read.DuckDB} {
		if string(got) != want {
			t.Errorf("%s read %s, want %s", reader, got, want)
		}
	}
	if read.Files != 4 || read.Pruned != 1 {
		t.Errorf("pyiceberg plans %d files for the table and %d for offset >= 5, want 4 and 1 (the bounds of offset prune the others)",
			read.Files, read.Pruned)
	}
	if read.Summary[iceberg.DeltaVersionProperty] != "5" {
		t.Errorf("summary: %v", read.Summary)
	}

	// Spark, through the catalog with Iceberg's runtime, and on the Delta log.
	spark, jar := os.Getenv("TRIBUTARY_SPARK"), os.Getenv("ICEBERG_SPARK_JAR")
	if spark == "" || jar == "" || testing.Short() {
		t.Skip("TRIBUTARY_SPARK or ICEBERG_SPARK_JAR is not set (tools/iceberg.sh spark-jar prints it): Spark's read skipped")
	}
	cmd = exec.Command(py, "testdata/read_spark.py", uri, strings.Join(ns, ".")+"."+name, "offset,region,n", dir, t.TempDir())
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(spark, "python")+string(os.PathListSeparator)+helpers,
		"SPARK_LOCAL_IP=127.0.0.1")
	stderr.Reset()
	cmd.Stderr = &stderr
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("read_spark.py: %v\n%s%s", err, out, stderr.String())
	}
	var bySpark map[string]json.RawMessage
	if err := json.Unmarshal(out, &bySpark); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for _, reader := range []string{"spark_iceberg", "spark_delta"} {
		if got := string(bySpark[reader]); got != want {
			t.Errorf("%s read %s, want %s", reader, got, want)
		}
	}
}

// compactRegion rewrites the live files of one region into one, as a
// compaction does.
func compactRegion(t *testing.T, tb *table.Table, name string) {
	t.Helper()
	var removes []string
	for _, f := range tb.Files() {
		if strings.HasPrefix(f.Path, "region="+name+"/") {
			removes = append(removes, f.Path)
		}
	}
	fields := tb.Snapshot().Schema
	var all []struct {
		off int64
		n   *int64
	}
	for _, p := range removes {
		_, _, data, n := tabletest.ReadFile(t, tb, p)
		for i := range n {
			row := struct {
				off int64
				n   *int64
			}{off: data[1][i].Int64()}
			if len(data) > 3 && !data[3][i].IsNull() {
				v := data[3][i].Int64()
				row.n = &v
			}
			all = append(all, row)
		}
	}
	add := tabletest.WritePartitionFile(t, tb, fields, region(name), func(b *rows.Builder) {
		for _, r := range all {
			tabletest.Row(t, b, func() { b.Bytes([]byte(name)) }, func() { b.Int64(r.off) },
				func() { b.Bytes(fmt.Appendf(nil, "record %d", r.off)) }, func() {
					if r.n != nil {
						b.Int64(*r.n)
					} else {
						b.Null()
					}
				})
		}
	})
	if _, err := tb.CommitRewrite(table.Rewrite{Removes: removes, Adds: []table.AddFile{add}}); err != nil {
		t.Fatal(err)
	}
}

// flakyCatalog returns a client of the catalog of ICEBERG_REST_URI through
// a proxy that forwards every request while answer holds 0, and answers
// with HTTP status answer otherwise.
func flakyCatalog(t *testing.T) (*icebergrest.Client, *atomic.Int32) {
	t.Helper()
	_, uri := catalog(t)
	target, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	answer := &atomic.Int32{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := answer.Load(); code != 0 {
			http.Error(w, `{"error":{"message":"refused by the test","type":"TestException","code":`+fmt.Sprint(code)+`}}`, int(code))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cat, err := icebergrest.New(t.Context(), icebergrest.Config{URI: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cat, answer
}

// TestMirrorCatalogDown: while the catalog is down, or refuses the
// credentials, a sync fails and says why, and the Delta table is written
// on; once the catalog is back, one sync catches up.
func TestMirrorCatalogDown(t *testing.T) {
	cat, answer := flakyCatalog(t)

	in := newIngester(t)
	dir := in.dir
	in.commit("eu")
	ns, name := []string{"mirror_test"}, fmt.Sprintf("down%d", os.Getpid())
	t.Cleanup(func() { _ = cat.DropTable(context.Background(), ns, name) })
	m, err := mirror.New(mirror.Target{Catalog: cat, Namespace: ns, Name: name, Location: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}

	answer.Store(http.StatusServiceUnavailable)
	in.commit("us")
	if _, err := m.Sync(t.Context()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("Sync while the catalog is down: %v, want an error naming HTTP 503", err)
	}
	answer.Store(http.StatusUnauthorized)
	in.commit("eu")
	if _, err := m.Sync(t.Context()); !errors.Is(err, icebergrest.ErrUnauthorized) {
		t.Errorf("Sync while the catalog refuses the credentials: %v, want ErrUnauthorized", err)
	}
	answer.Store(0)
	res, err := m.Sync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (mirror.Result{Version: 2, Latest: 2, Commits: 1, Added: 2}); res != want {
		t.Errorf("Sync once the catalog is back = %+v, want %+v", res, want)
	}
}

// TestMirrorExpiresSnapshots checks that each commit expires the
// snapshots older than the Delta table's deleted-file retention (whose
// files vacuum may delete), here none: every snapshot but the current one
// and the new one.
func TestMirrorExpiresSnapshots(t *testing.T) {
	cat, _ := catalog(t)
	in := newIngester(t)
	in.conf = map[string]string{"delta.deletedFileRetentionDuration": "interval 0 seconds"}
	ns, name := []string{"mirror_test"}, fmt.Sprintf("expire%d", os.Getpid())
	t.Cleanup(func() { _ = cat.DropTable(context.Background(), ns, name) })
	m, err := mirror.New(mirror.Target{Catalog: cat, Namespace: ns, Name: name, Location: in.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for range 3 {
		in.commit("eu")
		if _, err := m.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := cat.LoadTable(t.Context(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := meta.MirroredVersion(); len(meta.Snapshots) != 2 || v != 2 {
		t.Errorf("the table holds %d snapshots and mirrors version %d; want 2 (the last two) and 2", len(meta.Snapshots), v)
	}
}

// TestMirrorKeepsDropped checks that a mirror does not create again the
// catalog's table that was dropped while it ran (by a DELETE with
// on_delete = DROP_REGISTRATION that another agent served): a new mirror,
// the table's next start, does.
func TestMirrorKeepsDropped(t *testing.T) {
	cat, _ := catalog(t)
	in := newIngester(t)
	ns, name := []string{"mirror_test"}, fmt.Sprintf("dropped%d", os.Getpid())
	t.Cleanup(func() { _ = cat.DropTable(context.Background(), ns, name) })
	target := mirror.Target{Catalog: cat, Namespace: ns, Name: name, Location: in.dir}
	m, err := mirror.New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in.commit("eu")
	if _, err := m.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := cat.DropTable(t.Context(), ns, name); err != nil {
		t.Fatal(err)
	}
	in.commit("us")
	if _, err := m.Sync(t.Context()); err == nil || !strings.Contains(err.Error(), "was dropped") {
		t.Errorf("Sync after the catalog's table was dropped: %v, want a refusal to create it again", err)
	}
	if _, err := cat.LoadTable(t.Context(), ns, name); !errors.Is(err, icebergrest.ErrNotFound) {
		t.Errorf("the dropped table is back: %v", err)
	}
	again, err := mirror.New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if res, err := again.Sync(t.Context()); err != nil || res.Version != 1 {
		t.Errorf("a new mirror: %+v, %v; want the table created again at version 1", res, err)
	}
}

// TestRunner runs a mirror beside a table's writer: it mirrors each
// commit it is told of; while the catalog is down, the writer commits on,
// the status says why the mirror fails and how far behind it is; once
// the catalog is back, it catches up.
func TestRunner(t *testing.T) {
	cat, answer := flakyCatalog(t)
	in := newIngester(t)
	dir := in.dir
	ns, name := []string{"mirror_test"}, fmt.Sprintf("run%d", os.Getpid())
	t.Cleanup(func() { _ = cat.DropTable(context.Background(), ns, name) })
	m, err := mirror.New(mirror.Target{Catalog: cat, Namespace: ns, Name: name, Location: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := mirror.Start(t.Context(), m, mirror.Options{Every: 20 * time.Millisecond})
	defer r.Stop()
	waitFor := func(what string, ok func(mirror.Status) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok(r.Status()) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: status %+v", what, r.Status())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if st := r.Status(); st.Version != -1 || st.LastError != "" {
		t.Errorf("status before the first commit = %+v", st)
	}
	in.commit("eu")
	r.Committed()
	waitFor("version 0 mirrored", func(st mirror.Status) bool { return st.Version == 0 && st.Lag == 0 && st.Snapshots == 1 })

	answer.Store(http.StatusServiceUnavailable)
	in.commit("us")
	in.commit("eu")
	r.Committed()
	waitFor("the failure and the lag in the status", func(st mirror.Status) bool {
		return strings.Contains(st.LastError, "503") && st.Lag == 2 && st.Version == 0
	})
	answer.Store(0)
	waitFor("the catch-up", func(st mirror.Status) bool { return st.Version == 2 && st.Lag == 0 && st.LastError == "" })
}
