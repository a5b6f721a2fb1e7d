# Canal change events turned into plain JSON rows, one topic per table:
# inventory.products goes to "products-json", every other table to a topic
# named "<db>.<table>" (full_table_id).
resource "tributary_kafka_sink" "canal_rows" {
  name            = "canal-rows"
  connection_name = tributary_connection.cdc.name

  source = {
    topics = ["canal.inventory"]
    value_transformer = {
      format = "CANAL_JSON"
    }
  }

  table_topic_mapping = "inventory\\.products:products-json"
  full_table_id       = true
  value_format        = "JSON"
}
