resource "tributary_connection" "main" {
  name              = "main-cluster"
  bootstrap_servers = ["broker1:9092"]
}

resource "tributary_pipeline" "orders" {
  name                = "orders"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "sales"
  flush_interval      = "10s"

  # Values parsed with a schema kept in a file next to this module.
  table {
    destination_table = "orders"
    connector_options = {
      kafka_options = {
        topics          = ["orders"]
        starting_offset = "earliest"
        isolation_level = "read_committed" # the default: no records of aborted transactions
        key_transformer = { format = "STRING" }
        value_transformer = {
          format       = "JSON"
          json_options = { schema_file_path = "${path.module}/orders.ddl" }
        }
      }
    }
    table_configuration = {
      source_metadata_column = "_kafka"
    }
  }

  # Every topic whose name starts with "clicks-", values kept as text.
  table {
    destination_table = "clicks_raw"
    connector_options = {
      kafka_options = {
        topic_pattern     = "clicks-.*"
        value_transformer = { format = "STRING" }
      }
    }
  }

  timeouts {
    create = "10m"
  }
}
