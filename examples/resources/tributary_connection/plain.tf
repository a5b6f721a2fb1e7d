# SASL/PLAIN over TLS, as Confluent Cloud and Redpanda Cloud use with an API
# key and secret. The brokers' certificates are signed by a public CA, so no
# tls block is needed.
resource "tributary_connection" "plain" {
  name              = "plain-cluster"
  bootstrap_servers = ["pkc-12345.eu-west-1.aws.example.cloud:9092"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism = "PLAIN"
    username  = "API_KEY"
    password  = var.kafka_password
  }
}
