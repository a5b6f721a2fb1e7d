package provider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fanoutFixture is the configuration of TestAccFanoutSchema: a connection
// to the test broker, a pipeline without tables, and a fanout schema in it
// routing topic by each JSON value's type and parsing the value with the
// schema in schemaFile.
type fanoutFixture struct {
	agent                          *testAgent
	conn, pipeline, topic          string
	fanout, schema, onInvalidRoute string
	schemaFile                     string
}

func (f *fanoutFixture) config() string {
	return carrierHCL(f.agent, f.conn, f.pipeline) + runningFanoutHCL(f.fanout, f.schema, []string{f.topic}, fmt.Sprintf(`
    fanout_by        = "cast(value AS STRING):type::string"
    on_invalid_route = %s
    transforms = [{
      input_column = "value"
      json_options = { schema_file_path = %s }
    }]`, hclString(f.onInvalidRoute), hclString(f.schemaFile)), `
  table_configuration = {
    source_metadata_column = "_kafka"
  }
  timeouts {
    create = "2m"
  }`)
}

// carrierHCL renders the provider of agent a, a connection "c" named conn
// to the test broker and a pipeline "p" named pipeline without tables,
// flushing every second, to carry fanout schemas.
func carrierHCL(a *testAgent, conn, pipeline string) string {
	return a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":            hclString(pipeline),
		"connection_name": "tributary_connection.c.name",
		"flush_interval":  `"1s"`,
	})
}

// runningFanoutHCL renders a tributary_fanout_schema "f" named name in
// pipeline "p", routing to the destination schema main.<schema> the
// records of topics from the earliest offset; options is the body of
// fanout_options and extra any more attributes.
func runningFanoutHCL(name, schema string, topics []string, options, extra string) string {
	return fanoutResourceHCL("f", name, schema, topics, "\n  fanout_options = {"+options+"\n  }"+extra)
}

// fanoutResourceHCL renders a tributary_fanout_schema res like
// runningFanoutHCL, with the attributes more after its connector_options.
func fanoutResourceHCL(res, name, schema string, topics []string, more string) string {
	quoted := make([]string, len(topics))
	for i, t := range topics {
		quoted[i] = hclString(t)
	}
	return fmt.Sprintf(`
resource "tributary_fanout_schema" %s {
  name                = %s
  pipeline_name       = tributary_pipeline.p.name
  destination_catalog = "main"
  destination_schema  = %s
  connector_options = {
    kafka_options = {
      topics          = [%s]
      starting_offset = "earliest"
    }
  }%s
}
`, hclString(res), hclString(name), hclString(schema), strings.Join(quoted, ", "), more)
}

// waitFanoutTables waits until the agent reports at least n tables of the
// named fanout schema.
func (a *testAgent) waitFanoutTables(t *testing.T, name string, n int) {
	t.Helper()
	waitUntil(t, "fanout schema "+name, fmt.Sprintf("create %d tables", n),
		func(ctx context.Context) (*spec.FanoutSchemaResponse, error) {
			return a.Client.GetFanoutSchema(ctx, name)
		},
		func(got *spec.FanoutSchemaResponse) bool { return len(got.Status.Tables) >= n })
}

