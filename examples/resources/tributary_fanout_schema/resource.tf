resource "tributary_connection" "events" {
  name              = "events-cluster"
  bootstrap_servers = ["broker1:9092"]
}

# A pipeline without table blocks: its fanout schemas carry its tables. It
# gives them its connection, storage location, mode and flush settings.
resource "tributary_pipeline" "events" {
  name                = "events"
  connection_name     = tributary_connection.events.name
  destination_catalog = "main"
  destination_schema  = "raw"
  flush_interval      = "10s"
}

# Each record goes to the table main.events.<event_type>: click, view, ...
# created on its first record, with the value parsed into a VARIANT column.
resource "tributary_fanout_schema" "events" {
  name                = "events-by-type"
  pipeline_name       = tributary_pipeline.events.name
  destination_catalog = "main"
  destination_schema  = "events"

  connector_options = {
    kafka_options = {
      topics          = ["events"]
      starting_offset = "earliest"
      key_transformer = { format = "STRING" }
    }
  }

  fanout_options = {
    fanout_by        = "cast(value AS STRING):event_type::string"
    on_invalid_route = "DEAD_LETTER" # unroutable records go to main.events._fanout_errors
    transforms       = [{ format = "JSON", input_column = "value" }]
  }

  table_configuration = {
    source_metadata_column = "_kafka"
  }
}

output "event_tables" {
  value = tributary_fanout_schema.events.tables
}
