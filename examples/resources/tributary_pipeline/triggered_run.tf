# A triggered pipeline: each run reads up to its ending positions, commits
# and goes IDLE. Here a backfill of "audit" from its earliest record up to
# offset 500000 of partition 0 and the current end of the others, at most
# 50000 offsets per commit, with larger fetches than the default.
resource "tributary_pipeline" "audit_backfill" {
  name                = "audit-backfill"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "audit"
  continuous          = false

  table {
    destination_table = "audit_events"
    connector_options = {
      kafka_options = {
        topics                  = ["audit"]
        starting_offset         = "earliest"
        ending_offset           = "specific"
        ending_offsets          = { "audit" = { "0" = 500000 } }
        max_offsets_per_trigger = 50000
        fail_on_data_loss       = false # records retention removed are reported, not fatal
        client_properties = {
          "fetch.min.bytes"           = "1048576"
          "max.partition.fetch.bytes" = "4194304"
        }
        value_transformer = { format = "STRING" }
      }
    }
  }
}
