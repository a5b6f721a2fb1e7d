# Quickstart: run `tributary-agent dev` in another terminal (an agent next to
# an in-process Kafka broker that produces sample events to topic "events"),
# export the TRIBUTARY_ENDPOINT and TRIBUTARY_TOKEN it prints, then run
# `terraform init && terraform apply` here. The table appears under the
# agent's warehouse folder as main/demo/events/.
#
# Each event on topic "events" looks like
#   {"id":1,"user":"user-1","action":"click","amount":12.34,"ts":"2025-01-01T12:00:00.000Z","tags":["a","b"]}
# keyed by its user; about one in a hundred is cut short, and lands in
# _corrupt_record.

terraform {
  required_providers {
    tributary = {
      source = "tributary-io/tributary"
    }
  }
}

provider "tributary" {}

resource "tributary_connection" "dev" {
  name              = "dev"
  bootstrap_servers = ["127.0.0.1:19192"]
}

resource "tributary_pipeline" "quickstart" {
  name                = "quickstart"
  connection_name     = tributary_connection.dev.name
  destination_catalog = "main"
  destination_schema  = "demo"
  flush_interval      = "2s"

  table {
    destination_table = "events"
    connector_options = {
      kafka_options = {
        topics          = ["events"]
        starting_offset = "earliest"
        key_transformer = { format = "STRING" }
        value_transformer = {
          format = "JSON"
          json_options = {
            schema = "id BIGINT, user STRING, action STRING, amount DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"
          }
        }
      }
    }
    table_configuration = {
      source_metadata_column = "_kafka"
    }
  }
}

output "table_status" {
  value = tributary_pipeline.quickstart.table_status
}
