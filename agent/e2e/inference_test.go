//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// inferenceTable is one table of TestSchemaInferenceThroughTerraform.
type inferenceTable struct {
	name   string
	stream string // evo or hints: the topic it reads
	// options is the HCL of its json_options, mode is the mode it must
	// behave as (the alias resolved) and rescue its rescue column ("" for
	// none).
	options, mode, rescue string
}

// inferenceReport is what inference_records.py check prints.
type inferenceReport struct {
	Readers map[string]struct {
		Rows     int      `json:"rows"`
		Corrupt  int      `json:"corrupt"`
		Problems []string `json:"problems"`
		// Refused is why a reader that does not implement a table feature
		// the table uses (delta-rs and typeWidening) did not read it.
		Refused string `json:"refused"`
	} `json:"readers"`
	History []struct {
		Version int64    `json:"version"`
		Columns [][2]any `json:"columns"`
		Added   []string `json:"added"`
		Rows    int64    `json:"rows"`
	} `json:"history"`
	Columns       [][2]any                  `json:"columns"`
	Protocol      map[string]any            `json:"protocol"`
	Configuration map[string]string         `json:"configuration"`
	Metadata      map[string]map[string]any `json:"metadata"`
	Problems      []string                  `json:"problems"`
}

// column returns the report's final type of column name (Delta log form:
// a type name, a map for a struct, a list for an array), or nil.
func (r *inferenceReport) column(name string) any {
	for _, c := range r.Columns {
		if c[0] == name {
			return c[1]
		}
	}
	return nil
}

// names returns the final top-level column names in table order.
func (r *inferenceReport) names() []string {
	var out []string
	for _, c := range r.Columns {
		out = append(out, c[0].(string))
	}
	return out
}

// additions returns the column paths each schema change added (sorted),
// in log order.
func (r *inferenceReport) additions() [][]string {
	var out [][]string
	if len(r.History) == 0 {
		return nil
	}
	for _, h := range r.History[1:] {
		if len(h.Added) > 0 {
			out = append(out, slices.Sorted(slices.Values(h.Added)))
		}
	}
	return out
}

