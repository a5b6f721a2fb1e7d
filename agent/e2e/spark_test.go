//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// sparkDir is the Spark install of tools/tools.sh spark: python/ (pyspark
// and delta-spark, for PYTHONPATH) and jars/ (the Delta jars). make test
// sets TRIBUTARY_SPARK; run alone, the test uses .tools/spark if present.
func sparkDir(t *testing.T) string {
	d := os.Getenv("TRIBUTARY_SPARK")
	if d == "" {
		d = filepath.Join(env.root, ".tools", "spark")
		if _, err := os.Stat(d); err != nil {
			t.Skip("no Spark: run tools/tools.sh spark, or set TRIBUTARY_SPARK")
		}
	}
	for _, sub := range []string{"python", "jars"} {
		if _, err := os.Stat(filepath.Join(d, sub)); err != nil {
			t.Fatalf("TRIBUTARY_SPARK=%s: %v", d, err)
		}
	}
	return d
}

// sparkTable returns the Spark install (see sparkDir) and a new table,
// opened with the table package in a temporary folder, for a test that
// writes a table and has Spark read it; the table is closed when the test
// ends.
func sparkTable(t *testing.T) (spark, dir string, tb *table.Table) {
	spark, dir = sparkDir(t), t.TempDir()
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return spark, dir, tb
}

// ntzSchema is the value schema of the records check_spark.py produce
// writes: a TIMESTAMP and a TIMESTAMP_NTZ of the same instant.
const ntzSchema = "id BIGINT NOT NULL, name STRING, ts TIMESTAMP, local TIMESTAMP_NTZ, tags ARRAY<STRING>"

// TestSparkReadsTables has Spark 4 with Delta 4 (one session for every
// check) open each kind of table the agent writes, and compare every row
// with delta-rs: BINARY key and value; STRING key and value with a metadata
// column; JSON with TIMESTAMP, TIMESTAMP_NTZ and a metadata column; and the
// same JSON table as an earlier version of the agent created it (NOT NULL
// fields in the metadata column, a protocol Spark refuses, rows already
// written), which the agent's next commit makes readable. Spark also
// appends rows without the metadata column to copies of the JSON tables,
// and is refused a DELETE on the append-only one.
func TestSparkReadsTables(t *testing.T) {
	t.Parallel()
	spark := sparkDir(t)
	dataDir := t.TempDir()
	warehouse := filepath.Join(dataDir, "warehouse")
	plain, ntz := uniqueName("e2e-spark-plain"), uniqueName("e2e-spark-ntz")
	const nPlain, nNTZ = 500, 500
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", plain, "--count", "0")
	python(t, "check_spark.py", "produce", "--bootstrap", env.bootstrap, "--topic", ntz, "--count", "0")

	kafka := func(topic string, key, value *spec.Transformer) spec.ConnectorOptions {
		return spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			KeyTransformer: key, ValueTransformer: value,
		}}
	}
	str := &spec.Transformer{Format: spec.FormatString}
	js := &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: ntzSchema}}
	p := &spec.Pipeline{
		Name: "spark", Connection: "spark", DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "500ms",
		Tables: []spec.Table{
			{DestinationTable: "raw", ConnectorOptions: kafka(plain, nil, nil)},
			{DestinationTable: "strings", ConnectorOptions: kafka(plain, str, str),
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "meta"}},
			{DestinationTable: "events", ConnectorOptions: kafka(ntz, str, js),
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}},
			{DestinationTable: "legacy", ConnectorOptions: kafka(ntz, str, js),
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}},
		},
	}
	legacyDir := filepath.Join(warehouse, "main", "e2e", "legacy")
	const legacyRows = 3
	writeLegacyTable(t, legacyDir, &p.Tables[3], legacyRows)
	// A copy as it is now, before the agent commits to it: Spark refuses it.
	legacyBefore := filepath.Join(t.TempDir(), "legacy-before")
	if err := os.CopyFS(legacyBefore, os.DirFS(legacyDir)); err != nil {
		t.Fatal(err)
	}

	a := startAgent(t, dataDir)
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "spark", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", plain, "--count", "500", "--header")
	python(t, "check_spark.py", "produce", "--bootstrap", env.bootstrap, "--topic", ntz, "--count", "500",
		"--malformed", "7,300")

	type check struct {
		Name       string `json:"name"`
		Path       string `json:"path"`
		Count      int64  `json:"count"`
		AppendOnly bool   `json:"append_only"`
		Append     bool   `json:"append"`
		Error      string `json:"error,omitempty"`
	}
	checks := []check{
		{Name: "raw", Count: nPlain, AppendOnly: true},
		{Name: "strings", Count: nPlain, AppendOnly: true},
		{Name: "events", Count: nNTZ, AppendOnly: true, Append: true},
		// Tables of earlier versions keep their configuration: not append-only.
		{Name: "legacy", Count: nNTZ + legacyRows, Append: true},
	}
	for i := range checks {
		st := a.waitRows("spark", i, checks[i].Count, 2*time.Minute)
		checks[i].Path = st.Location
	}
	if got := checks[3].Path; got != legacyDir {
		t.Fatalf("legacy table is at %s, want %s", got, legacyDir)
	}
	checks = append(checks, check{Name: "legacy as written before", Path: legacyBefore,
		Error: "DELTA_FEATURES_PROTOCOL_METADATA_MISMATCH"})
	arg, err := json.Marshal(checks)
	if err != nil {
		t.Fatal(err)
	}
	runSpark(t, spark, "check_spark.py", "check", "--jars", filepath.Join(spark, "jars"), "--tables", string(arg))
}

