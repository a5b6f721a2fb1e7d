//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// testRegistry is the test schema registry (tools/registry.sh): an HTTPS
// URL, the API key and secret of its basic auth, and the CA that signed its
// certificate.
type testRegistry struct {
	url, key, secret string
	// caFile is the CA's PEM file, caPEM its content.
	caFile, caPEM string
}

// registryEnv returns the test schema registry from the settings
// tools/registry.sh prints, skipping the test without one.
func registryEnv(t *testing.T) testRegistry {
	t.Helper()
	r := testRegistry{url: os.Getenv("SCHEMA_REGISTRY_URL"), key: os.Getenv("SCHEMA_REGISTRY_KEY"),
		secret: os.Getenv("SCHEMA_REGISTRY_SECRET"), caFile: os.Getenv("SCHEMA_REGISTRY_CA_FILE")}
	if r.url == "" {
		t.Skip("SCHEMA_REGISTRY_URL is not set: start tools/registry.sh (make test does)")
	}
	if r.caFile != "" {
		pem, err := os.ReadFile(r.caFile)
		if err != nil {
			t.Fatalf("SCHEMA_REGISTRY_CA_FILE: %v", err)
		}
		r.caPEM = string(pem)
	}
	return r
}

// toSpec is the connection's schema_registry block for r.
func (r testRegistry) toSpec() *spec.SchemaRegistry {
	return &spec.SchemaRegistry{URL: r.url, APIKey: r.key, APISecret: r.secret, CAPEM: r.caPEM}
}

// hcl is the connection's schema_registry attribute for r, its secret from
// the variable secretVar.
func (r testRegistry) hcl(secretVar string) string {
	ca := ""
	if r.caFile != "" {
		ca = fmt.Sprintf("\n    ca_pem     = file(%q)", r.caFile)
	}
	return fmt.Sprintf(`  schema_registry = {
    url        = %q
    api_key    = %q
    api_secret = var.%s%s
  }
`, r.url, r.key, secretVar, ca)
}

// schemaTopic is one topic of the schema tests and what was produced to it.
type schemaTopic struct {
	name     string
	format   string // avro or protobuf
	manifest string
}

// produce runs schema_records.py produce for the topic with args.
func (st *schemaTopic) produce(t *testing.T, args ...string) {
	t.Helper()
	r := registryEnv(t)
	base := []string{"produce", "--bootstrap", env.bootstrap, "--topic", st.name, "--manifest", st.manifest,
		"--format", st.format, "--registry", r.url, "--key", r.key, "--secret", r.secret}
	if r.caFile != "" {
		base = append(base, "--registry-ca", r.caFile)
	}
	if st.format == "avro" {
		base = append(base, "--schema", filepath.Join("testdata", "orders.avsc"))
	} else {
		base = append(base, "--desc", filepath.Join("testdata", "orders.desc"))
	}
	python(t, "schema_records.py", append(base, args...)...)
}

// check runs schema_records.py check on the table at location.
func (st *schemaTopic) check(t *testing.T, location string, args ...string) {
	t.Helper()
	out := python(t, "schema_records.py", append([]string{"check", location, "--manifest", st.manifest, "--format", st.format}, args...)...)
	t.Logf("%s: %s", st.name, out)
}

