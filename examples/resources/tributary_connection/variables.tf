# The variables of the security examples. Secrets come from sensitive
# variables (e.g. TF_VAR_kafka_password), never from the configuration;
# certificates and key stores are read from files.

variable "kafka_password" {
  type      = string
  sensitive = true
}

variable "oauth_client_secret" {
  type      = string
  sensitive = true
}

variable "kafka_ca_file" {
  type    = string
  default = "certs/kafka-ca.pem"
}

variable "kafka_client_cert_file" {
  type    = string
  default = "certs/tributary.pem"
}

variable "kafka_client_key_file" {
  type    = string
  default = "certs/tributary-key.pem"
}

variable "kafka_keystore_file" {
  type    = string
  default = "certs/tributary.p12"
}

variable "kafka_keystore_password" {
  type      = string
  sensitive = true
}
