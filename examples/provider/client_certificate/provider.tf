# An agent served over HTTPS (serve --tls-cert/--tls-key) that also requires
# client certificates (--tls-client-ca). The certificate and key can come
# from the environment instead, as PEM text:
#   export TRIBUTARY_CLIENT_CERTIFICATE="$(cat terraform.pem)"
#   export TRIBUTARY_CLIENT_KEY="$(cat terraform-key.pem)"
provider "tributary" {
  endpoint           = "https://tributary.internal:8470"
  token              = var.tributary_token
  ca_certificate     = file("${path.module}/certs/agent-ca.pem")
  client_certificate = file("${path.module}/certs/terraform.pem")
  client_key         = file("${path.module}/certs/terraform-key.pem")
}

variable "tributary_token" {
  type      = string
  sensitive = true
}
