resource "tributary_connection" "main" {
  name              = "main-cluster"
  bootstrap_servers = ["broker1:9092", "broker2:9092"]

  # Optional: the schema registry that Avro and Protobuf transformers with a
  # schema_registry read their schemas from.
  schema_registry = {
    url        = "https://registry.example.com"
    api_key    = "tributary"
    api_secret = var.schema_registry_api_secret
  }
}

# The registry's secret, e.g. from TF_VAR_schema_registry_api_secret. It is
# sent to the agent, which never returns it.
variable "schema_registry_api_secret" {
  type      = string
  sensitive = true
}
