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

# The table's folder. The same data source reports each table's state, rows,
# files and log version, and per partition the next offset and lag; those
# move as the pipeline ingests, which is why a data source reads them instead
# of the resource keeping them (an output of them would change on every
# refresh).
data "tributary_pipeline_status" "quickstart" {
  name = tributary_pipeline.quickstart.name
}

output "table_locations" {
  value = { for t in data.tributary_pipeline_status.quickstart.tables : t.destination_table => t.location }
}
