# Where a table starts reading the first time it runs. Once its log has a
# commit, every partition resumes from the offset recorded there, whatever
# these options say.
resource "tributary_pipeline" "replay" {
  name                = "replay"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "replay"

  # Two partitions of "payments", from given offsets: partition 0 at offset
  # 1200, partition 1 at its earliest record (-2; -1 would be latest).
  table {
    destination_table = "payments"
    connector_options = {
      kafka_options = {
        assign            = { "payments" = [0, 1] }
        starting_offset   = "specific"
        starting_offsets  = { "payments" = { "0" = 1200, "1" = -2 } }
        value_transformer = { format = "STRING" }
      }
    }
  }

  # Every partition of "refunds" from its first record written at or after
  # midnight UTC on 1 March 2025 (milliseconds since the epoch work too).
  # The offsets go to the consumer group "refunds-replay" after each
  # commit, so that Kafka's tools show the table's lag.
  table {
    destination_table = "refunds"
    connector_options = {
      kafka_options = {
        topics                       = ["refunds"]
        starting_offset              = "timestamp"
        starting_timestamp           = "2025-03-01T00:00:00Z"
        group_id                     = "refunds-replay"
        partition_discovery_interval = "1m"
        value_transformer            = { format = "STRING" }
      }
    }
  }
}