// sparkSlot lets one Spark session run at a time: a session keeps both
// cores of a CI machine busy for most of a minute, and the tests run in
// parallel.
var sparkSlot = make(chan struct{}, 1)

// runSpark runs the testdata script with args under the venv's Python,
// with the Spark install at spark (see sparkDir) on its PYTHONPATH, once no
// other test runs Spark; it logs the script's output without Spark's
// start-up chatter, and fails the test if the script fails.
func runSpark(t *testing.T, spark, script string, args ...string) {
	t.Helper()
	startSpark(t, spark, script, args...).wait()
}

// sparkRun is a Spark script started by startSpark.
type sparkRun struct {
	t      *testing.T
	script string
	// started is closed once the script runs: it waits for the other
	// tests' Spark sessions first.
	started chan struct{}
	done    chan struct{}
	out     bytes.Buffer
	err     error
	took    time.Duration
}

// startSpark starts what runSpark runs and returns at once, for a test
// that works beside the script; wait ends it.
func startSpark(t *testing.T, spark, script string, args ...string) *sparkRun {
	cmd := exec.Command(env.python, append([]string{filepath.Join("testdata", script)}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(spark, "python"), "SPARK_LOCAL_IP=127.0.0.1")
	r := &sparkRun{t: t, script: script, started: make(chan struct{}), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	go func() {
		defer close(r.done)
		sparkSlot <- struct{}{}
		close(r.started)
		start := time.Now()
		r.err = cmd.Run()
		r.took = time.Since(start)
		<-sparkSlot
	}()
	return r
}

// wait waits for the script to end, logs its output and fails the test if
// it failed.
func (r *sparkRun) wait() {
	r.t.Helper()
	<-r.done
	r.t.Logf("%s (%s):\n%s", r.script, r.took.Round(time.Second), sparkOutput(r.out.String()))
	if r.err != nil {
		r.t.Fatalf("%s: %v", r.script, r.err)
	}
}

// sparkOutput drops Spark's startup chatter from the script's output.
func sparkOutput(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, " WARN ") || strings.Contains(l, "log4j") || strings.HasPrefix(l, "WARNING: Using incubator") ||
			strings.HasPrefix(l, "Setting default log level") || strings.HasPrefix(l, "To adjust logging level") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// oldMetadataType is the metadata column's type as the agent wrote it
// before its nested fields became nullable.
var oldMetadataType = &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
	{Name: "topic", Type: &schema.Type{Kind: schema.String}},
	{Name: "partition", Type: &schema.Type{Kind: schema.Int}},
	{Name: "offset", Type: &schema.Type{Kind: schema.Long}},
	{Name: "timestamp", Type: &schema.Type{Kind: schema.Timestamp}, Nullable: true},
	{Name: "timestampType", Type: &schema.Type{Kind: schema.Int}},
	{Name: "headers", Type: &schema.Type{Kind: schema.Array, Elem: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
		{Name: "key", Type: &schema.Type{Kind: schema.String}},
		{Name: "value", Type: &schema.Type{Kind: schema.Binary}, Nullable: true},
	}}}, Nullable: true},
}}

