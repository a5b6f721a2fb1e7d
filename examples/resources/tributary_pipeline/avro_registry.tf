# Avro values whose schema is in a Confluent-compatible schema registry: the
# producer's serializer frames each record with its schema id. The registry's
# URL and credentials are those of the connection.
resource "tributary_connection" "confluent" {
  name              = "confluent-cloud"
  bootstrap_servers = ["pkc-12345.eu-west-1.aws.confluent.cloud:9092"]
  schema_registry = {
    url        = "https://psrc-12345.eu-west-1.aws.confluent.cloud"
    api_key    = "SR4KEY"
    api_secret = var.schema_registry_api_secret
  }
}

variable "schema_registry_api_secret" {
  type      = string
  sensitive = true
}

resource "tributary_pipeline" "payments" {
  name                = "payments"
  connection_name     = tributary_connection.confluent.name
  destination_catalog = "main"
  destination_schema  = "finance"

  table {
    destination_table = "payments"
    connector_options = {
      kafka_options = {
        topics          = ["payments"]
        key_transformer = { format = "STRING" }
        value_transformer = {
          format = "AVRO"
          avro_options = {
            # The latest version of the subject when the table starts sets
            # its columns; each record is decoded with the version it names.
            schema_registry = {
              confluent_options = { subject = "payments-value" }
              # connection_name defaults to the pipeline's connection.
            }
            parse_mode = "FAILFAST" # stop at a record that does not decode
          }
        }
      }
    }
  }
}