// TestSchemaInferenceThroughTerraform applies, with the real Terraform CLI,
// one pipeline whose tables infer their schema from JSON, one table per
// schema_evolution_mode (ADD_NEW_COLUMNS, ADD_NEW_COLUMNS_WITH_TYPE_WIDENING,
// RESCUE, FAIL_ON_NEW_COLUMNS, NONE with and without a rescue column, the
// Auto Loader alias addNewColumns) and one with schema_hints and field names
// that plain Delta columns cannot hold. Confluent's Python client produces a
// stream over three partitions in phases: the first records set the first
// schema, later ones add top-level and nested fields, change a number to a
// string, an integer to a fraction and to one beyond BIGINT, and hold
// malformed JSON
// (testdata/inference_records.py). Each table's log must record the schema
// history (columns only added, at the end, in the commit of the rows that
// need them), and delta-rs, DuckDB and a pyarrow dataset must read one row
// per produced offset, each as its mode says, old rows null in new columns.
// The FAIL_ON_NEW_COLUMNS table stops naming the new columns with nothing
// of that batch committed, and resumes from that record when applied again
// with mode ADD_NEW_COLUMNS. The pipeline status and the tributary_table
// data source show the inferred columns.
func TestSchemaInferenceThroughTerraform(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	pipeline := uniqueName("e2e-infer")
	topics := map[string]string{"evo": uniqueName("e2e-infer-evo"), "hints": uniqueName("e2e-infer-hints")}
	manifests := map[string][]string{}
	produce := func(stream string, phase int) {
		t.Helper()
		m := filepath.Join(dir, fmt.Sprintf("%s%d.jsonl", stream, phase))
		python(t, "inference_records.py", "produce", "--bootstrap", env.bootstrap, "--topic", topics[stream],
			"--manifest", m, "--stream", stream, "--phase", fmt.Sprint(phase), "--partitions", "3")
		manifests[stream] = append(manifests[stream], m)
	}

	const hints = "id BIGINT, ts TIMESTAMP, user.dob DATE, tags ARRAY<STRING>, attrs MAP<STRING,STRING>, attrs.value INT"
	evo := func(mode string) string {
		return fmt.Sprintf(`{ schema_evolution_mode = %q, infer_records_per_partition = 6 }`, mode)
	}
	tables := []inferenceTable{
		{name: "add", stream: "evo", options: evo("ADD_NEW_COLUMNS"), mode: spec.SchemaEvolutionAddNewColumns, rescue: spec.RescuedDataColumn},
		{name: "widen", stream: "evo", options: evo("ADD_NEW_COLUMNS_WITH_TYPE_WIDENING"),
			mode: spec.SchemaEvolutionAddNewColumnsWithTypeWidening, rescue: spec.RescuedDataColumn},
		{name: "rescue", stream: "evo", options: evo("RESCUE"), mode: spec.SchemaEvolutionRescue, rescue: spec.RescuedDataColumn},
		{name: "fail", stream: "evo", options: evo("FAIL_ON_NEW_COLUMNS"), mode: spec.SchemaEvolutionFailOnNewColumns, rescue: spec.RescuedDataColumn},
		{name: "none", stream: "evo", options: evo("NONE"), mode: spec.SchemaEvolutionNone},
		{name: "none_rescued", stream: "evo", mode: spec.SchemaEvolutionNone, rescue: "_rescued",
			options: `{ schema_evolution_mode = "NONE", infer_records_per_partition = 6, rescued_data_column = "_rescued" }`},
		{name: "alias", stream: "evo", options: evo("addNewColumns"), mode: spec.SchemaEvolutionAddNewColumns, rescue: spec.RescuedDataColumn},
		// The default infer_records_per_partition (50) with fewer records
		// than that in each partition: inference must not wait for more.
		{name: "hints", stream: "hints", mode: spec.SchemaEvolutionAddNewColumns, rescue: spec.RescuedDataColumn,
			options: fmt.Sprintf(`{
            schema_evolution_mode = "ADD_NEW_COLUMNS"
            schema_hints          = %q
            string_type_inference = false
          }`, hints)},
	}
	idx := func(name string) int {
		return slices.IndexFunc(tables, func(tb inferenceTable) bool { return tb.name == name })
	}
	writeMain := func() {
		t.Helper()
		var blocks strings.Builder
		for _, tb := range tables {
			blocks.WriteString(tfTable(tb.name, topics[tb.stream], `value_transformer = {
          format       = "JSON"
          json_options = `+tb.options+`
        }`, kafkaMetadata))
		}
		tfPipeline{connection: pipeline, pipeline: pipeline, body: blocks.String()}.write(t, dir)
	}

	// Phase 1 is in the topics before the pipeline starts: the first
	// schema is inferred from it.
	produce("evo", 1)
	produce("hints", 1)
	writeMain()
	apply(t, dir, a)
	// A table that fails is reported and left out of what follows.
	broken := map[string]bool{}
	wait := func(name string, rows int64, timeout time.Duration) {
		t.Helper()
		if !broken[name] {
			if _, ok := a.waitTable(pipeline, idx(name), rows, timeout); !ok {
				broken[name] = true
			}
		}
	}
	for _, tb := range tables {
		wait(tb.name, 18, time.Minute)
	}

	// What inference decided is in the status, before anything evolves.
	st, _ := a.waitTable(pipeline, idx("add"), 18, time.Minute)
	want := map[string]string{"id": "BIGINT", "name": "STRING", "amount": "BIGINT", "code": "BIGINT", "ratio": "BIGINT",
		"tags": "ARRAY<STRING>", "when": "TIMESTAMP", "note": "STRING", spec.RescuedDataColumn: "STRING"}
	got := map[string]string{}
	for _, c := range st.Columns {
		got[c.Name] = c.Type
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("status of table add after phase 1: column %q is %q, want %q (columns %+v)", name, got[name], typ, st.Columns)
		}
	}
	if !strings.HasPrefix(strings.ToUpper(got["user"]), "STRUCT<") {
		t.Errorf("status of table add after phase 1: column user is %q, want a STRUCT", got["user"])
	}

	// Phase 2 adds score and user.email: FAIL_ON_NEW_COLUMNS stops.
	produce("evo", 2)
	produce("hints", 2)
	for _, tb := range tables {
		if tb.name != "fail" {
			wait(tb.name, 36, time.Minute)
		}
	}
	failed, ok := a.waitTableFailed(pipeline, idx("fail"), time.Minute)
	if !ok {
		broken["fail"] = true
	}
	for _, col := range []string{"score", "user.email"} {
		if !strings.Contains(failed.LastError, col) {
			t.Errorf("table fail: last_error %q does not name the new column %s", failed.LastError, col)
		}
	}
	if failed.Rows != 18 {
		t.Errorf("table fail: %d rows committed after it failed, want the 18 of phase 1", failed.Rows)
	}
	for _, ps := range failed.Partitions {
		if ps.NextOffset != 6 {
			t.Errorf("table fail: partition %d committed up to %d, want 6 (the end of phase 1)", ps.Partition, ps.NextOffset)
		}
	}
	// Nothing of the failed batch is in the table: exactly phase 1.
	a.checkInference(t, failed.Location, tables[idx("fail")], manifests["evo"][:1])

	// Phase 3 changes types and adds a nested struct; three records are
	// not JSON.
	produce("evo", 3)
	const evoRecords, evoMalformed = 57, 3
	for _, tb := range tables {
		if tb.stream == "evo" && tb.name != "fail" {
			wait(tb.name, evoRecords, 2*time.Minute)
		}
	}

	// Resume the failed table with mode ADD_NEW_COLUMNS: it goes on from
	// the record it stopped at.
	tables[idx("fail")].options = evo("ADD_NEW_COLUMNS")
	writeMain()
	if out, err := tryTerraform(t, dir, a, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
		// The provider refuses to call a pipeline with a FAILED table
		// started; the agent has the new spec all the same.
		t.Errorf("terraform apply (resume, failed tables %v): %v\n%s", slices.Sorted(maps.Keys(broken)), err, out)
	}
	wait("fail", evoRecords, 2*time.Minute)

	p, err := a.client().GetPipeline(t.Context(), pipeline)
	if err != nil {
		t.Fatal(err)
	}
	reports := map[string]*inferenceReport{}
	for i, tb := range tables {
		if broken[tb.name] {
			continue
		}
		ts := p.Status.Tables[i]
		produced, corrupt := int64(evoRecords), int64(evoMalformed)
		switch {
		case tb.stream == "hints":
			produced, corrupt = 36, 0
		case tb.rescue == "":
			// Without a rescue column, the 18 records of phase 3 with a
			// value that does not fit are corrupt too.
			corrupt += 18
		}
		if ts.Rows != produced || ts.CorruptRecords != corrupt {
			t.Errorf("table %s: status has %d rows and %d corrupt records, want %d and %d", tb.name, ts.Rows, ts.CorruptRecords, produced, corrupt)
		}
		r := a.checkInference(t, ts.Location, tb, manifests[tb.stream])
		reports[tb.name] = r
		// The status shows the log's schema.
		var names []string
		for _, c := range ts.Columns {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, r.names()) {
			t.Errorf("table %s: status columns %v, the log's %v", tb.name, names, r.names())
		}
		for _, c := range ts.Columns {
			if want := sparkType(r.column(c.Name)); want != "" && c.Type != want {
				t.Errorf("table %s: status says column %q is %s, the log %s", tb.name, c.Name, c.Type, want)
			}
		}
	}

	checkHistories(t, reports)

	// Terraform users see the inferred columns too.
	tableColumns(t, dir, a, reports)

	planNoChanges(t, dir, a)
	destroy(t, dir, a)
}

