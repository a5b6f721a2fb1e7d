# Debezium events of every table of a database server, each routed to the
# table <db>_<table> of main.mysql (inventory_customers, inventory_orders,
# ...) without fanout_by: the events name their source table.
resource "tributary_fanout_schema" "mysql" {
  name                = "mysql"
  pipeline_name       = tributary_pipeline.events.name
  destination_catalog = "main"
  destination_schema  = "mysql"

  connector_options = {
    kafka_options = {
      topic_pattern     = "dbserver1\\..*"
      value_transformer = { format = "DEBEZIUM_JSON" }
    }
  }

  fanout_options = {
    on_invalid_route = "DEAD_LETTER"
  }
}
