resource "tributary_connection" "cdc" {
  name              = "cdc-cluster"
  bootstrap_servers = ["broker1:9092"]
}

# Debezium change events of the inventory database, read as a pipeline
# table would read them, written again as Debezium events to one topic, in
# Kafka transactions: a read_committed consumer of "inventory.all" sees
# each change once, whatever happens to the agent.
resource "tributary_kafka_sink" "inventory" {
  name            = "inventory-all"
  connection_name = tributary_connection.cdc.name

  source = {
    topics          = ["dbserver1.inventory.customers", "dbserver1.inventory.orders"]
    starting_offset = "earliest"
    value_transformer = {
      format = "DEBEZIUM_JSON"
    }
  }

  topic              = "inventory.all"
  partition_strategy = "HASH_BY_KEY"
  value_format       = "DEBEZIUM_JSON"
  compression        = "ZSTD"
  delivery_guarantee = "EXACTLY_ONCE"
  flush_interval     = "2s"
}
