# Rate control and parallel reading of a large backlog.
resource "tributary_pipeline" "clickstream" {
  name                = "clickstream"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "web"

  table {
    destination_table = "clicks"
    connector_options = {
      kafka_options = {
        topics          = ["clicks"]
        starting_offset = "earliest"
        # A partition more than 200000 offsets behind has its backlog split
        # into ranges of that size, read and decoded in parallel; with fewer
        # ranges than 8, the partitions with the most lag are split further.
        max_records_per_partition = 200000
        min_partitions            = 8
        # Commit at most 1000000 offsets at a time, and wait for at least
        # 10000 new ones (or 5 minutes since the last commit) before the next.
        max_offsets_per_trigger = 1000000
        min_offsets_per_trigger = 10000
        max_trigger_delay       = "5m"
        value_transformer       = { format = "STRING" }
      }
    }
  }
}
