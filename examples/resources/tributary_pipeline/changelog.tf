# Change events of a MySQL database: Debezium's for customers, Canal's for
# products. Each event becomes a row with _op (c, u, d, r), _source (db,
# table, ts) and the columns of its row image, inferred from the events.
# A record that does not decode is kept in main.inventory._dirty_records
# instead of the table; the hundred-and-first fails the table.
resource "tributary_pipeline" "inventory" {
  name                = "inventory"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "inventory"

  table {
    destination_table = "customers"
    connector_options = {
      kafka_options = {
        topics                    = ["dbserver1.inventory.customers"]
        starting_offset           = "earliest"
        ignore_errors             = true
        error_tolerance_max_count = 100
        # The key {"id": 1001} is the column key_id, beside the row image's id.
        key_fields_prefix = "key_"
        key_transformer   = { format = "JSON", json_options = { schema = "id INT" } }
        value_transformer = { format = "DEBEZIUM_JSON" }
      }
    }
    table_configuration = {
      metadata_columns = ["topic", "partition", "offset", "timestamp"]
    }
  }

  table {
    destination_table = "products"
    connector_options = {
      kafka_options = {
        topics = ["canal.inventory"]
        value_transformer = {
          format = "CANAL_JSON"
          canal_options = {
            database_include      = "inventory"
            table_include         = "products"
            infer_schema_strategy = "MYSQL_TYPE"
          }
          json_options = {
            timestamp_format = "SQL"
            initial_schemas  = { products = "id INT, name STRING, weight DECIMAL(10,3)" }
          }
        }
      }
    }
  }
}
