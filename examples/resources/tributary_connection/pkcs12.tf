# mTLS with a PKCS#12 key store, as Java clients use. Convert a JKS store
# first:
#   keytool -importkeystore -srckeystore tributary.jks \
#     -destkeystore tributary.p12 -deststoretype PKCS12
resource "tributary_connection" "pkcs12" {
  name              = "pkcs12-cluster"
  bootstrap_servers = ["broker1:9094"]
  security_protocol = "SSL"

  tls = {
    ca_pem              = file(var.kafka_ca_file)
    keystore_p12_base64 = filebase64(var.kafka_keystore_file)
    keystore_password   = var.kafka_keystore_password
  }
}
