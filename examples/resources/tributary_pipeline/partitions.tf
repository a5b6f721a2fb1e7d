# A table partitioned by country and by the UTC date of each record's Kafka
# timestamp: files go to country=<c>/_kafka_timestamp_date=<yyyy-mm-dd>/,
# and the date is a Delta generated column (CAST(_kafka.timestamp AS DATE)),
# so Spark prunes partitions on a filter of _kafka.timestamp too.
resource "tributary_pipeline" "orders_by_day" {
  name                = "orders-by-day"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "sales"

  table {
    destination_table = "orders"
    connector_options = {
      kafka_options = {
        topics = ["orders"]
        value_transformer = {
          format       = "JSON"
          json_options = { schema = "order_id BIGINT, country STRING, amount DECIMAL(10,2)" }
        }
      }
    }
    table_configuration = {
      source_metadata_column = "_kafka"
      partition_by           = ["country", "date(_kafka.timestamp)"]
    }
  }
}