// TestAvroAndProtobufThroughTerraform applies, with the real Terraform CLI,
// a pipeline with four tables: Avro from the schema registry, Avro from an
// .avsc file, Protobuf from a .desc file and Protobuf from the registry, on
// a connection whose registry needs the test registry's API key. Records
// come from Confluent's Python serializers (registry framing, schemas
// registered by the client) and from fastavro and protobuf (plain), each
// topic with a few corrupt records. Then the Avro subject gets a version 2
// with an added optional field, and records of both versions follow. Each
// table is read back by delta-rs and pyarrow: one row per record, values as
// produced, corrupt bytes in _corrupt_record, and the Avro registry table
// with the new column, null in the rows before it.
func TestAvroAndProtobufThroughTerraform(t *testing.T) {
	t.Parallel()
	reg := registryEnv(t)
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	for _, f := range []string{"orders.avsc", "orders.desc"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	topics := map[string]*schemaTopic{}
	for _, k := range []struct{ table, format string }{
		{"avro_registry", "avro"}, {"avro_file", "avro"}, {"protobuf_file", "protobuf"}, {"protobuf_registry", "protobuf"},
	} {
		topics[k.table] = &schemaTopic{name: uniqueName("e2e-" + strings.ReplaceAll(k.table, "_", "-")), format: k.format,
			manifest: filepath.Join(dir, k.table+".jsonl")}
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topics[k.table].name, "--count", "0", "--partitions", "1")
	}
	// The registry subjects exist before the tables start: their latest
	// version sets the columns.
	topics["avro_registry"].produce(t, "--framing", "registry", "--count", "50")
	topics["protobuf_registry"].produce(t, "--framing", "registry", "--count", "50")

	pipeline := uniqueName("e2e-schemas")
	table := func(name, transformer string) string {
		return tfTable(name, topics[name].name, "value_transformer = "+transformer, kafkaMetadata)
	}
	body := fmt.Sprint(
		table("avro_registry", `{
          format       = "AVRO"
          avro_options = { schema_registry = { confluent_options = { subject = "`+topics["avro_registry"].name+`-value" } } }
        }`),
		table("avro_file", `{
          format       = "AVRO"
          avro_options = { schema_file_path = "orders.avsc" }
        }`),
		table("protobuf_file", `{
          format           = "PROTOBUF"
          protobuf_options = { desc_file_path = "orders.desc", message_name = "shop.v1.Order" }
        }`),
		table("protobuf_registry", `{
          format           = "PROTOBUF"
          protobuf_options = {
            schema_registry = {
              confluent_options     = { subject = "`+topics["protobuf_registry"].name+`-value" }
              protobuf_message_name = "Order"
            }
          }
        }`))
	tfPipeline{connection: pipeline, pipeline: pipeline, body: body, before: `
variable "registry_secret" {
  type      = string
  sensitive = true
}
`, connectionBody: reg.hcl("registry_secret")}.write(t, dir)
	writeVar(t, dir, "registry_secret", reg.secret)
	apply(t, dir, a)

	// Bad magic byte, an id the registry does not know, a truncated
	// header; for the plain tables, bytes that are no Avro datum or
	// Protobuf message of the schema.
	registryCorrupt := []string{"--corrupt", "7b7d", "--corrupt", "000000fff0020406", "--corrupt", "0000"}
	topics["avro_registry"].produce(t, append([]string{"--framing", "registry", "--from", "50", "--count", "50"}, registryCorrupt...)...)
	topics["protobuf_registry"].produce(t, append([]string{"--framing", "registry", "--from", "50", "--count", "50"}, registryCorrupt...)...)
	topics["avro_file"].produce(t, "--framing", "plain", "--count", "100", "--corrupt", "ff", "--corrupt", "02")
	topics["protobuf_file"].produce(t, "--framing", "plain", "--count", "100", "--corrupt", "0a", "--corrupt", "ffffffffffffffffffff01")

	// Version 2 of the Avro subject, with an added optional field:
	// registered by the serializer with its first record.
	topics["avro_registry"].produce(t, "--framing", "registry", "--schema", filepath.Join("testdata", "orders_v2.avsc"),
		"--version", "2", "--from", "100", "--count", "40")
	// Records of version 1 after version 2: resolved to the new columns.
	topics["avro_registry"].produce(t, "--framing", "registry", "--from", "140", "--count", "10")

	want := map[string]int64{"avro_registry": 153, "avro_file": 102, "protobuf_file": 102, "protobuf_registry": 103}
	for i, name := range []string{"avro_registry", "avro_file", "protobuf_file", "protobuf_registry"} {
		st := a.waitRows(pipeline, i, want[name], 2*time.Minute)
		corrupt := int64(3)
		if name == "avro_file" || name == "protobuf_file" {
			corrupt = 2
		}
		if st.CorruptRecords != corrupt {
			t.Errorf("%s: status reports %d corrupt records, want %d", name, st.CorruptRecords, corrupt)
		}
		var args []string
		if name == "avro_registry" {
			args = []string{"--columns", "coupon"}
		}
		topics[name].check(t, st.Location, args...)
	}

	// The corrupt records are counted in the metrics too.
	metrics := a.metrics()
	for name, corrupt := range map[string]int{"avro_registry": 3, "avro_file": 2, "protobuf_file": 2, "protobuf_registry": 3} {
		line := fmt.Sprintf(`tributary_table_corrupt_records_total{pipeline=%q,table="main.e2e.%s"} %d`, pipeline, name, corrupt)
		if !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %s:\n%s", line, metrics)
		}
	}

	// Nothing to change, and nothing that moves with ingestion or the
	// secret the agent never returns makes a diff.
	planNoChanges(t, dir, a)
	destroy(t, dir, a)
}

// metrics returns the agent's /metrics page.
func (a *agent) metrics() string {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.endpoint+"/metrics", nil)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		a.t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

// TestFailFastStopsAtTheBadRecord runs an Avro table in FAILFAST mode: a
// corrupt record fails the table with an error naming its topic, partition
// and offset, and nothing from it on is committed; switching parse_mode to
// PERMISSIVE resumes at the bad record, which lands in _corrupt_record, and
// every record is in the table once.
func TestFailFastStopsAtTheBadRecord(t *testing.T) {
	t.Parallel()
	reg := registryEnv(t)
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	topic := &schemaTopic{name: uniqueName("e2e-failfast"), format: "avro", manifest: filepath.Join(dir, "records.jsonl")}
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic.name, "--count", "0", "--partitions", "1")
	topic.produce(t, "--framing", "registry", "--count", "20", "--corrupt", "00000000")
	topic.produce(t, "--framing", "registry", "--from", "20", "--count", "20")

	c := a.client()
	ctx := t.Context()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "local", BootstrapServers: []string{env.bootstrap},
		SchemaRegistry: reg.toSpec()}); err != nil {
		t.Fatal(err)
	}
	p := &spec.Pipeline{Name: "failfast", Connection: "local", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "1s",
		Tables: []spec.Table{{
			DestinationTable: "orders",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic.name}, StartingOffset: spec.StartingOffsetEarliest,
				ValueTransformer: &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
					SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: topic.name + "-value"}},
					ParseMode:      spec.ParseModeFailFast,
				}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	st := a.waitFailed("failfast", fmt.Sprintf("%s[0]@20", topic.name), time.Minute)
	if ts := st.Tables[0]; ts.Rows > 20 || !strings.Contains(ts.LastError, "FAILFAST") {
		t.Fatalf("table after the bad record: %d rows, last_error %q; want at most the 20 records before it and an error naming FAILFAST",
			ts.Rows, ts.LastError)
	}
	for _, ps := range st.Tables[0].Partitions {
		if ps.NextOffset > 20 {
			t.Fatalf("the committed offset %d is past the bad record at 20", ps.NextOffset)
		}
	}

	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.AvroOptions.ParseMode = spec.ParseModePermissive
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	ts := a.waitRows("failfast", 0, 41, time.Minute)
	if ts.CorruptRecords != 1 {
		t.Errorf("status reports %d corrupt records, want 1", ts.CorruptRecords)
	}
	topic.check(t, ts.Location)
}