// writeLegacyTable creates, in dir, the table tbl as the agent wrote it
// before this version: the metadata column with NOT NULL nested fields, a
// protocol listing only timestampNtz (no invariants: Spark refuses it), no
// table properties, and one file of n rows (keys old-0, old-1, ...) in
// version 0.
func writeLegacyTable(t *testing.T, dir string, tbl *spec.Table, n int) {
	t.Helper()
	layout, errs := tbl.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cols := layout.Columns()
	for i := range cols {
		if cols[i].Name == layout.MetadataColumn {
			cols[i].Type = oldMetadataType
		}
	}
	// key, id, name, ts, local, tags, _kafka, _corrupt_record
	if len(cols) != 8 || cols[6].Name != "_kafka" {
		t.Fatalf("unexpected layout %v", cols)
	}
	b, err := rows.NewBuilder(cols)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Hour).UnixMicro()
		b.BeginRow()
		b.Field(0)
		b.Bytes(fmt.Appendf(nil, "old-%d", i))
		b.Field(1)
		b.Int64(int64(-1 - i))
		b.Field(2)
		b.Bytes([]byte("old"))
		b.Field(3)
		b.Int64(at)
		b.Field(4)
		b.Int64(at)
		b.Field(5)
		b.Null()
		b.Field(6)
		b.BeginStruct()
		b.Field(0)
		b.Bytes([]byte("old-topic"))
		b.Field(1)
		b.Int32(0)
		b.Field(2)
		b.Int64(int64(i))
		b.Field(3)
		b.Int64(at)
		b.Field(4)
		b.Int32(0)
		b.Field(5)
		b.Null()
		b.EndStruct()
		b.Field(7)
		b.Null()
		if err := b.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	// The data file, named and compressed as the agent names and writes them.
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	var id [16]byte
	rand.Read(id[:])
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
	file := fmt.Sprintf("part-00000-%x-%x-%x-%x-%x-c000.snappy.parquet", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
	f, err := os.Create(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewWriter(f, b.Schema(), parquet.Compression(&snappy.Codec{}))
	if _, err := w.WriteRows(rowstest.Rows(b.Columns())); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}

	// Version 0 as the earlier version wrote it.
	schemaString, err := schema.SparkJSON(cols)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	actions := []any{
		map[string]any{"commitInfo": map[string]any{
			"timestamp": now, "operation": "STREAMING UPDATE", "isBlindAppend": true,
			"operationParameters": map[string]string{"outputMode": "Append"},
			"operationMetrics": map[string]string{
				"numOutputRows": fmt.Sprint(n), "numAddedFiles": "1", "numOutputBytes": fmt.Sprint(fi.Size()),
			},
			"engineInfo": "tributary-agent",
		}},
		map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
			"readerFeatures": []string{"timestampNtz"}, "writerFeatures": []string{"timestampNtz"}}},
		map[string]any{"metaData": map[string]any{"id": "6f1c2a0e-8d3b-4c5e-9f70-1a2b3c4d5e6f",
			"format": map[string]any{"provider": "parquet", "options": map[string]string{}}, "schemaString": schemaString,
			"partitionColumns": []string{}, "configuration": map[string]string{}, "createdTime": now}},
		map[string]any{"add": map[string]any{"path": file, "partitionValues": map[string]string{}, "size": fi.Size(),
			"modificationTime": fi.ModTime().UnixMilli(), "dataChange": true, "stats": fmt.Sprintf(`{"numRecords":%d}`, n)}},
	}
	var log bytes.Buffer
	enc := json.NewEncoder(&log)
	for _, a := range actions {
		if err := enc.Encode(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