// checkHistories asserts what each mode of TestSchemaInferenceThroughTerraform
// must have done to its table's schema, on the tables in reports (those
// that did not fail).
func checkHistories(t *testing.T, reports map[string]*inferenceReport) {
	t.Helper()
	evolved := [][]string{{"score", "user.email"}, {"extra", "extra.deep", "extra.deep.x"}}
	for _, name := range []string{"add", "widen", "alias"} {
		if r := reports[name]; r != nil && fmt.Sprint(r.additions()) != fmt.Sprint(evolved) {
			t.Errorf("table %s: schema changes added %v, want %v", name, r.additions(), evolved)
		}
	}
	// The failed table resumes after phase 3 is in: one batch may add
	// the columns of both.
	if r := reports["fail"]; r != nil {
		got := slices.Sorted(slices.Values(slices.Concat(r.additions()...)))
		if want := slices.Sorted(slices.Values(slices.Concat(evolved...))); !slices.Equal(got, want) {
			t.Errorf("table fail: schema changes added %v, want %v", r.additions(), want)
		}
	}
	for _, name := range []string{"rescue", "none", "none_rescued"} {
		if r := reports[name]; r != nil && len(r.additions()) != 0 {
			t.Errorf("table %s: the schema changed (added %v); its mode never changes it", name, r.additions())
		}
	}
	if r := reports["none"]; r != nil && r.column(spec.RescuedDataColumn) != nil {
		t.Errorf("table none: has a %s column; NONE rescues nothing unless rescued_data_column is set", spec.RescuedDataColumn)
	}
	for _, name := range []string{"add", "rescue", "fail", "none", "none_rescued", "alias"} {
		for _, col := range []string{"amount", "ratio"} {
			if r := reports[name]; r != nil && r.column(col) != "long" {
				t.Errorf("table %s: column %s is %v, want it kept long", name, col, r.column(col))
			}
		}
	}
	// Type widening: amount holds integers beyond BIGINT and ratio
	// fractions now (Delta widens BIGINT to DECIMAL(20 + k, s), k >= s),
	// and the log says how they got there.
	if w := reports["widen"]; w != nil {
		for _, col := range []string{"amount", "ratio"} {
			if typ, _ := w.column(col).(string); !strings.HasPrefix(typ, "decimal") {
				t.Errorf("table widen: column %s is %v, want it widened to a decimal", col, w.column(col))
			}
			if !strings.Contains(fmt.Sprint(w.Metadata[col]["delta.typeChanges"]), "long") {
				t.Errorf("table widen: column %s has no delta.typeChanges from long: %v", col, w.Metadata[col])
			}
		}
		for _, list := range []string{"readerFeatures", "writerFeatures"} {
			if !strings.Contains(fmt.Sprint(w.Protocol[list]), "typeWidening") {
				t.Errorf("table widen: protocol %s %v lack typeWidening", list, w.Protocol[list])
			}
		}
	}
	if r := reports["add"]; r != nil && fmt.Sprint(r.Protocol["minReaderVersion"], r.Protocol["minWriterVersion"]) != "1 2" {
		t.Errorf("table add: protocol %v, want 1/2 (no feature needed)", r.Protocol)
	}

	// Hints fix types inference would not give (string inference is off)
	// and declare user.dob before any record has it; any key is a column.
	h := reports["hints"]
	if h == nil {
		return
	}
	wantHints := map[string]string{
		"id": "long", "ts": "timestamp", "seen": "string", "tags": "[string]", "attrs": "[string integer]",
		"user": "map[dob:date name:string]", "first name": "string", "a.b": "long", "(cost)": "double",
	}
	for name, typ := range wantHints {
		if got := fmt.Sprint(h.column(name)); got != typ {
			t.Errorf("table hints: column %q is %s, want %s", name, got, typ)
		}
	}
	if got := h.additions(); fmt.Sprint(got) != "[[(cost)]]" {
		t.Errorf("table hints: schema changes added %v, want [[(cost)]]", got)
	}
	if h.Configuration["delta.columnMapping.mode"] != "name" {
		t.Errorf("table hints: configuration %v, want delta.columnMapping.mode = name", h.Configuration)
	}
	if r, w := h.Protocol["minReaderVersion"].(float64), h.Protocol["minWriterVersion"].(float64); r < 2 || w < 5 {
		t.Errorf("table hints: protocol %v, want column mapping's reader 2 / writer 5 at least", h.Protocol)
	}
}

