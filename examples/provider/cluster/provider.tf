# The agents of one cluster (tributary-agent serve --cluster NAME ...), any
# of which answers every request; the provider tries them in this order.
# They share one token, and here one CA, as they serve HTTPS. The list can
# come from the environment instead:
#   export TRIBUTARY_ENDPOINTS=https://agent-1.internal:8470,https://agent-2.internal:8470,https://agent-3.internal:8470
provider "tributary" {
  endpoints = [
    "https://agent-1.internal:8470",
    "https://agent-2.internal:8470",
    "https://agent-3.internal:8470",
  ]
  token          = var.tributary_token
  ca_certificate = file("${path.module}/agents-ca.pem")
}

variable "tributary_token" {
  type      = string
  sensitive = true
}
