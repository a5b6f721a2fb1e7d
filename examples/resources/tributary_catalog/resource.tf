variable "iceberg_token" {
  type      = string
  sensitive = true
}

# Every table of destination_catalog "lake" is registered as
# <destination_schema>.<table>: as a Delta table in the Hive Metastore, and
# as an Iceberg mirror of the same files in the Iceberg REST catalog.
resource "tributary_catalog" "lake" {
  name = "lake"

  iceberg_rest = {
    uri       = "https://iceberg.example.com/api/catalog"
    warehouse = "analytics"
    token     = var.iceberg_token
  }

  hive_metastore = {
    uri = "thrift://metastore.example.com:9083"
  }

  # Deleting a table (or this catalog) drops its registrations; the files
  # always stay.
  on_delete = "DROP_REGISTRATION"
}

resource "tributary_connection" "kafka" {
  name              = "kafka"
  bootstrap_servers = ["broker1:9092"]
}

# lake.sales.orders: spark.table("sales.orders") through the metastore,
# and "sales"."orders" in the Iceberg catalog.
resource "tributary_pipeline" "sales" {
  name                = "sales"
  connection_name     = tributary_connection.kafka.name
  destination_catalog = tributary_catalog.lake.name
  destination_schema  = "sales"

  table {
    destination_table = "orders"
    connector_options = {
      kafka_options = {
        topics = ["orders"]
      }
    }
  }
}