// sparkType returns the status type of a Delta log leaf type ("long" ->
// "BIGINT"), or "" for a nested type.
func sparkType(t any) string {
	s, ok := t.(string)
	if !ok {
		return ""
	}
	switch s {
	case "long":
		return "BIGINT"
	case "integer":
		return "INT"
	}
	return strings.ToUpper(s)
}

// tableColumns reads every table's columns through the tributary_table
// data source and compares them with the log's.
func tableColumns(t *testing.T, dir string, a *agent, reports map[string]*inferenceReport) {
	t.Helper()
	var blocks strings.Builder
	for name := range reports {
		fmt.Fprintf(&blocks, `
data "tributary_table" %q {
  pipeline_name     = tributary_pipeline.this.name
  destination_table = %q
}

output %q {
  value = [for c in data.tributary_table.%s.columns : { name = c.name, type = c.type }]
}
`, name, name, name, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "tables.tf"), []byte(blocks.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	apply(t, dir, a)
	var outputs map[string]struct {
		Value []struct{ Name, Type string } `json:"value"`
	}
	if err := json.Unmarshal([]byte(terraform(t, dir, a, "output", "-json")), &outputs); err != nil {
		t.Fatal(err)
	}
	for name, r := range reports {
		var names []string
		for _, c := range outputs[name].Value {
			names = append(names, c.Name)
			if want := sparkType(r.column(c.Name)); want != "" && c.Type != want {
				t.Errorf("data.tributary_table.%s: column %q is %s, the log says %s", name, c.Name, c.Type, want)
			}
		}
		if !slices.Equal(names, r.names()) {
			t.Errorf("data.tributary_table.%s: columns %v, the log's %v", name, names, r.names())
		}
	}
}

// checkInference runs inference_records.py check on a table and fails the
// test, naming the table, on any problem it reports.
func (a *agent) checkInference(t *testing.T, location string, tb inferenceTable, manifests []string) *inferenceReport {
	t.Helper()
	args := []string{filepath.Join("testdata", "inference_records.py"), "check", location,
		"--stream", tb.stream, "--mode", tb.mode, "--rescue", tb.rescue}
	for _, m := range manifests {
		args = append(args, "--manifest", m)
	}
	out, err := exec.Command(env.python, args...).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("inference_records.py check %s: %v\n%s%s", tb.name, err, out, stderr)
	}
	var r inferenceReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("inference_records.py check %s: %v\n%s", tb.name, err, out)
	}
	for _, p := range r.Problems {
		t.Errorf("table %s: %s", tb.name, p)
	}
	for _, reader := range []string{"delta-rs", "duckdb", "pyarrow"} {
		rd, ok := r.Readers[reader]
		if !ok {
			t.Errorf("table %s: no result from %s", tb.name, reader)
		}
		for _, p := range rd.Problems {
			t.Errorf("table %s, read by %s: %s", tb.name, reader, p)
		}
		if rd.Refused != "" {
			t.Logf("table %s: %s does not read it: %s", tb.name, reader, rd.Refused)
		}
	}
	t.Logf("table %s: columns %v, schema changes %v", tb.name, r.Columns, r.additions())
	return &r
}