// TestAccFanoutSchema creates a fanout schema in a pipeline without
// tables, reads the tables it routes to, imports it, updates it, shows
// drift and a deletion behind Terraform's back, and destroys it.
func TestAccFanoutSchema(t *testing.T) {
	a := sharedAgent(t)
	ctx := context.Background()
	f := &fanoutFixture{
		agent: a, conn: uniqueName("conn"), pipeline: uniqueName("pipe"), topic: uniqueName("topic"),
		fanout: uniqueName("fan"), schema: uniqueName("routed"), onInvalidRoute: spec.OnInvalidRouteFail,
		schemaFile: filepath.Join(t.TempDir(), "events.ddl"),
	}
	writeSchema := func(ddl string) {
		if err := os.WriteFile(f.schemaFile, []byte(ddl), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	schemaV1 := "type STRING, id BIGINT"
	schemaV2 := schemaV1 + ", note STRING"
	writeSchema(schemaV1)
	const sha = "fanout_options.transforms.0.json_options.schema_file_sha256"
	createTopic(t, f.topic, 1)
	produce(t, f.topic, `{"type":"Click","id":1}`, `{"type":"view","id":2}`, `{"type":"click","id":3}`)
	const res = "tributary_fanout_schema.f"
	getFanout := func(ctx context.Context, n string) error { _, err := a.Client.GetFanoutSchema(ctx, n); return err }
	updated := *f
	updated.onInvalidRoute = spec.OnInvalidRouteDeadLetter

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("fanout schema", getFanout, f.fanout),
		Steps: []resource.TestStep{
			{
				Config: f.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "id", f.fanout),
					resource.TestCheckResourceAttr(res, "fanout_options.on_invalid_route", spec.OnInvalidRouteFail),
					resource.TestCheckResourceAttr(res, "fanout_options.transforms.0.format", spec.FormatJSON),
					resource.TestCheckResourceAttr(res, "connector_options.kafka_options.isolation_level", spec.DefaultIsolationLevel),
					resource.TestCheckResourceAttr(res, sha, sha256Hex(schemaV1)),
				),
			},
			{
				// A refresh reads the tables routed to so far.
				PreConfig:    func() { a.waitFanoutTables(t, f.fanout, 2) },
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "tables.#", "2"),
					resource.TestCheckResourceAttr(res, "tables.0", "click"),
					resource.TestCheckResourceAttr(res, "tables.1", "view"),
				),
			},
			importStep(res, f.fanout, "timeouts"),
			{
				Config:           updated.config(),
				ConfigPlanChecks: expectUpdate(res),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "fanout_options.on_invalid_route", spec.OnInvalidRouteDeadLetter),
					resource.TestCheckResourceAttr(res, "tables.#", "2"),
				),
			},
			{
				// Editing the schema file, and nothing else, is an update.
				PreConfig:        func() { writeSchema(schemaV2) },
				Config:           updated.config(),
				ConfigPlanChecks: expectUpdate(res),
				Check:            resource.TestCheckResourceAttr(res, sha, sha256Hex(schemaV2)),
			},
			// Drift: a change made through the API shows in the plan.
			planDiffStep(func() {
				got, err := a.Client.GetFanoutSchema(ctx, f.fanout)
				if err != nil {
					t.Fatalf("reading the fanout schema: %v", err)
				}
				got.Spec.FanoutOptions.OnInvalidRoute = spec.OnInvalidRouteFail
				if _, err := a.Client.PutFanoutSchema(ctx, &got.Spec); err != nil {
					t.Fatalf("changing the fanout schema behind Terraform's back: %v", err)
				}
			}, updated.config()),
			{
				// Apply restores the configuration, and then plans nothing.
				Config: updated.config(),
				Check:  resource.TestCheckResourceAttr(res, "fanout_options.on_invalid_route", spec.OnInvalidRouteDeadLetter),
			},
			// A fanout schema deleted on the agent is planned for creation.
			planDiffStep(func() {
				if err := a.Client.DeleteFanoutSchema(ctx, f.fanout); err != nil {
					t.Fatalf("deleting the fanout schema behind Terraform's back: %v", err)
				}
			}, updated.config()),
		},
	})
}

// TestAccFanoutByTopic applies a fanout schema without fanout_by over two
// JSON topics, one with a dot and a dash in its name, and checks that each
// topic's records go to a table named after the topic ('.' and '-' made
// '_'), as Flink names JSON tables after their topic. A second fanout
// schema, without fanout_options at all, routes the same way, keeping its
// raw values; its state has no fanout_options, before and after import.
func TestAccFanoutByTopic(t *testing.T) {
	a := sharedAgent(t)
	conn, pipe, fan := uniqueName("conn"), uniqueName("pipe"), uniqueName("fan")
	orders, clicks := uniqueName("orders")+".v1", uniqueName("app-clicks")
	for _, topic := range []string{orders, clicks} {
		createTopic(t, topic, 1)
	}
	produce(t, orders, `{"id":1}`, `{"id":2}`)
	produce(t, clicks, `{"page":"a"}`)
	raw := uniqueName("fanraw")
	config := carrierHCL(a, conn, pipe) + runningFanoutHCL(fan, uniqueName("bytopic"), []string{orders, clicks}, `
    transforms = [{ input_column = "value" }]`, "") + fanoutResourceHCL("raw", raw, raw, []string{orders, clicks}, "")
	const res = "tributary_fanout_schema.f"
	tableOf := func(topic string) string { return strings.NewReplacer(".", "_", "-", "_").Replace(topic) }
	want := []string{tableOf(clicks), tableOf(orders)}
	slices.Sort(want)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig:    func() { a.waitFanoutTables(t, fan, 2); a.waitFanoutTables(t, raw, 2) },
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "tables.#", "2"),
					resource.TestCheckResourceAttr(res, "tables.0", want[0]),
					resource.TestCheckResourceAttr(res, "tables.1", want[1]),
					resource.TestCheckNoResourceAttr("tributary_fanout_schema.raw", "fanout_options"),
					resource.TestCheckResourceAttr("tributary_fanout_schema.raw", "tables.#", "2"),
					resource.TestCheckResourceAttr("tributary_fanout_schema.raw", "tables.0", want[0]),
					resource.TestCheckResourceAttr("tributary_fanout_schema.raw", "tables.1", want[1]),
				),
			},
			importStep("tributary_fanout_schema.raw", raw, "timeouts"),
		},
	})
}
