# Columns inferred from the records: the first 50 records of each partition
# set the first schema, and new fields become new columns as they arrive.
# The hints fix the types inference would guess otherwise, and declare a
# column no record has shown yet.
resource "tributary_pipeline" "signups" {
  name                = "signups"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "growth"

  table {
    destination_table = "signups"
    connector_options = {
      kafka_options = {
        topics          = ["signups"]
        starting_offset = "earliest"
        value_transformer = {
          format = "JSON"
          json_options = {
            schema_evolution_mode = "ADD_NEW_COLUMNS"
            schema_hints          = "id BIGINT, signed_up_at TIMESTAMP, user.birth_date DATE, referrer STRING"
          }
        }
      }
    }
  }
}
