package provider_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func connectionHCL(name string, servers ...string) string {
	list := ""
	for i, s := range servers {
		if i > 0 {
			list += ", "
		}
		list += hclString(s)
	}
	return fmt.Sprintf("resource \"tributary_connection\" \"c\" {\n  name = %s\n  bootstrap_servers = [%s]\n}\n", hclString(name), list)
}

// checkGone returns a CheckDestroy that fails while get still finds name.
func checkGone(what string, get func(ctx context.Context, name string) error, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		err := get(context.Background(), name)
		switch {
		case errors.Is(err, client.ErrNotFound):
			return nil
		case err != nil:
			return fmt.Errorf("reading %s %s after destroy: %w", what, name, err)
		}
		return fmt.Errorf("%s %s still exists after destroy", what, name)
	}
}

// importStep imports res by id and checks that the imported state is the
// applied one, but for the attributes ignore.
func importStep(res, id string, ignore ...string) resource.TestStep {
	return resource.TestStep{ResourceName: res, ImportState: true, ImportStateId: id, ImportStateVerify: true, ImportStateVerifyIgnore: ignore}
}

// expectUpdate checks that a step plans to update res in place.
func expectUpdate(res string) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
	}}
}

// planDiffStep runs change (if not nil), a change made behind Terraform's
// back, and checks that config then plans changes.
func planDiffStep(change func(), config string) resource.TestStep {
	return resource.TestStep{PreConfig: change, Config: config, PlanOnly: true, ExpectNonEmptyPlan: true}
}

func TestAccConnection(t *testing.T) {
	a := sharedAgent(t)
	name := uniqueName("conn")
	ctx := context.Background()
	getConn := func(ctx context.Context, n string) error { _, err := a.Client.GetConnection(ctx, n); return err }

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("connection", getConn, name),
		Steps: []resource.TestStep{
			{
				Config: a.providerHCL() + connectionHCL(name, kafkaBootstrap()),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_connection.c", "id", name),
					resource.TestCheckResourceAttr("tributary_connection.c", "name", name),
					resource.TestCheckResourceAttr("tributary_connection.c", "bootstrap_servers.#", "1"),
					resource.TestCheckResourceAttr("tributary_connection.c", "bootstrap_servers.0", kafkaBootstrap()),
				),
			},
			importStep("tributary_connection.c", name),
			{
				Config:           a.providerHCL() + connectionHCL(name, kafkaBootstrap(), "127.0.0.1:1"),
				ConfigPlanChecks: expectUpdate("tributary_connection.c"),
				Check:            resource.TestCheckResourceAttr("tributary_connection.c", "bootstrap_servers.1", "127.0.0.1:1"),
			},
			// Drift: a change made through the API shows in the plan.
			planDiffStep(func() {
				if _, err := a.Client.PutConnection(ctx, &spec.Connection{Name: name, BootstrapServers: []string{"127.0.0.1:2"}}); err != nil {
					t.Fatalf("changing the connection behind Terraform's back: %v", err)
				}
			}, a.providerHCL()+connectionHCL(name, kafkaBootstrap(), "127.0.0.1:1")),
			{
				// Apply restores the configuration; then deleting it on the
				// agent makes Terraform plan to create it again.
				Config: a.providerHCL() + connectionHCL(name, kafkaBootstrap(), "127.0.0.1:1"),
			},
			planDiffStep(func() {
				if err := a.Client.DeleteConnection(ctx, name); err != nil {
					t.Fatalf("deleting the connection behind Terraform's back: %v", err)
				}
			}, a.providerHCL()+connectionHCL(name, kafkaBootstrap(), "127.0.0.1:1")),
		},
	})
}

// registryConnectionHCL is a connection with a schema registry whose API
// secret is secret.
func registryConnectionHCL(name, secret string) string {
	return fmt.Sprintf(`resource "tributary_connection" "c" {
  name              = %s
  bootstrap_servers = [%s]
  schema_registry = {
    url        = "https://registry.example:8081"
    api_key    = "SRKEY"
    api_secret = %s
  }
}
`, hclString(name), hclString(kafkaBootstrap()), hclString(secret))
}

