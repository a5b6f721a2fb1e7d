# TLS with a client certificate (mTLS), from PEM files: the brokers'
# listener has ssl.client.auth=required.
resource "tributary_connection" "mtls" {
  name              = "mtls-cluster"
  bootstrap_servers = ["broker1:9094"]
  security_protocol = "SSL"

  tls = {
    ca_pem   = file(var.kafka_ca_file)
    cert_pem = file(var.kafka_client_cert_file)
    key_pem  = file(var.kafka_client_key_file)
  }
}
