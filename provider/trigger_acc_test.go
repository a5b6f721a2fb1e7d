package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestAccPipelineTrigger runs a triggered pipeline with the real agent and
// broker: creating it runs it; a new trigger value makes the update start
// the next run and wait until it is over, so that right after the apply
// the table holds exactly the records produced before it; an unchanged
// trigger plans nothing. A trigger on a continuous pipeline is a plan-time
// error.
func TestAccPipelineTrigger(t *testing.T) {
	a := sharedAgent(t)
	conn, name, topic, table := uniqueName("conn"), uniqueName("pipe"), uniqueName("topic"), uniqueName("events")
	createTopic(t, topic, 2)
	values := func(from, to int) []string {
		var vs []string
		for i := from; i < to; i++ {
			vs = append(vs, fmt.Sprintf("v%d", i))
		}
		return vs
	}
	produce(t, topic, values(0, 30)...)
	config := func(continuous bool, trigger string) string {
		return a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
			"name":            hclString(name),
			"connection_name": "tributary_connection.c.name",
			"flush_interval":  `"300ms"`,
			"continuous":      fmt.Sprint(continuous),
			"trigger":         hclString(trigger),
		}, tableHCL(table, fmt.Sprintf(`
        topics            = [%s]
        starting_offset   = "earliest"
        key_transformer   = { format = "STRING" }
        value_transformer = { format = "STRING" }`, hclString(topic)), ""))
	}
	const res = "tributary_pipeline.p"
	// ranTo checks, with no wait, that the pipeline is IDLE with rows rows.
	ranTo := func(rows int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got, err := a.Client.GetPipeline(context.Background(), name)
			if err != nil {
				return err
			}
			if st := got.Status; st.State != spec.StateIdle || st.Tables[0].Rows != rows {
				return fmt.Errorf("right after the apply the pipeline is %s with %d rows, want %s with %d: %+v",
					st.State, st.Tables[0].Rows, spec.StateIdle, rows, st)
			}
			return nil
		}
	}
	getPipeline := func(ctx context.Context, n string) error { _, err := a.Client.GetPipeline(ctx, n); return err }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("pipeline", getPipeline, name),
		Steps: []resource.TestStep{
			{
				Config:      config(true, "1"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`trigger needs a triggered pipeline`),
			},
			{
				// Creating the pipeline runs it, whatever the trigger.
				Config: config(false, "1"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "trigger", "1"),
					func(*terraform.State) error { a.waitRows(t, name, 30); return nil },
				),
			},
			importStep(res, name, "timeouts", "trigger"),
			{
				// Records produced since: the next run, which the update
				// waits for, reads exactly them.
				PreConfig:        func() { produce(t, topic, values(30, 50)...) },
				Config:           config(false, "2"),
				ConfigPlanChecks: expectUpdate(res),
				Check:            resource.ComposeAggregateTestCheckFunc(resource.TestCheckResourceAttr(res, "trigger", "2"), ranTo(50)),
			},
			{
				// An unchanged trigger starts nothing, even with new records.
				PreConfig: func() { produce(t, topic, values(50, 60)...) },
				Config:    config(false, "2"),
				Check:     ranTo(50),
			},
			{
				Config:           config(false, "3"),
				ConfigPlanChecks: expectUpdate(res),
				Check:            ranTo(60),
			},
		},
	})
}
