# The changelog of a pipeline's table: every row its commits append,
# written as Debezium events. source_table is built from the pipeline's
# attributes, so that Terraform creates the pipeline first.
resource "tributary_pipeline" "orders" {
  name                = "orders"
  connection_name     = tributary_connection.cdc.name
  destination_catalog = "main"
  destination_schema  = "sales"

  table {
    destination_table = "orders"
    connector_options = {
      kafka_options = {
        topics = ["orders"]
        value_transformer = {
          format = "JSON"
        }
      }
    }
  }
}

resource "tributary_kafka_sink" "orders_changes" {
  name            = "orders-changes"
  connection_name = tributary_connection.cdc.name
  source_table    = "${tributary_pipeline.orders.destination_catalog}.${tributary_pipeline.orders.destination_schema}.orders"

  topic              = "sales.orders.changes"
  value_format       = "DEBEZIUM_JSON"
  full_table_id      = true
  delivery_guarantee = "EXACTLY_ONCE"
}