// TestAccConnectionSchemaRegistry creates a connection with a schema
// registry, imports it (the agent never returns the API secret, so the
// import has none), and changes the secret: an update the agent receives,
// with no diff after it although the agent answers without the secret.
func TestAccConnectionSchemaRegistry(t *testing.T) {
	a := sharedAgent(t)
	name := uniqueName("conn")
	getConn := func(ctx context.Context, n string) error { _, err := a.Client.GetConnection(ctx, n); return err }
	noSecret := func(*terraform.State) error {
		c, err := a.Client.GetConnection(context.Background(), name)
		if err != nil {
			return err
		}
		if c.SchemaRegistry == nil || c.SchemaRegistry.APIKey != "SRKEY" || c.SchemaRegistry.APISecret != "" {
			return fmt.Errorf("the agent answers schema_registry %+v; want the key and no secret", c.SchemaRegistry)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("connection", getConn, name),
		Steps: []resource.TestStep{
			{
				Config: a.providerHCL() + registryConnectionHCL(name, "first-secret"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_connection.c", "schema_registry.url", "https://registry.example:8081"),
					resource.TestCheckResourceAttr("tributary_connection.c", "schema_registry.api_key", "SRKEY"),
					resource.TestCheckResourceAttr("tributary_connection.c", "schema_registry.api_secret", "first-secret"),
					noSecret,
				),
			},
			importStep("tributary_connection.c", name, "schema_registry.api_secret"),
			{
				Config:           a.providerHCL() + registryConnectionHCL(name, "second-secret"),
				ConfigPlanChecks: expectUpdate("tributary_connection.c"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_connection.c", "schema_registry.api_secret", "second-secret"),
					noSecret,
				),
			},
		},
	})
}

// pipelineFixture is the configuration of TestAccPipeline: a connection to
// the test broker, a pipeline with one table reading topic, its value
// parsed with the schema in schemaFile, and the pipeline's status data
// source. An empty isolationLevel leaves isolation_level out of the
// configuration.
type pipelineFixture struct {
	agent                    *testAgent
	conn, pipeline, topic    string
	table, schemaFile, flush string
	startingOffset           string
	isolationLevel           string
}

// newPipelineFixture returns a fixture with fresh names for the
// connection, pipeline, topic and table, a schema file in a temporary
// folder, reading from the earliest offset and flushing every flush.
func newPipelineFixture(t *testing.T, a *testAgent, flush string) *pipelineFixture {
	t.Helper()
	return &pipelineFixture{
		agent:          a,
		conn:           uniqueName("conn"),
		pipeline:       uniqueName("pipe"),
		topic:          uniqueName("topic"),
		table:          uniqueName("events"),
		schemaFile:     filepath.Join(t.TempDir(), "events.ddl"),
		flush:          flush,
		startingOffset: "earliest",
	}
}

func (f *pipelineFixture) config() string {
	return f.resources() + `
data "tributary_pipeline_status" "p" {
  name = tributary_pipeline.p.name
}
`
}

// resources is the fixture's configuration without the data source, for a
// plan after the pipeline was deleted behind Terraform's back: a plan that
// does not refresh first (as the test harness runs one) reads the data
// source for the pipeline still in the state, and fails.
func (f *pipelineFixture) resources() string {
	isolation := ""
	if f.isolationLevel != "" {
		isolation = "\n        isolation_level = " + hclString(f.isolationLevel)
	}
	return f.agent.providerHCL() + connectionHCL(f.conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":            hclString(f.pipeline),
		"connection_name": "tributary_connection.c.name",
		"flush_interval":  hclString(f.flush),
	}, tableHCL(f.table, fmt.Sprintf(`
        topics          = [%s]
        starting_offset = %s%s
        key_transformer = { format = "STRING" }
        value_transformer = {
          format       = "JSON"
          json_options = { schema_file_path = %s }
        }`, hclString(f.topic), hclString(f.startingOffset), isolation, hclString(f.schemaFile)),
		`table_configuration = { source_metadata_column = "_kafka" }`), `
  timeouts {
    create = "2m"
    update = "2m"
  }
`)
}

// statusData is the address of the fixture's status data source.
const statusData = "data.tributary_pipeline_status.p"

