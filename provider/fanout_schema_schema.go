package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// rawColumns lists the columns of the raw record fanout_by may read.
var rawColumns = []string{"key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"}

// fanoutSchemaResourceSchema is the schema of tributary_fanout_schema,
// version 0.
func fanoutSchemaResourceSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A fanout schema routes each record of its topics to one of many tables of one destination " +
			"schema `<destination_catalog>.<destination_schema>`, named by the value of a Databricks SQL expression on " +
			"the raw record (`fanout_options.fanout_by`). It runs inside a `tributary_pipeline`, with that pipeline's " +
			"connection, storage location, mode and flush settings; tables are created on their first record, each with " +
			"its own transaction log and offsets. A fanout schema owns its destination schema: no pipeline table and no " +
			"other fanout schema may write to the same `<catalog>.<schema>`. Destroying it stops it after a final flush " +
			"and commit; its tables stay.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute(),
			"name": nameAttribute("fanout schema", " (the tables stay and a new one with the same destination resumes them)"),
			"pipeline_name": schema.StringAttribute{
				MarkdownDescription: "`name` of the `tributary_pipeline` the fanout schema runs in; reference it " +
					"(`tributary_pipeline.x.name`) so that Terraform creates the pipeline first. Changing it replaces the " +
					"fanout schema.",
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"destination_catalog": schema.StringAttribute{
				MarkdownDescription: "First segment of every routed table's name, an identifier (a letter or `_` " +
					"followed by letters, digits or `_`). Tables are written under `<root>/<catalog>/<schema>/<table>/`, " +
					"where the root is the pipeline's `storage_location` or the agent's warehouse.",
				Required: true,
			},
			"destination_schema": schema.StringAttribute{
				MarkdownDescription: "Second segment of every routed table's name, an identifier. The fanout schema owns " +
					"`<destination_catalog>.<destination_schema>`: the agent refuses (409) a pipeline table or another " +
					"fanout schema there.",
				Required: true,
			},
			"connector_options":   connectorOptionsSchema("the routed tables"),
			"fanout_options":      fanoutOptionsSchema(),
			"table_configuration": tableConfigurationSchema("every routed table"),
			"tables": schema.ListAttribute{
				MarkdownDescription: "Names of the tables the fanout schema created so far, sorted, including `" +
					spec.FanoutErrorsTable + "` once a record went there; read from the agent on every refresh.",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": runTimeoutsBlock(ctx, "fanout schema"),
		},
	}
}

// fanoutOptionsSchema is fanout_options.
func fanoutOptionsSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How records are routed to tables and transformed. At most one of `fanout_by` and " +
			"`table_id_fields` may be set. With neither, a value transformer of a changelog format (" + changelogFormats +
			") routes each event by its source database and table, and any other value routes each record to the table " +
			"named after its topic (`orders.v1` to `orders_v1`). Leave it out for those default routes, without " +
			"transforms, failing on a record that cannot be routed.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"fanout_by": schema.StringAttribute{
				MarkdownDescription: "Databricks SQL expression on the raw record whose result names the record's table, " +
					"e.g. `\"cast(value AS STRING):event_type::string\"`. It may read only the raw record's columns " +
					quoted(rawColumns) + " (`key` and `value` are BINARY: cast them to STRING before `:`), and must " +
					"return a STRING. It is parsed at plan time: an error shows the expression with a caret under the " +
					"position. A result that is NULL or not a valid unquoted table name (letters, digits and `_`, not " +
					"only digits, at most 255 characters; names are stored lower case) is an invalid route (see " +
					"`on_invalid_route`). Not set with a value transformer of a changelog format (" + changelogFormats + "): " +
					"each event goes to the table `<db>_<table>` of its source, lower case (`inventory_customers`), " +
					"`<db>_<schema>_<table>` for a Debezium event whose source has a schema (PostgreSQL, SQL Server), or " +
					"`<table>` with `merge_sharded_tables`; a Debezium tombstone is skipped. Not set otherwise: each " +
					"record goes to the table named after its topic, `" + spec.RouteByTopic + "`, as Flink names a JSON " +
					"table after its topic.",
				Optional: true,
			},
			"table_id_fields": schema.ListAttribute{
				MarkdownDescription: "Top-level fields of the JSON value whose values, joined by `_`, name the table, " +
					"as Flink's `json.decode.parser-table-id.fields` (which joins with `.`, which a table name cannot " +
					"hold): `[\"db\", \"tbl\"]` is `fanout_by = \"cast(value AS STRING):['db'] || '_' || cast(value AS " +
					"STRING):['tbl']\"`. Field names are case-sensitive; a missing field is an invalid route.",
				Optional:    true,
				ElementType: types.StringType,
			},
			"on_invalid_route": schema.StringAttribute{
				MarkdownDescription: "What a record whose route is invalid does: one of " + quoted(spec.OnInvalidRoutes) +
					". Defaults to `\"" + spec.OnInvalidRouteFail + "\"`: the fanout schema stops `" + spec.StateFailed +
					"` at that record, naming it, the result and why, without committing it. `" +
					spec.OnInvalidRouteDeadLetter + "` writes it to the table `" + spec.FanoutErrorsTable + "` instead " +
					"(its raw key, value and metadata, and the error), so nothing is lost. Under `" + spec.OnInvalidRouteFail +
					"`, `kafka_options.ignore_errors = true` writes it to the table `" + spec.DirtyRecordsTable +
					"` with an empty `table` column, and the fanout schema goes on.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spec.OnInvalidRouteFail),
			},
			"transforms": schema.ListNestedAttribute{
				MarkdownDescription: "At most one transform, applied to every record after routing.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"format": schema.StringAttribute{
						MarkdownDescription: "`\"" + spec.FormatJSON + "\"`, the only format (and the default).",
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString(spec.FormatJSON),
					},
					"input_column": schema.StringAttribute{
						MarkdownDescription: "The column the transform parses in place: `key` or `value`; required. The " +
							"transform is that column's transformer, so `kafka_options` must not set one for it.",
						Optional: true,
					},
					"output_column": schema.StringAttribute{
						MarkdownDescription: "Accepted and ignored, as in Lakeflow: the transform always writes back to " +
							"`input_column`. Setting it plans with a warning.",
						Optional: true,
					},
					"json_options": jsonOptionsSchema(),
				}},
			},
		},
	}
}

// fanoutTypes are the object types of the fanout schema that the pipeline
// schema does not have, derived once from the schema itself.
var fanoutTypes = sync.OnceValue(func() (t struct{ fanoutOptions, transform types.ObjectType }) {
	s := fanoutSchemaResourceSchema(context.Background())
	t.fanoutOptions, _ = s.Attributes["fanout_options"].GetType().(types.ObjectType)
	transforms, _ := t.fanoutOptions.AttrTypes["transforms"].(types.ListType)
	t.transform, _ = transforms.ElemType.(types.ObjectType)
	return t
})
