package provider_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestAccPipelineStatus ingests rows and checks that the resource does not
// move (a refresh-only plan stays empty) while tributary_pipeline_status
// reports the counters, then that a schema change the table cannot take
// fails at plan time through the agent's dry run, changing nothing.
func TestAccPipelineStatus(t *testing.T) {
	a := sharedAgent(t)
	f := newPipelineFixture(t, a, "1s")
	createTopic(t, f.topic, 1)
	const schemaV1 = "id BIGINT, user STRING, amount DOUBLE"
	writeSchema := func(ddl string) {
		if err := os.WriteFile(f.schemaFile, []byte(ddl), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSchema(schemaV1)
	const res = "tributary_pipeline.p"
	getPipeline := func(ctx context.Context, n string) error { _, err := a.Client.GetPipeline(ctx, n); return err }
	var created map[string]string
	var ingested spec.TableStatus

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("pipeline", getPipeline, f.pipeline),
		Steps: []resource.TestStep{
			{
				Config: f.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					f.running(),
					resource.TestCheckResourceAttr(statusData, "tables.0.rows", "0"),
					resource.TestCheckNoResourceAttr(res, "state"),
					resource.TestCheckNoResourceAttr(res, "table_status.#"),
					saveAttributes(res, &created),
				),
			},
			{
				// Three records, one of them malformed, are committed: a
				// refresh changes nothing in the resource (what a refresh-only
				// plan, as drift detection runs it, would show), and the data
				// source reports them.
				PreConfig: func() {
					produce(t, f.topic, `{"id":1,"user":"a","amount":1.5}`, `{"id":2,"user":"b","amount":2.5}`, `{"id":3,`)
					ingested = a.waitRows(t, f.pipeline, 3)
				},
				RefreshState: true,
				RefreshPlanChecks: resource.RefreshPlanChecks{PostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					sameAttributes(res, &created),
					f.running(),
					resource.TestCheckResourceAttr(statusData, "tables.0.rows", "3"),
					resource.TestCheckResourceAttr(statusData, "tables.0.corrupt_records", "1"),
					resource.TestCheckResourceAttr(statusData, "tables.0.filtered_records", "0"),
					resource.TestCheckResourceAttrWith(statusData, "tables.0.files", atLeast(1)),
					resource.TestCheckResourceAttrWith(statusData, "tables.0.version", atLeast(0)),
					resource.TestCheckResourceAttrWith(statusData, "tables.0.location", func(v string) error {
						if v == "" || v != ingested.Location {
							return fmt.Errorf("location %q, want the agent's %q", v, ingested.Location)
						}
						return nil
					}),
					resource.TestCheckResourceAttr(statusData, "tables.0.partitions.#", "1"),
					resource.TestCheckResourceAttr(statusData, "tables.0.partitions.0.topic", f.topic),
					resource.TestCheckResourceAttr(statusData, "tables.0.partitions.0.partition", "0"),
					resource.TestCheckResourceAttr(statusData, "tables.0.partitions.0.next_offset", "3"),
					resource.TestCheckResourceAttr(statusData, "tables.0.partitions.0.lag", "0"),
				),
			},
			{
				// A column type change the table's log cannot take fails the
				// plan, on the table block, with the agent's reason.
				PreConfig:   func() { writeSchema("id STRING, user STRING, amount DOUBLE") },
				Config:      f.config(),
				PlanOnly:    true,
				ExpectError: messageRE("attribute table[0]", "column id changes type from BIGINT to STRING"),
			},
			{
				// The dry run changed nothing: the agent keeps the first
				// schema, and with the file back the plan is empty.
				PreConfig: func() {
					got, err := a.Client.GetPipeline(context.Background(), f.pipeline)
					if err != nil {
						t.Fatal(err)
					}
					jo := got.Spec.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions
					if jo.SchemaFileContent != schemaV1 || got.Status.State != spec.StateRunning {
						t.Fatalf("after the dry run the agent has schema %q in state %s, want %q RUNNING",
							jo.SchemaFileContent, got.Status.State, schemaV1)
					}
					writeSchema(schemaV1)
				},
				Config:   f.config(),
				PlanOnly: true,
			},
		},
	})
}

// TestAccPipelinePlanWithoutAgent checks that a plan whose values are all
// known still works when the agent cannot be reached: the dry run is
// skipped with a warning.
func TestAccPipelinePlanWithoutAgent(t *testing.T) {
	testPlans(t, "provider \"tributary\" {\n  endpoint = \"http://127.0.0.1:1\"\n}\n"+
		pipelineHCL(nil, tableHCL("events", `topics = ["events"]`, "")))
}

// saveAttributes stores the state attributes of resource name in *into.
func saveAttributes(name string, into *map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[name]
		if !ok {
			return fmt.Errorf("%s is not in the state", name)
		}
		*into = maps.Clone(rs.Primary.Attributes)
		return nil
	}
}

// sameAttributes fails unless the state attributes of resource name are
// those saved in *want.
func sameAttributes(name string, want *map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[name]
		if !ok {
			return fmt.Errorf("%s is not in the state", name)
		}
		got := rs.Primary.Attributes
		var diff []string
		for k, w := range *want {
			if g, ok := got[k]; !ok || g != w {
				diff = append(diff, fmt.Sprintf("%s: %q, was %q", k, g, w))
			}
		}
		for k, g := range got {
			if _, ok := (*want)[k]; !ok {
				diff = append(diff, fmt.Sprintf("%s: %q, new", k, g))
			}
		}
		slices.Sort(diff)
		if len(diff) > 0 {
			return fmt.Errorf("%s changed on refresh:\n%v", name, diff)
		}
		return nil
	}
}

// atLeast checks that an attribute is an integer of at least minimum.
func atLeast(minimum int64) resource.CheckResourceAttrWithFunc {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < minimum {
			return fmt.Errorf("%q is not an integer of at least %d", v, minimum)
		}
		return nil
	}
}