// running checks that the status data source reports the fixture's one
// table RUNNING without an error.
func (f *pipelineFixture) running() resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttr(statusData, "name", f.pipeline),
		resource.TestCheckResourceAttr(statusData, "state", spec.StateRunning),
		resource.TestCheckResourceAttr(statusData, "tables.#", "1"),
		resource.TestCheckResourceAttr(statusData, "tables.0.destination_table", f.table),
		resource.TestCheckResourceAttr(statusData, "tables.0.state", spec.StateRunning),
		resource.TestCheckResourceAttr(statusData, "tables.0.last_error", ""),
	)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestAccPipeline(t *testing.T) {
	a := sharedAgent(t)
	ctx := context.Background()
	f := newPipelineFixture(t, a, "5s")
	f.isolationLevel = spec.IsolationReadUncommitted
	createTopic(t, f.topic, 2)
	schemaV1 := "id BIGINT, user STRING, amount DOUBLE"
	schemaV2 := schemaV1 + ", note STRING"
	writeSchema := func(ddl string) {
		if err := os.WriteFile(f.schemaFile, []byte(ddl), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSchema(schemaV1)
	const res = "tributary_pipeline.p"
	jsonOptions := "table.0.connector_options.kafka_options.value_transformer.json_options."
	getPipeline := func(ctx context.Context, n string) error { _, err := a.Client.GetPipeline(ctx, n); return err }
	running := f.running()

	updated := *f
	// The update also drops isolation_level, which goes back to its default.
	updated.flush, updated.startingOffset, updated.isolationLevel = "2s", "latest", ""

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("pipeline", getPipeline, f.pipeline),
		Steps: []resource.TestStep{
			{
				Config: f.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					running,
					resource.TestCheckResourceAttr(res, "id", f.pipeline),
					resource.TestCheckResourceAttr(res, "continuous", "true"),
					resource.TestCheckResourceAttr(res, "target_file_size_mb", fmt.Sprint(spec.DefaultTargetFileSizeMB)),
					resource.TestCheckResourceAttr(res, "max_rows_per_file", fmt.Sprint(spec.DefaultMaxRowsPerFile)),
					resource.TestCheckResourceAttr(res, "auto_compact", "true"),
					resource.TestCheckResourceAttr(res, "auto_compact_min_files", fmt.Sprint(spec.DefaultAutoCompactMinFiles)),
					resource.TestCheckResourceAttr(res, "auto_vacuum", "true"),
					resource.TestCheckResourceAttr(res, jsonOptions+"schema_file_sha256", sha256Hex(schemaV1)),
					resource.TestCheckResourceAttr(res, "table.0.connector_options.kafka_options.isolation_level", spec.IsolationReadUncommitted),
				),
			},
			importStep(res, f.pipeline, "timeouts"),
			{
				// Update a pipeline option and two table options.
				Config:           updated.config(),
				ConfigPlanChecks: expectUpdate(res),
				Check: resource.ComposeAggregateTestCheckFunc(
					running,
					resource.TestCheckResourceAttr(res, "flush_interval", "2s"),
					resource.TestCheckResourceAttr(res, "table.0.connector_options.kafka_options.starting_offset", "latest"),
					resource.TestCheckResourceAttr(res, "table.0.connector_options.kafka_options.isolation_level", spec.DefaultIsolationLevel),
				),
			},
			{
				// Editing the schema file, and nothing else, is an update.
				PreConfig:        func() { writeSchema(schemaV2) },
				Config:           updated.config(),
				ConfigPlanChecks: expectUpdate(res),
				Check: resource.ComposeAggregateTestCheckFunc(
					running,
					resource.TestCheckResourceAttr(res, jsonOptions+"schema_file_sha256", sha256Hex(schemaV2)),
				),
			},
			// Drift: a change made through the API shows in the plan.
			planDiffStep(func() {
				got, err := a.Client.GetPipeline(ctx, f.pipeline)
				if err != nil {
					t.Fatalf("reading the pipeline: %v", err)
				}
				got.Spec.FlushInterval = "9s"
				if _, err := a.Client.PutPipeline(ctx, &got.Spec); err != nil {
					t.Fatalf("changing the pipeline behind Terraform's back: %v", err)
				}
			}, updated.config()),
			{
				// Apply restores the configuration.
				Config: updated.config(),
				Check:  resource.TestCheckResourceAttr(res, "flush_interval", "2s"),
			},
			// A pipeline deleted on the agent is planned for creation.
			planDiffStep(func() {
				if err := a.Client.DeletePipeline(ctx, f.pipeline); err != nil {
					t.Fatalf("deleting the pipeline behind Terraform's back: %v", err)
				}
			}, updated.resources()),
		},
	})
}
