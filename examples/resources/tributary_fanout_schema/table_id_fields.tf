# Change events of many databases, routed to main.cdc.<db>_<table> by two
# fields of the JSON value, as Flink's json.decode.parser-table-id.fields
# (joined with '_': a table name cannot hold Flink's '.'), and parsed into
# typed columns inferred from the records.
resource "tributary_fanout_schema" "cdc" {
  name                = "cdc"
  pipeline_name       = tributary_pipeline.events.name
  destination_catalog = "main"
  destination_schema  = "cdc"

  connector_options = {
    kafka_options = {
      topic_pattern = "cdc\\..*"
    }
  }

  fanout_options = {
    table_id_fields = ["database", "table"]
    transforms = [{
      input_column = "value"
      json_options = { schema_evolution_mode = "ADD_NEW_COLUMNS" }
    }]
  }
}
