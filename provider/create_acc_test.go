package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestAccCreateRefusesExisting: creating a connection, pipeline or fanout
// schema whose name the agent has already fails on the name attribute,
// saying how to import it, and leaves the existing object as it was.
// Before, create silently took the object over.
func TestAccCreateRefusesExisting(t *testing.T) {
	a := sharedAgent(t)
	ctx := context.Background()
	conn, pipe, fan := uniqueName("conn"), uniqueName("pipe"), uniqueName("fan")
	topic := uniqueName("topic")
	createTopic(t, topic, 1)
	if _, err := a.Client.PutConnection(ctx, &spec.Connection{Name: conn, BootstrapServers: []string{kafkaBootstrap()}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Client.DeleteConnection(ctx, conn) })
	if _, err := a.Client.PutPipeline(ctx, &spec.Pipeline{Name: pipe, Connection: conn, DestinationCatalog: "main", DestinationSchema: "demo"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Client.DeletePipeline(ctx, pipe) })
	existing := &spec.FanoutSchema{
		Name: fan, Pipeline: pipe, DestinationCatalog: "main", DestinationSchema: uniqueName("routed"),
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{topic}}},
		FanoutOptions:    spec.FanoutOptions{FanoutBy: "cast(value AS STRING):type::string"},
	}
	if _, err := a.Client.PutFanoutSchema(ctx, existing); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Client.DeleteFanoutSchema(ctx, fan) })

	newConn, newPipe := uniqueName("conn"), uniqueName("pipe")
	withPipeline := func(name string) string {
		return a.providerHCL() + connectionHCL(newConn, kafkaBootstrap()) + pipelineHCL(map[string]string{
			"name":            hclString(name),
			"connection_name": "tributary_connection.c.name",
		})
	}
	fanoutHCL := fmt.Sprintf(`
resource "tributary_fanout_schema" "f" {
  name                = %s
  pipeline_name       = tributary_pipeline.p.name
  destination_catalog = "main"
  destination_schema  = %s
  connector_options = { kafka_options = { topics = [%s] } }
  fanout_options    = { fanout_by = "cast(value AS STRING):type::string" }
}
`, hclString(fan), hclString(uniqueName("routed")), hclString(topic))
	exists := func(kind, name string) string {
		return fmt.Sprintf("%s %q already exists on the agent; import it with `terraform import tributary_%s.<name> %s` or pick another name",
			kind, name, kind, name)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      a.providerHCL() + connectionHCL(conn, "127.0.0.1:1"),
				ExpectError: messageRE(`with tributary_connection.c`, exists("connection", conn)),
			},
			{
				Config:      withPipeline(pipe),
				ExpectError: messageRE(`with tributary_pipeline.p`, exists("pipeline", pipe)),
			},
			{
				Config:      withPipeline(newPipe) + fanoutHCL,
				ExpectError: messageRE(`with tributary_fanout_schema.f`, fmt.Sprintf("fanout schema %q already exists", fan), "tributary_fanout_schema.<name>"),
			},
		},
	})

	// The existing objects are as they were.
	if got, err := a.Client.GetConnection(ctx, conn); err != nil || got.BootstrapServers[0] != kafkaBootstrap() {
		t.Fatalf("connection after a refused create = %+v, %v", got, err)
	}
	if got, err := a.Client.GetPipeline(ctx, pipe); err != nil || got.Spec.Connection != conn {
		t.Fatalf("pipeline after a refused create = %+v, %v", got, err)
	}
	if got, err := a.Client.GetFanoutSchema(ctx, fan); err != nil || got.Spec.Pipeline != pipe || got.Spec.DestinationSchema != existing.DestinationSchema {
		t.Fatalf("fanout schema after a refused create = %+v, %v", got, err)
	}
}

// TestAccReplaceTainted: a tainted pipeline (as a create whose wait failed
// leaves it) is replaced by the next apply. Terraform plans the new object
// as a create, whose dry run meets the object being replaced: that must
// not fail the plan.
func TestAccReplaceTainted(t *testing.T) {
	a := sharedAgent(t)
	conn, pipe := uniqueName("conn"), uniqueName("pipe")
	config := a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":            hclString(pipe),
		"connection_name": "tributary_connection.c.name",
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{Config: config, Taint: []string{"tributary_pipeline.p"}},
		},
	})
}
