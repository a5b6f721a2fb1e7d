package hivemeta_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/hivemeta"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
)

// metastore returns a client of the metastore of HIVE_METASTORE_URI
// (tools/hms.sh up prints it), and skips the test without one.
func metastore(t *testing.T) (*hivemeta.Client, string) {
	t.Helper()
	uri := os.Getenv("HIVE_METASTORE_URI")
	if uri == "" {
		t.Skip("HIVE_METASTORE_URI is not set: start a metastore with tools/hms.sh up (make test does)")
	}
	c, err := hivemeta.New(uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, uri
}

// TestRegister registers a Delta table by name: registering it again
// changes nothing, the name of another table's folder is refused, and
// Spark reads the rows by name; after a new column and more rows, Spark
// reads those too, with nothing changed in the metastore. Drop keeps the
// table's files.
func TestRegister(t *testing.T) {
	c, uri := metastore(t)
	ctx := t.Context()
	dir := t.TempDir()
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	fields := tabletest.Fields(t, "id BIGINT, name STRING")
	add := tabletest.WriteFile(t, tb, fields, func(b *rows.Builder) {
		for i := range int64(3) {
			tabletest.Row(t, b, func() { b.Int64(i) }, func() { b.Bytes(fmt.Appendf(nil, "n%d", i)) })
		}
	})
	if _, err := tb.Commit(table.Commit{Schema: fields, Files: []table.AddFile{add}}); err != nil {
		t.Fatal(err)
	}

	db, name := "hivemeta_test", fmt.Sprintf("t%d", os.Getpid())
	location := "file:" + dir
	t.Cleanup(func() { _ = c.Drop(context.Background(), db, name) })
	if err := c.Register(ctx, db, name, location); err != nil {
		t.Fatal(err)
	}
	if err := c.Register(ctx, db, name, location); err != nil {
		t.Errorf("registering again: %v", err)
	}
	if err := c.Register(ctx, db, name, "file:/elsewhere"); !errors.Is(err, hivemeta.ErrTaken) {
		t.Errorf("registering another folder under the name: %v, want ErrTaken", err)
	}
	got, err := c.GetTable(ctx, db, name)
	if err != nil || got == nil || got.Location != location || got.Provider != "delta" {
		t.Fatalf("GetTable = %+v, %v", got, err)
	}
	if none, err := c.GetTable(ctx, db, "absent"); none != nil || err != nil {
		t.Errorf("GetTable of an absent table = %+v, %v; want nil, nil", none, err)
	}

	// A new column and more rows: the metastore needs no change.
	wider := tabletest.Fields(t, "id BIGINT, name STRING, n INT")
	more := tabletest.WriteFile(t, tb, wider, func(b *rows.Builder) {
		tabletest.Row(t, b, func() { b.Int64(3) }, func() { b.Bytes([]byte("n3")) }, func() { b.Int32(30) })
	})
	if _, err := tb.Commit(table.Commit{Schema: wider, Files: []table.AddFile{more}}); err != nil {
		t.Fatal(err)
	}

	spark, py := os.Getenv("TRIBUTARY_SPARK"), os.Getenv("TRIBUTARY_PY")
	if spark == "" || py == "" || testing.Short() {
		t.Skip("TRIBUTARY_SPARK or TRIBUTARY_PY is not set: Spark's read by name skipped")
	}
	helpers, err := filepath.Abs("../../e2e/testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/read_by_name.py", uri, db+"."+name, t.TempDir())
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(spark, "python")+string(os.PathListSeparator)+helpers,
		"SPARK_LOCAL_IP=127.0.0.1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("read_by_name.py: %v\n%s%s", err, out, stderr.String())
	}
	if got, want := strings.TrimSpace(string(out)), `[[0,"n0",null],[1,"n1",null],[2,"n2",null],[3,"n3",30]]`; got != want {
		t.Errorf("Spark read %s by name: %s, want %s", db+"."+name, got, want)
	}

	if err := c.Drop(ctx, db, name); err != nil {
		t.Fatal(err)
	}
	if err := c.Drop(ctx, db, name); err != nil {
		t.Errorf("dropping again: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "_delta_log", "00000000000000000000.json")); err != nil {
		t.Errorf("the table's log after Drop: %v", err)
	}
}

// TestRegisterMetastoreDown: a metastore that does not answer is an
// error, and the next call connects again.
func TestRegisterMetastoreDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := hivemeta.New("thrift://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Register(t.Context(), "db", "t", "file:/x"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("Register with no metastore: %v, want connection refused", err)
	}
	if _, err := hivemeta.New("http://127.0.0.1:9083"); err == nil {
		t.Error("an http URI: no error")
	}
}
