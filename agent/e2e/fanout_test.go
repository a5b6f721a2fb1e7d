//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testlog"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// byEventType is the fanout_by of the tests, the reference's own example:
// the event_type field of the JSON value.
const byEventType = "cast(value as string):event_type::string"

// routedTables are the tables fanout_records.py's valid records route to.
var routedTables = []string{"click", "logout", "purchase", "signup", "view"}

// fanoutRecord is a line of a manifest of fanout_records.py.
type fanoutRecord struct {
	ID        int64  `json:"id"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
	// Table is the table the record must land in; nil for an invalid
	// route, which lands in _fanout_errors under DEAD_LETTER.
	Table *string `json:"table"`
	Kind  string  `json:"kind"`
	// Type is the event_type the value holds; nil when it has none.
	Type *string `json:"type"`
}

// fanoutTopic is a topic fanout_records.py produces to, in phases, each
// with a manifest of its own.
type fanoutTopic struct {
	name, dir string
	// manifests and phases are the manifest file and records of each
	// phase, in order.
	manifests []string
	phases    [][]fanoutRecord
}

// start starts fanout_records.py producing a new phase to the topic with
// args (--first, --count, ...) and returns a function that waits until it
// has produced and returns the phase's records.
func (f *fanoutTopic) start(t *testing.T, args ...string) func() []fanoutRecord {
	t.Helper()
	manifest := filepath.Join(f.dir, fmt.Sprintf("%s.%d.jsonl", f.name, len(f.manifests)))
	f.manifests = append(f.manifests, manifest)
	f.phases = append(f.phases, nil)
	phase := len(f.phases) - 1
	cmd := exec.Command(env.python, append([]string{filepath.Join("testdata", "fanout_records.py"), "produce",
		"--bootstrap", env.bootstrap, "--topic", f.name, "--manifest", manifest}, args...)...)
	out := &testlog.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() []fanoutRecord {
		t.Helper()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("fanout_records.py produce %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Log(strings.TrimSpace(out.String()))
		fh, err := os.Open(manifest)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var r fanoutRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("manifest %s: %v", manifest, err)
			}
			f.phases[phase] = append(f.phases[phase], r)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("manifest %s: %v", manifest, err)
		}
		return f.phases[phase]
	}
}

// produce produces a phase like start and waits for it.
func (f *fanoutTopic) produce(t *testing.T, args ...string) []fanoutRecord {
	t.Helper()
	return f.start(t, args...)()
}

// rows returns how many rows each table must hold after the first n
// phases: the invalid routes counted for _fanout_errors.
func (f *fanoutTopic) rows(n int) map[string]int64 {
	want := map[string]int64{}
	for _, phase := range f.phases[:n] {
		for _, r := range phase {
			if r.Table == nil {
				want[spec.FanoutErrorsTable]++
			} else {
				want[*r.Table]++
			}
		}
	}
	return want
}

// check runs fanout_records.py check on the tables of schema with the
// manifests of the first n phases, and more arguments, reporting a
// failure with t.Errorf.
func (f *fanoutTopic) check(t *testing.T, a *agent, schema string, n int, more ...string) {
	t.Helper()
	args := []string{filepath.Join("testdata", "fanout_records.py"), "check", filepath.Join(a.warehouse, "main", schema)}
	for _, m := range f.manifests[:n] {
		args = append(args, "--manifest", m)
	}
	out, err := exec.Command(env.python, append(args, more...)...).CombinedOutput()
	if err != nil {
		t.Errorf("fanout_records.py check %s: %v\n%s", schema, err, out)
		return
	}
	t.Logf("fanout_records.py check %s:\n%s", schema, out)
}

// waitFanout polls fanout schema name until cond holds and returns what it
// saw; it fails the test, saying what was awaited, when the fanout schema
// fails and cond does not hold, or after timeout.
func (a *agent) waitFanout(name, what string, timeout time.Duration, cond func(*spec.FanoutSchemaResponse) bool) *spec.FanoutSchemaResponse {
	a.t.Helper()
	return awaitObject(a, "fanout schema "+name, what, timeout, a.client().GetFanoutSchema, name, cond,
		func(f *spec.FanoutSchemaResponse) (string, any) { return f.Status.State, f.Status })
}

// waitFanoutRows waits until fanout schema name has created exactly the
// tables of want and each has committed at least its rows, and fails the
// test if one has more.
func (a *agent) waitFanoutRows(name string, want map[string]int64, timeout time.Duration) *spec.FanoutSchemaResponse {
	a.t.Helper()
	f := a.waitFanout(name, fmt.Sprintf("holding the rows %v", want), timeout, func(f *spec.FanoutSchemaResponse) bool {
		got := fanoutRows(f)
		for table, n := range want {
			if got[table] < n {
				return false
			}
		}
		return len(got) == len(want)
	})
	if got := fanoutRows(f); !maps.Equal(got, want) {
		a.t.Fatalf("fanout schema %s: tables hold %v rows, want %v", name, got, want)
	}
	return f
}

// fanoutRows returns the rows each table of f reports.
func fanoutRows(f *spec.FanoutSchemaResponse) map[string]int64 {
	got := map[string]int64{}
	for _, ts := range f.Status.Tables {
		got[ts.DestinationTable] = ts.Rows
	}
	return got
}

// stateTables returns the tables attribute of resource address in the
// Terraform state of dir, as `terraform show -json` gives it.
func stateTables(t *testing.T, dir string, a *agent, address string) []string {
	t.Helper()
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	out := terraform(t, dir, a, "show", "-json", "-no-color")
	if err := json.Unmarshal([]byte(out), &state); err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	for _, r := range state.Values.RootModule.Resources {
		if r.Address != address {
			continue
		}
		list, ok := r.Values["tables"].([]any)
		if !ok {
			t.Fatalf("%s: tables is %#v, want a list of table names", address, r.Values["tables"])
		}
		var names []string
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				t.Fatalf("%s: tables holds %#v, want table names", address, v)
			}
			names = append(names, s)
		}
		return names
	}
	t.Fatalf("no %s in the state:\n%s", address, out)
	return nil
}

// fanoutOptions returns the rest of a fanout_options: the on_invalid_route
// ("" for the default) and a JSON transform of the value, with a
// json_options schema when schema is not "".
func fanoutOptions(onInvalid, schema string) string {
	var b strings.Builder
	if onInvalid != "" {
		fmt.Fprintf(&b, "    on_invalid_route = %q\n", onInvalid)
	}
	b.WriteString(`    transforms = [{ input_column = "value"`)
	if schema != "" {
		fmt.Fprintf(&b, ", json_options = { schema = %q }", schema)
	}
	b.WriteString(" }]")
	return b.String()
}

// TestFanoutThroughTerraform applies, with the real Terraform CLI, a
// pipeline without tables and two fanout schemas that route the records of
// one topic of four partitions by their event_type (byEventType) under
// DEAD_LETTER: "events" with the JSON transform of the value alone (a
// VARIANT column) into main.events, "typed" with a json_options schema
// into main.typed. Confluent's Python client produces events of five types
// (some capitalised: tables are lowercase) and, among them, every kind of
// invalid route: no event_type, a JSON null, malformed JSON, "123", "a.b"
// and "has space". Each fanout schema creates the five tables and
// _fanout_errors, and delta-rs, DuckDB and pyarrow read in each exactly its
// records (by key, whose partition and offset the producer's delivery
// reports give), with their values, and in _fanout_errors the invalid
// routes with their raw value, metadata and error. After a refresh the
// tables attribute lists the tables. Then more records are produced while
// the agent is killed with SIGKILL three times and restarted: afterwards no
// table has lost or duplicated a record.
func TestFanoutThroughTerraform(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	topic := &fanoutTopic{name: uniqueName("e2e-fanout"), dir: dir}
	const invalid = "missing,null,malformed,digits,dotted,space"
	// The first phase is in the topic before the fanout schemas start: two
	// invalid routes of each kind among 300 records.
	topic.produce(t, "--first", "0", "--count", "300", "--invalid", invalid, "--invalid-every", "25")
	pipeline := uniqueName("e2e-fanout")
	tfPipeline{connection: pipeline, pipeline: pipeline,
		after: tfFanout("events", "events", topic.name, byEventType, fanoutOptions(spec.OnInvalidRouteDeadLetter, "")) +
			tfFanout("typed", "typed", topic.name, byEventType,
				fanoutOptions(spec.OnInvalidRouteDeadLetter, "id BIGINT, event_type STRING, n INT"))}.write(t, dir)
	apply(t, dir, a)
	for _, name := range []string{"events", "typed"} {
		a.waitFanoutRows(name, topic.rows(1), 2*time.Minute)
	}
	topic.check(t, a, "events", 1)
	topic.check(t, a, "typed", 1, "--typed")

	terraform(t, dir, a, "apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color")
	want := append(slices.Clone(routedTables), spec.FanoutErrorsTable)
	if got := stateTables(t, dir, a, "tributary_fanout_schema.events"); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("tributary_fanout_schema.events: tables %v after a refresh, want %v", got, want)
	}

	// The second phase, produced over about five seconds, while the agent
	// is killed three times.
	produced := topic.start(t, "--first", "100000", "--count", "20000", "--rate", "4000", "--invalid", invalid,
		"--invalid-every", "500")
	for i := 0; i < 3; i++ {
		time.Sleep(time.Duration(500+rand.IntN(2000)) * time.Millisecond)
		a.kill()
		t.Logf("kill %d: agent killed", i+1)
		a.start()
	}
	produced()
	for _, name := range []string{"events", "typed"} {
		a.waitFanoutRows(name, topic.rows(2), 3*time.Minute)
	}
	topic.check(t, a, "events", 2)
	topic.check(t, a, "typed", 2, "--typed")
	planNoChanges(t, dir, a)
	destroy(t, dir, a)
}

// TestFanoutInvalidRoutesFail applies four fanout schemas with the default
// on_invalid_route (FAIL), each reading a topic of one partition into its
// own schema. Each topic gets 50 events, committed to their five tables;
// then one invalid route (no event_type, "123", "a.b", "has space"), then
// 30 more events. Each fanout schema stops FAILED with an error that names
// the record (topic[partition]@offset) and, for a name, the name, and its
// tables hold exactly the first 50 events: nothing past the invalid record.
// Applied again with on_invalid_route = "DEAD_LETTER", each resumes at the
// invalid record: it lands in _fanout_errors and the 30 events in their
// tables, each once.
func TestFanoutInvalidRoutesFail(t *testing.T) {
	t.Parallel()
	kinds := []string{"missing", "digits", "dotted", "space"}
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	pipeline := uniqueName("e2e-fanout-fail")
	topics := map[string]*fanoutTopic{}
	for _, kind := range kinds {
		topics[kind] = &fanoutTopic{name: uniqueName("e2e-fanout-" + kind), dir: dir}
		topics[kind].produce(t, "--first", "0", "--count", "50", "--partitions", "1")
	}
	write := func(onInvalid string) {
		var b strings.Builder
		for _, kind := range kinds {
			b.WriteString(tfFanout(kind, "fail_"+kind, topics[kind].name, byEventType, fanoutOptions(onInvalid, "")))
		}
		tfPipeline{connection: pipeline, pipeline: pipeline, after: b.String()}.write(t, dir)
	}
	write("")
	apply(t, dir, a)
	for _, kind := range kinds {
		a.waitFanoutRows(kind, topics[kind].rows(1), 2*time.Minute)
	}

	for _, kind := range kinds {
		bad := topics[kind].produce(t, "--first", "1000", "--count", "1", "--partitions", "1", "--invalid", kind, "--invalid-every", "1")[0]
		topics[kind].produce(t, "--first", "2000", "--count", "30", "--partitions", "1")
		at := fmt.Sprintf("%s[%d]@%d", bad.Topic, bad.Partition, bad.Offset)
		f := a.waitFanout(kind, "FAILED", time.Minute, func(f *spec.FanoutSchemaResponse) bool {
			return f.Status.State == spec.StateFailed
		})
		if !strings.Contains(f.Status.LastError, at) {
			t.Errorf("fanout schema %s: error %q does not name the record %s", kind, f.Status.LastError, at)
		}
		if bad.Type != nil && !strings.Contains(f.Status.LastError, *bad.Type) {
			t.Errorf("fanout schema %s: error %q does not name the route %q", kind, f.Status.LastError, *bad.Type)
		}
		t.Logf("fanout schema %s: %s", kind, f.Status.LastError)
	}
	// A flush interval later, still nothing past the invalid records.
	time.Sleep(2 * time.Second)
	for _, kind := range kinds {
		topics[kind].check(t, a, "fail_"+kind, 1)
	}

	write(spec.OnInvalidRouteDeadLetter)
	apply(t, dir, a)
	for _, kind := range kinds {
		a.waitFanoutRows(kind, topics[kind].rows(3), 2*time.Minute)
		topics[kind].check(t, a, "fail_"+kind, 3)
	}
	planNoChanges(t, dir, a)
	destroy(t, dir, a)
}
