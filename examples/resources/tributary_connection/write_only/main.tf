# Terraform or OpenTofu 1.11 and later: write-only secrets, sent to the agent
# on create and update but never stored in the plan or the state. An
# ephemeral variable is not stored either. Terraform cannot see a write-only
# value change: increment the _wo_version to send a new secret.
resource "tributary_connection" "write_only" {
  name              = "scram-write-only"
  bootstrap_servers = ["broker1:9093"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism           = "SCRAM-SHA-512"
    username            = "tributary"
    password_wo         = var.kafka_password
    password_wo_version = 1
  }

  schema_registry = {
    url                   = "https://registry.example.com"
    api_key               = "tributary"
    api_secret_wo         = var.schema_registry_api_secret
    api_secret_wo_version = 1
  }
}

variable "kafka_password" {
  type      = string
  sensitive = true
  ephemeral = true
}

variable "schema_registry_api_secret" {
  type      = string
  sensitive = true
  ephemeral = true
}