// waitTable polls the pipeline until table idx has committed want rows
// and returns its status and true. Unlike waitRows, another table of the
// pipeline may be FAILED meanwhile. This one failing, having more rows than
// want, or not getting there within timeout is reported with t.Errorf and
// returns false, so that the test goes on with the other tables.
func (a *agent) waitTable(pipeline string, idx int, want int64, timeout time.Duration) (spec.TableStatus, bool) {
	a.t.Helper()
	last, done := a.pollTable(pipeline, idx, timeout, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return ts.State == spec.StateFailed || ts.Rows >= want
	})
	switch {
	case !done:
		a.t.Errorf("table %d has %d rows after %s, want %d; status %+v\nagent log:\n%s", idx, last.Rows, timeout, want, last, a.log())
	case last.State == spec.StateFailed:
		a.t.Errorf("table %s failed: %s", last.DestinationTable, last.LastError)
	case last.Rows > want:
		a.t.Errorf("table %s has %d rows, want %d", last.DestinationTable, last.Rows, want)
	default:
		return last, true
	}
	return last, false
}

// waitTableFailed polls the pipeline until table idx is FAILED and
// returns its status and true; after timeout it reports the table with
// t.Errorf and returns false.
func (a *agent) waitTableFailed(pipeline string, idx int, timeout time.Duration) (spec.TableStatus, bool) {
	a.t.Helper()
	last, failed := a.pollTable(pipeline, idx, timeout, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return ts.State == spec.StateFailed
	})
	if !failed {
		a.t.Errorf("table %d is not FAILED after %s; status %+v\nagent log:\n%s", idx, timeout, last, a.log())
	}
	return last, failed
}
