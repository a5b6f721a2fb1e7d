package provider_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// catalogHCL is a catalog "lake" named name with body (HCL) besides its
// name.
func catalogHCL(name, body string) string {
	return fmt.Sprintf(`resource "tributary_catalog" "lake" {
  name = %s
%s
}
`, hclString(name), body)
}

// TestAccCatalogValidation checks that every rule of a catalog fails the
// plan on the attribute to fix.
func TestAccCatalogValidation(t *testing.T) {
	rest := func(attrs string) string { return catalogHCL("lake", "  iceberg_rest = { "+attrs+" }") }
	t.Run("no catalog", func(t *testing.T) {
		testPlanFails(t, catalogHCL("lake", ""), messageRE("Invalid catalog", "a catalog needs iceberg_rest, hive_metastore or both"))
	})
	runValidationCases(t, []validationCase{
		{"name", catalogHCL("1lake", `  hive_metastore = { uri = "thrift://hms:9083" }`), "name", `"1lake" is not a valid catalog name`},
		{"uri scheme", rest(`uri = "ftp://iceberg"`), "iceberg_rest.uri", `"ftp://iceberg" is not an http or https URL`},
		{"uri credentials", rest(`uri = "https://u:p@iceberg"`), "iceberg_rest.uri", "the URL carries credentials; set token instead"},
		{"uri query", rest(`uri = "https://iceberg/?x=1"`), "iceberg_rest.uri", "the URL must not have a query or fragment"},
		{"thrift port", catalogHCL("lake", `  hive_metastore = { uri = "thrift://hms" }`), "hive_metastore.uri",
			`"thrift://hms" is not a Thrift URI: give thrift://<host>:<port>`},
		{"thrift scheme", catalogHCL("lake", `  hive_metastore = { uri = "http://hms:9083" }`), "hive_metastore.uri", "is not a Thrift URI"},
		{"on_delete", catalogHCL("lake", `  hive_metastore = { uri = "thrift://hms:9083" }
  on_delete = "PURGE"`), "on_delete", `"PURGE" is not one of KEEP, DROP_REGISTRATION`},
		{"empty warehouse", rest(`uri = "https://iceberg", warehouse = ""`), "iceberg_rest.warehouse", "the warehouse is empty"},
		{"token_wo_version without token_wo", rest(`uri = "https://iceberg", token = "t", token_wo_version = 1`),
			"iceberg_rest.token_wo_version", "token_wo_version versions token_wo, which is not set"},
	})
	// Write-only attributes need a CLI that has them.
	runValidationCases(t, []validationCase{
		{"token and token_wo", rest(`uri = "https://iceberg", token = "t", token_wo = "u", token_wo_version = 1`),
			"iceberg_rest.token_wo", "token_wo and token are mutually exclusive"},
		{"token_wo line break", rest(`uri = "https://iceberg", token_wo = "a\nb", token_wo_version = 1`),
			"iceberg_rest.token_wo", "the token must not contain line breaks"},
	}, writeOnlyCLI{})
}

