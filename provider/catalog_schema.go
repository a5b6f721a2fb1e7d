package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// catalogResourceSchema is the schema of tributary_catalog, version 0.
func catalogResourceSchema() schema.Schema {
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A catalog registers every table whose `destination_catalog` is its `name` (the tables of " +
			"pipelines and fanout schemas) as `<destination_schema>.<table>`: in a Hive Metastore as an external Delta " +
			"table, and in an Iceberg REST catalog as an Iceberg mirror of the same Parquet files, one Iceberg snapshot " +
			"after each Delta commit. The agent that maintains a table does it beside ingestion, which a catalog that is " +
			"down never holds back; the `tributary_table` data source shows how the registrations stand. See the " +
			"catalogs guide for the details and the type mapping.",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute(),
			"name": schema.StringAttribute{
				MarkdownDescription: "The `destination_catalog` whose tables the catalog registers: a letter or `_` followed " +
					"by letters, digits or `_`, compared with `destination_catalog` exactly (case included). Reference it from the pipelines (`destination_catalog = " +
					"tributary_catalog.x.name`) so that the catalog exists before their tables start. Changing it replaces " +
					"the catalog.",
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"iceberg_rest": schema.SingleNestedAttribute{
				MarkdownDescription: "An Iceberg REST catalog, in which every table gets an Iceberg mirror (format version " +
					"2) under the namespace of its `destination_schema`. The catalog must be able to read the table's " +
					"location, where the mirror writes its metadata.",
				Optional: true,
				Attributes: withAttributes(map[string]schema.Attribute{
					"uri": schema.StringAttribute{
						MarkdownDescription: "Base URI of the catalog, `http` or `https`, without `/v1`, credentials, query or " +
							"fragment, e.g. `\"https://iceberg.example.com/api/catalog\"`.",
						Required: true,
					},
					"warehouse": schema.StringAttribute{
						MarkdownDescription: "Warehouse the catalog's config endpoint is asked for (its `warehouse` " +
							"parameter), for catalogs that serve several. Not set: none.",
						Optional: true,
					},
				}, secretAttributes("token", "the bearer token sent to the catalog. Not set: no credentials")),
			},
			"hive_metastore": schema.SingleNestedAttribute{
				MarkdownDescription: "A Hive Metastore, in which every table is registered as an external Delta table in " +
					"the database of its `destination_schema`, as Spark registers one, so that " +
					"`spark.table(\"<schema>.<table>\")` works with `catalogImplementation=hive`.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"uri": schema.StringAttribute{
						MarkdownDescription: "The metastore's Thrift endpoint, `thrift://<host>:<port>`, e.g. " +
							"`\"thrift://metastore:9083\"`.",
						Required: true,
					},
				},
			},
			"on_delete": schema.StringAttribute{
				MarkdownDescription: "What happens to a table's registrations when the table leaves (its pipeline, fanout " +
					"schema or table block is deleted) or the catalog is deleted: one of " + quoted(spec.OnDeletes) +
					". Defaults to `\"" + spec.OnDeleteKeep + "\"`, which keeps them, as the files are kept. `\"" +
					spec.OnDeleteDropRegistration + "\"` drops them: the Iceberg table without purging its files, the " +
					"metastore's table without its data. Files are never deleted.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spec.OnDeleteKeep),
			},
		},
	}
}
