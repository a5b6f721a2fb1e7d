# SASL/SCRAM over TLS: the brokers' SASL_SSL listener, with a CA of your own.
resource "tributary_connection" "scram" {
  name              = "scram-cluster"
  bootstrap_servers = ["broker1:9093", "broker2:9093"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism = "SCRAM-SHA-512" # or SCRAM-SHA-256
    username  = "tributary"
    password  = var.kafka_password
  }

  tls = {
    ca_pem = file(var.kafka_ca_file)
  }
}