// TestAccCatalog creates a catalog, imports it (without its token, which
// the agent never returns), changes its token and on_delete in place, and
// shows a change made behind Terraform's back as drift.
func TestAccCatalog(t *testing.T) {
	a := sharedAgent(t)
	name := "lake_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	ctx := context.Background()
	getCatalog := func(ctx context.Context, n string) error { _, err := a.Client.GetCatalog(ctx, n); return err }
	config := func(token, onDelete string) string {
		return a.providerHCL() + catalogHCL(name, fmt.Sprintf(`  iceberg_rest = {
    uri   = "http://127.0.0.1:1"
    token = %s
  }
  hive_metastore = { uri = "thrift://127.0.0.1:1" }
  on_delete      = %s`, hclString(token), hclString(onDelete)))
	}
	tokenSet := func(*terraform.State) error {
		c, err := a.Client.GetCatalog(ctx, name)
		if err != nil {
			return err
		}
		if c.IcebergREST == nil || c.IcebergREST.Token != "" || len(c.SecretsSet) != 1 {
			return fmt.Errorf("the agent answers %+v; want the token set and not shown", c)
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("catalog", getCatalog, name),
		Steps: []resource.TestStep{
			{
				Config: a.providerHCL() + catalogHCL(name, `  hive_metastore = { uri = "thrift://127.0.0.1:1" }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_catalog.lake", "id", name),
					resource.TestCheckResourceAttr("tributary_catalog.lake", "on_delete", spec.OnDeleteKeep),
					resource.TestCheckNoResourceAttr("tributary_catalog.lake", "iceberg_rest"),
				),
			},
			importStep("tributary_catalog.lake", name),
			{
				Config:           config("t1", spec.OnDeleteKeep),
				ConfigPlanChecks: expectUpdate("tributary_catalog.lake"),
				Check: resource.ComposeAggregateTestCheckFunc(tokenSet,
					resource.TestCheckResourceAttr("tributary_catalog.lake", "iceberg_rest.uri", "http://127.0.0.1:1")),
			},
			importStep("tributary_catalog.lake", name, "iceberg_rest.token"),
			{
				Config:           config("t2", spec.OnDeleteDropRegistration),
				ConfigPlanChecks: expectUpdate("tributary_catalog.lake"),
				Check:            resource.TestCheckResourceAttr("tributary_catalog.lake", "on_delete", spec.OnDeleteDropRegistration),
			},
			planDiffStep(func() {
				if _, err := a.Client.PutCatalog(ctx, &spec.Catalog{Name: name, HiveMetastore: &spec.HiveMetastore{URI: "thrift://127.0.0.1:2"}}); err != nil {
					t.Fatalf("changing the catalog behind Terraform's back: %v", err)
				}
			}, config("t2", spec.OnDeleteDropRegistration)),
			{Config: config("t2", spec.OnDeleteDropRegistration), Check: tokenSet},
		},
	})
}

// TestAccCatalogWriteOnlyToken sends the token through token_wo: the agent
// has it, the state does not.
func TestAccCatalogWriteOnlyToken(t *testing.T) {
	a := sharedAgent(t)
	name := "lake_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{writeOnlyCLI{}},
		Steps: []resource.TestStep{{
			Config: a.providerHCL() + catalogHCL(name, `  iceberg_rest = {
    uri              = "http://127.0.0.1:1"
    token_wo         = "write-only-token"
    token_wo_version = 1
  }`),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckNoResourceAttr("tributary_catalog.lake", "iceberg_rest.token"),
				resource.TestCheckNoResourceAttr("tributary_catalog.lake", "iceberg_rest.token_wo"),
				resource.TestCheckResourceAttr("tributary_catalog.lake", "iceberg_rest.token_wo_version", "1"),
				func(*terraform.State) error {
					c, err := a.Client.GetCatalog(context.Background(), name)
					if err != nil || len(c.SecretsSet) != 1 {
						return fmt.Errorf("the agent holds %+v (%w); want the token set", c, err)
					}
					return nil
				},
			),
		}},
	})
}

// TestAccCatalogRegistersTables applies a catalog with the Iceberg REST
// catalog and the Hive Metastore of make test (tools/iceberg.sh and
// tools/hms.sh) and a pipeline whose destination_catalog references it:
// once the first records are in, the tributary_table data source shows
// the table registered in the metastore and mirrored, without lag.
func TestAccCatalogRegistersTables(t *testing.T) {
	restURI, hmsURI := os.Getenv("ICEBERG_REST_URI"), os.Getenv("HIVE_METASTORE_URI")
	if restURI == "" || hmsURI == "" {
		t.Skip("set ICEBERG_REST_URI and HIVE_METASTORE_URI (make test starts tools/iceberg.sh and tools/hms.sh and does)")
	}
	a := sharedAgent(t)
	name := "lake_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	pipeline, topic := uniqueName("pipe"), uniqueName("topic")
	createTopic(t, topic, 1)
	config := a.providerHCL() + connectionHCL(uniqueName("conn"), kafkaBootstrap()) + catalogHCL(name, fmt.Sprintf(`  iceberg_rest   = { uri = %s }
  hive_metastore = { uri = %s }
  on_delete      = "DROP_REGISTRATION"`, hclString(restURI), hclString(hmsURI))) +
		pipelineHCL(map[string]string{
			"name": hclString(pipeline), "connection_name": "tributary_connection.c.name",
			"destination_catalog": "tributary_catalog.lake.name", "destination_schema": hclString(name), "flush_interval": `"1s"`,
		}, tableHCL("events", fmt.Sprintf(`topics = [%s]
        starting_offset = "earliest"`, hclString(topic)), "")) + `
data "tributary_table" "t" {
  pipeline_name     = tributary_pipeline.p.name
  destination_table = "events"
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  resource.TestCheckResourceAttr("tributary_catalog.lake", "on_delete", spec.OnDeleteDropRegistration),
			},
			{
				PreConfig: func() {
					produce(t, topic, `{"id":1}`)
					waitUntil(t, "pipeline "+pipeline, "register and mirror its table",
						func(ctx context.Context) (*spec.PipelineResponse, error) { return a.Client.GetPipeline(ctx, pipeline) },
						func(p *spec.PipelineResponse) bool {
							ts := p.Status.Tables[0]
							c := ts.Catalog
							return ts.Rows == 1 && c != nil && c.HiveMetastore != nil && c.HiveMetastore.Registered &&
								c.Iceberg != nil && c.Iceberg.DeltaVersion == ts.Version
						})
				},
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(tableData, "hive_metastore_registered", "true"),
					resource.TestCheckResourceAttr(tableData, "iceberg_mirror_lag", "0"),
					resource.TestCheckResourceAttrPair(tableData, "iceberg_mirror_version", tableData, "version"),
					resource.TestCheckResourceAttr(tableData, "catalog_error", ""),
				),
			},
		},
	})
}
