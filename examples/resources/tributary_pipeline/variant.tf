# JSON values of any shape, kept whole: without json_options the value is
# one VARIANT column named "value" (the key, JSON too, is a VARIANT "key").
# Query fields with Spark's variant_get, Databricks' value:user.name, or
# DuckDB's variant_extract. A value that is not JSON leaves the column null and goes
# to _corrupt_record.
resource "tributary_pipeline" "raw_events" {
  name                = "raw-events"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "raw"

  table {
    destination_table = "events"
    connector_options = {
      kafka_options = {
        topics            = ["events"]
        key_transformer   = { format = "JSON" }
        value_transformer = { format = "JSON" }
      }
    }
    table_configuration = { source_metadata_column = "_kafka" }
  }
}
